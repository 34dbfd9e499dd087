#!/usr/bin/env bash
# compute-sanitizer over every CUDA kernel at its small test sizes: memcheck (with leak check),
# racecheck, initcheck and synccheck, each over the `gpu` correctness tests of test_cuda_kernels
# (every registered CUDA variant, ceilings included, at its test sizes, and every GEMM at the
# awkward shapes it must handle or refuse). Runs on the GPU machine from an archive made by
# scripts/pack-build.sh, or from a build folder that has tests/test_cuda_kernels.
#   scripts/sanitize.sh ARCHIVE.tar.xz|BUILD_DIR OUT [TOOL...]
# Writes OUT/sanitizer-TOOL.log for each tool and OUT/sanitizer.log, one summary line per tool.
# Exit: 0 when every tool ran and reported no error, 1 otherwise, 2 on bad arguments.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
from=$1 out=$2
shift 2
tools=("$@")
((${#tools[@]})) || tools=(memcheck racecheck initcheck synccheck)
mkdir -p "$out"

if [ -d "$from" ]; then
  tests=$from/tests/test_cuda_kernels
  roofbench=$from/roofbench
else
  source "$(dirname "$0")/unpack-build.sh"
  unpack_build "$from" || exit $?
  tests=$bin/test_cuda_kernels roofbench=$bin/roofbench
fi
[ -x "$tests" ] || { echo "sanitize: no test_cuda_kernels in $from (a build with CUDA?)" >&2; exit 2; }
source "$(dirname "$0")/env.sh"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n1)
[ -n "$sanitizer" ] || { echo "sanitize: compute-sanitizer not found (it comes with the CUDA toolkit)" >&2; exit 2; }

filter='Registry/CudaVariant.MatchesItsReferenceAtEveryTestSize/*:Registry/CudaGemmVariant.*'
status=0
: >"$out/sanitizer.log"
for tool in "${tools[@]}"; do
  case $tool in
    memcheck) extra=(--leak-check full) ;;
    racecheck | initcheck | synccheck) extra=() ;;
    *) echo "sanitize: unknown tool '$tool' (memcheck, racecheck, initcheck, synccheck)" >&2; exit 2 ;;
  esac
  log=$out/sanitizer-$tool.log
  start=$(date +%s)
  ROOFBENCH_BIN=$roofbench "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 50 \
    "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$log" 2>&1
  rc=$?
  summary=$(grep -E 'ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 2 | tr '\n' ' ')
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) tests\{0,1\}.*/\1/p' "$log" | tail -1)
  case $rc in
    0) verdict=clean ;;
    99) verdict="ERRORS"; status=1 ;;
    *) verdict="test failures or sanitizer failure (exit $rc)"; status=1 ;;
  esac
  line="sanitize: $tool: $verdict in $(($(date +%s) - start)) s; ${summary:-no summary line}${skipped:+; $skipped tests skipped}"
  echo "$line" | tee -a "$out/sanitizer.log"
  if grep -q "no CUDA GPU visible" "$log"; then
    echo "sanitize: no GPU visible: nothing was checked" | tee -a "$out/sanitizer.log"
    status=1
  fi
done
exit $status
