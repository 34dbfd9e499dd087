#!/usr/bin/env bash
# Dependencies point down (../shared/DESIGN.md, STYLE.md practice 16): bench (the ground floor) ←
# kernels ← roofline ← reports ← cli. A file may include headers of its own floor and the floors
# below, never above; cli/, the command line, wires every floor together from the top, and no file
# is exempt. A built-in kernel file looks exactly like a user's: kernels/ includes only the public
# headers (roofbench/) and kernels/ itself. The public headers (include/roofbench/,
# what a user's project compiles against) stand alone below every floor: they include each other
# and the standard and CUDA headers, never a header of the source tree. Usage: test_layers.sh SOURCE_DIR
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 2
floor() {
  case $1 in
    bench | roofbench) echo 0 ;;  # roofbench/version.h is generated from bench/version.h.in
    kernels) echo 1 ;;
    roofline) echo 2 ;;
    reports) echo 3 ;;
    cli) echo 4 ;;
    *) echo -1 ;;
  esac
}
bad=0 checked=0
while IFS= read -r f; do
  own=$(floor "${f%%/*}")
  while IFS= read -r inc; do
    top=${inc%%/*}
    theirs=$(floor "$top")
    [ "$theirs" -lt 0 ] && continue
    checked=$((checked + 1))
    if [ "$own" -eq 1 ] && [ "$top" != roofbench ] && [ "$top" != kernels ]; then
      echo "PRIVATE: $f includes $inc (a kernel file includes only roofbench/ and kernels/ headers, as a user's)"
      bad=$((bad + 1))
    elif [ "$theirs" -gt "$own" ]; then
      echo "BACK EDGE: $f includes $inc (${top} is above ${f%%/*})"
      bad=$((bad + 1))
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(find bench kernels roofline reports cli -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
public=0
while IFS= read -r f; do
  while IFS= read -r inc; do
    public=$((public + 1))
    case $inc in
      roofbench/*) [ -e "include/$inc" ] || [ "$inc" = roofbench/version.h ] ||
        { echo "MISSING: $f includes $inc, which include/ does not hold"; bad=$((bad + 1)); } ;;
      *) echo "PRIVATE: public header $f includes \"$inc\" (only roofbench/ headers may be quoted)"; bad=$((bad + 1)) ;;
    esac
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
  if grep -nE '^#include <(bench|kernels|roofline|reports)/' "$f"; then
    echo "PRIVATE: public header $f includes a header of the source tree"
    bad=$((bad + 1))
  fi
done < <(find include -type f | sort)
[ "$public" -gt 10 ] || { echo "FAIL: only $public includes among the public headers: is include/ there?" >&2; exit 1; }
[ "$bad" -eq 0 ] || { echo "FAIL: $bad include(s) break the layering" >&2; exit 1; }
echo "layers: $checked includes checked, none runs back up (bench <- kernels <- roofline <- reports <- cli)," \
  "kernels/ on the public headers alone;" \
  "$public includes of the public headers, all within include/roofbench"
