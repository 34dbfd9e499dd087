#!/usr/bin/env bash
# Stores every results.json under each FOLDER as results.json.xz (xz -9): a committed baseline's
# results file is the largest file of the tree (the first H200 visit's: 15 MB, 1.3 MB as xz), and
# every roofbench command (report, compare, merge, history, fleet, evidence, ab's --ceilings-from,
# the Python package's rb.load) and scripts/targets.py read it as it is. Each is checked to
# decompress to the same bytes before the plain file is removed. Nothing else is touched.
#   scripts/compress-results.sh FOLDER...
# Exit: 0 done (or nothing to do), 1 a file could not be stored so (it is left as it was), 2 usage.
set -uo pipefail
(($#)) || { sed -n '2,7p' "$0" >&2; exit 2; }
command -v xz >/dev/null || { echo "compress-results: no xz (Debian xz-utils; scripts/setup.sh installs it)" >&2; exit 2; }
rc=0 n=0
for dir in "$@"; do
  [ -d "$dir" ] || { echo "compress-results: no folder $dir" >&2; exit 2; }
  while IFS= read -r -d '' f; do
    if [ -e "$f.xz" ]; then
      echo "compress-results: $f.xz is there already: $f left as it is (keep one of them)" >&2
      rc=1
      continue
    fi
    if xz -9 -T1 -k -c "$f" >"$f.xz.tmp" && xz -d -c "$f.xz.tmp" | cmp -s - "$f"; then
      mv "$f.xz.tmp" "$f.xz" && rm "$f" && n=$((n + 1))
    else
      rm -f "$f.xz.tmp"
      echo "compress-results: $f could not be stored as xz: left as it is" >&2
      rc=1
    fi
  done < <(find "$dir" -name results.json -type f -print0)
done
echo "compress-results: $n results.json stored as results.json.xz"
exit $rc
