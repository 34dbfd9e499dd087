#!/usr/bin/env bash
# The tracked tree stays under 30 MB (issue 51: every GPU visit adds a baseline folder, and the
# first one's results.json alone was 15 MB): the sum of the blobs in git's index, the largest
# named when it fails. Committed results files are stored as results.json.xz
# (scripts/compress-results.sh); a plain results.json above 1 MB under reports/baselines/ fails
# too, being what makes the tree heavy. Outside a git checkout: skipped, saying so (exit 77).
# Usage: test_tree_size.sh SOURCE_DIR
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 2
if [ ! -e .git ]; then
  echo "SKIP: $src is not a git checkout: the tracked tree is git's index"
  exit 77
fi
git() { command git -c safe.directory="$src" "$@"; }
limit=30000000
sizes=$(git ls-files -s | awk '{ print $2, $4 }' | while read -r blob path; do
  echo "$(git cat-file -s "$blob") $path"
done) || { echo "FAIL: cannot read git's index"; exit 1; }
total=$(awk '{ s += $1 } END { print s + 0 }' <<<"$sizes")
files=$(wc -l <<<"$sizes")
[ "$files" -gt 100 ] || { echo "FAIL: only $files files in the index: not this tree"; exit 1; }
echo "tracked tree: $files files, $((total / 1000)) kB of the $((limit / 1000)) kB allowed; the largest:"
sort -rn <<<"$sizes" | head -5 | awk '{ printf "  %9d  %s\n", $1, $2 }'
status=0
if [ "$total" -ge "$limit" ]; then
  echo "FAIL: the tracked tree is $total bytes, over $limit"
  status=1
fi
plain=$(awk '$2 ~ /^reports\/baselines\/.*results\.json$/ && $1 > 1000000 { print "  " $2 " (" $1 " bytes)" }' <<<"$sizes")
if [ -n "$plain" ]; then
  echo "FAIL: committed results files stored plain (scripts/compress-results.sh stores them as results.json.xz):"
  echo "$plain"
  status=1
fi
exit $status
