#!/usr/bin/env bash
# compute-sanitizer over every CUDA kernel at its small test sizes: memcheck (with leak check),
# racecheck, initcheck and synccheck, each over the `gpu` correctness tests of test_cuda_kernels
# (every registered CUDA variant, ceilings included, at its test sizes, and every GEMM at the
# awkward shapes it must handle or refuse). Runs on the GPU machine from an archive made by
# scripts/pack-build.sh, or from a build folder. The GPU check's `repeat` stage runs the same
# tools as part of its evidence; this runs them alone, with more time.
#   scripts/sanitize.sh ARCHIVE.tar.xz|BUILD_DIR OUT [--limit S] [--skip WORD] [TOOL...]
# Writes OUT/sanitize.tar.xz (a log per tool) and OUT/sanitize-summary.txt (one line per tool),
# printed last. Exit: 0 when every tool ran and reported no error, 1 otherwise, 2 on bad arguments.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/gpu-lib.sh"
[ $# -ge 2 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
from=$1 out=$2
shift 2
limit=540 skip="" tools=()
while (($#)); do
  case "$1" in
    --limit) limit=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    memcheck | racecheck | initcheck | synccheck) tools+=("$1"); shift ;;
    *) echo "sanitize: unknown tool or option '$1' (memcheck, racecheck, initcheck, synccheck)" >&2; exit 2 ;;
  esac
done
((${#tools[@]})) || tools=(memcheck racecheck initcheck synccheck)

ev_begin "$out" sanitize "$limit"
if [ -d "$from" ]; then
  tests=$from/tests/test_cuda_kernels
else
  source "$here/unpack-build.sh"
  unpack_build "$from" >"$EV_WORK/unpack.log" 2>&1 || { ev_refuse "the archive does not unpack: see unpack.log"; ev_end; exit 2; }
  tests=$bin/test_cuda_kernels
fi
[ -x "$tests" ] || { ev_refuse "no test_cuda_kernels in $from (a build with CUDA?)"; ev_end; exit 2; }
# Which GPU and which build, first in the summary (the tests run on CUDA's device 0), so that
# scripts/visit-baseline.sh can put the logs in that GPU's baseline.
roofbench=$(dirname "$(dirname "$tests")")/roofbench
[ -d "$from" ] || roofbench=$bin/roofbench
ev_device_note cuda:0 "$roofbench"
source "$here/env.sh"
sanitizer=$(ev_find_tool compute-sanitizer)
[ -n "$sanitizer" ] || { ev_refuse "compute-sanitizer not found (it comes with the CUDA toolkit)"; ev_end; exit 2; }

filter='Registry/CudaVariant.MatchesItsReferenceAtEveryTestSize/*:Registry/CudaGemmVariant.*'
filter=$(ev_gtest_filter "$filter" "$skip")
# Its tests need a GPU: a tool whose tests all skipped checked nothing, and its step fails.
EV_EXPECT_GPU=1
share=$(((limit - EV_RESERVE_S) / ${#tools[@]}))
for tool in "${tools[@]}"; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  ev_step "$tool" "$share" "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 50 \
    "$tests" --gtest_filter="$filter" --gtest_brief=1
done
ev_end
