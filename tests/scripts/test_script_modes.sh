#!/usr/bin/env bash
# Every script the docs tell a user to run as `scripts/NAME` starts with a #! line and is executable
# in git (a fresh clone gets the mode from the index, not from this tree's files); a file that is
# only sourced has neither. Usage: test_script_modes.sh SOURCE_DIR
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 2
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
