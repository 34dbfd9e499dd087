#!/usr/bin/env bash
# Every file under scripts/ is executable in git exactly when it starts with a #! line: a script
# run as scripts/NAME needs both (a fresh clone takes the mode from the index, not from this
# tree's files), a file that is only sourced has neither. Outside a git checkout (a source
# archive) there is no index to read: skipped, saying so (exit 77). Usage: test_script_modes.sh SOURCE_DIR
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 2
if [ ! -e .git ]; then
  echo "SKIP: $src is not a git checkout: the modes a clone would get are in git's index"
  exit 77
fi
git() { command git -c safe.directory="$src" "$@"; }  # a checkout owned by another user is still read
bad=0 checked=0
while read -r mode _ _ path; do
  first=$(head -c 2 "$path")
  checked=$((checked + 1))
  if [ "$first" = "#!" ] && [ "$mode" != 100755 ]; then
    echo "FAIL: $path has a #! line but mode $mode in git: run as scripts/${path#scripts/} it is refused"
    bad=$((bad + 1))
  elif [ "$first" != "#!" ] && [ "$mode" = 100755 ]; then
    echo "FAIL: $path is executable (mode $mode) but has no #! line: a sourced file, or its interpreter is missing"
    bad=$((bad + 1))
  fi
done < <(git ls-files -s -- scripts)
[ "$checked" -ge 10 ] || { echo "FAIL: only $checked files under scripts/ in git (is $src a git checkout?)"; exit 1; }
[ "$bad" = 0 ] || exit 1
echo "ok: $checked files under scripts/: each executable exactly when it has a #! line"
