#!/usr/bin/env bash
# No pipe into a reader that leaves early. Under `set -o pipefail` (every script here sets it or
# is sourced by one that does), `cmd | grep -q X` fails whenever grep has found X and left before
# cmd's last write: cmd dies of SIGPIPE and the pipe's status is 141, read as "not found". It
# depends on timing, so it passes alone and fails under load (Library.TheExampleBuilds... did, in
# CI, on `ldd | grep -q`). The form that cannot: `grep -q X <<<"$(cmd)"`.
# Usage: test_shell_pipes.sh SOURCE_DIR
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 2
# grep with q among its short options, or --quiet/--silent, right after a pipe.
pattern='\|[[:space:]]*grep([[:space:]]+-[[:alnum:]]+)*[[:space:]]+(-[[:alnum:]]*q[[:alnum:]]*|--quiet|--silent)([[:space:]]|$)'
files=$(find scripts tests/scripts tests/python examples .ci -type f \( -name '*.sh' -o -name run -o -name '*.sbatch' \) 2>/dev/null | sort)
[ -n "$files" ] || { echo "FAIL: no shell scripts found under $src" >&2; exit 1; }
bad=0 n=0
while IFS= read -r f; do
  [ "$f" = tests/scripts/test_shell_pipes.sh ] && continue  # its own self-check below names the form
  n=$((n + 1))
  while IFS= read -r hit; do
    [[ $hit =~ ^[0-9]+:[[:space:]]*# ]] && continue  # a comment
    echo "EARLY-EXIT PIPE: $f:$hit"
    bad=$((bad + 1))
  done < <(grep -nE -- "$pattern" "$f")
done <<<"$files"
# The check itself: it must catch the form it bans.
grep -qE -- "$pattern" <<<'  ldd "$bin" | grep -q "libroofbench.so" || fail' || { echo "FAIL: the pattern misses ldd | grep -q" >&2; exit 1; }
grep -qE -- "$pattern" <<<'x | grep -Fxq y' || { echo "FAIL: the pattern misses grep -Fxq" >&2; exit 1; }
grep -qE -- "$pattern" <<<'grep -q x <<<"$(cmd)"' && { echo "FAIL: the pattern flags the safe form" >&2; exit 1; }
[ "$bad" = 0 ] || { echo "FAIL: $bad pipe(s) into grep -q: read the output into a variable first" >&2; exit 1; }
echo "PASS: $n shell scripts, no pipe into grep -q"
