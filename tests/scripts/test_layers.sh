#!/usr/bin/env bash
# Dependencies point down (../shared/DESIGN.md, STYLE.md practice 16): bench (the ground floor) ←
# kernels ← roofline ← reports. A file may include headers of its own floor and the floors below,
# never above; the driver (bench/driver.cpp, bench/cmd_*.cpp, bench/commands.h, bench/main.cpp),
# which wires every floor together, is the one exception. The public headers (include/roofbench/,
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
    *) echo -1 ;;
  esac
}
bad=0 checked=0
while IFS= read -r f; do
  case $f in bench/driver.cpp | bench/cmd_*.cpp | bench/commands.h | bench/main.cpp) continue ;; esac
  own=$(floor "${f%%/*}")
  while IFS= read -r inc; do
    top=${inc%%/*}
    theirs=$(floor "$top")
    [ "$theirs" -lt 0 ] && continue
    checked=$((checked + 1))
    if [ "$theirs" -gt "$own" ]; then
      echo "BACK EDGE: $f includes $inc (${top} is above ${f%%/*})"
      bad=$((bad + 1))
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(find bench kernels roofline reports -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
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
echo "layers: $checked includes checked, none runs back up (bench <- kernels <- roofline <- reports);" \
  "$public includes of the public headers, all within include/roofbench"
