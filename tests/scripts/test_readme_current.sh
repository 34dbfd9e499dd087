#!/usr/bin/env bash
# The README's generated sections are what scripts/update-readme.sh makes of this tree now: the
# results section from the committed baselines' summary.md, the CUDA rows of the kernel
# catalogue from `roofbench list` (the CPU rows name this machine's SIMD and core count, so they
# are not compared here), and the GPU visit's estimates (scripts/gpu-check.sh --plan). A kernel
# added, a baseline re-run or a stage changed without regenerating the README fails here.
# Usage: test_readme_current.sh ROOFBENCH_BIN HAVE_CUDA(0|1)
set -uo pipefail
bin=$(realpath "$1") have_cuda=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A copy of what the script reads and writes, so that the tree under test is left alone.
mkdir -p "$tmp/scripts" "$tmp/reports/baselines"
cp "$here/scripts/update-readme.sh" "$here/scripts/gpu-check.sh" "$here/scripts/gpu-lib.sh" \
  "$here/scripts/unpack-build.sh" "$tmp/scripts/"
cp "$here/README.md" "$tmp/README.md"
for summary in "$here"/reports/baselines/*/summary.md; do
  [ -f "$summary" ] || continue
  d=$(basename "$(dirname "$summary")")
  mkdir -p "$tmp/reports/baselines/$d" && cp "$summary" "$tmp/reports/baselines/$d/"
done
ROOFBENCH_BIN=$bin bash "$tmp/scripts/update-readme.sh" >/dev/null || fail "update-readme.sh exited $?"

section() {  # section(marker, file): the lines between <!-- marker:begin --> and <!-- marker:end -->
  awk -v m="$1" '$0 == "<!-- " m ":end -->" { on = 0 } on { print } $0 == "<!-- " m ":begin -->" { on = 1 }' "$2"
}
[ -n "$(section results "$here/README.md")" ] || fail "README.md has no results section"
diff -u <(section results "$here/README.md") <(section results "$tmp/README.md") ||
  fail "README.md's results section is not what scripts/update-readme.sh makes of the committed baselines: run it"
echo "results section: current"

if [ "$have_cuda" = 1 ]; then
  cuda_rows() { section catalogue "$1" | grep '^cuda '; }
  [ -n "$(cuda_rows "$tmp/README.md")" ] || fail "roofbench list printed no CUDA rows in a CUDA build"
  diff -u <(cuda_rows "$here/README.md") <(cuda_rows "$tmp/README.md") ||
    fail "README.md's catalogue of CUDA kernels is not what roofbench list prints: run scripts/update-readme.sh"
  echo "catalogue (CUDA rows): current"
  [ -n "$(section visit "$here/README.md")" ] || fail "README.md has no GPU-visit section"
  diff -u <(section visit "$here/README.md") <(section visit "$tmp/README.md") ||
    fail "README.md's GPU-visit estimates are not what scripts/gpu-check.sh --plan makes: run scripts/update-readme.sh"
  echo "GPU visit: current"
else
  echo "catalogue: not compared (a build without CUDA lists no CUDA kernels)"
fi
