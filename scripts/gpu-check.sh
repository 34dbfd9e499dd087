#!/usr/bin/env bash
# What a GPU session runs on the GPU machine in one call, from an archive made here by
# scripts/pack-build.sh: checks that every binary finds its libraries, runs every test binary
# (the `gpu` tests included), then `roofbench run` on the first GPU. Everything it prints goes
# to files under OUT, so that what comes back is the evidence:
#   OUT/env.log              nvidia-smi, nvcc version, each binary's ldd
#   OUT/test_*.log           one log per test binary
#   OUT/results/...          results.json, gbench.json, roofline.svg, report.html, summary.md
#   OUT/console.log          the run's console output (pass --counters to read CUPTI counters too)
# Usage (on the GPU machine): scripts/gpu-check.sh ARCHIVE.tar.xz OUT [roofbench run arguments...]
# Each test binary may run for GPU_CHECK_TEST_TIMEOUT seconds (default 300): a hung kernel costs
# its binary, not the rest of the check.
# Exit status: 0 when every test binary and the run passed, else 1 (each log says what failed).
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/gpu-check.sh ARCHIVE.tar.xz OUT [roofbench run args...]" >&2; exit 2; }
archive=$1 out=$2
shift 2
mkdir -p "$out"
source "$(dirname "$0")/unpack-build.sh"
unpack_build "$archive"
unpacked=$?
{
  nvidia-smi || true
  nvcc --version || true
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  echo "${libs_report:-}"
} >"$out/env.log" 2>&1
[ $unpacked -eq 0 ] || { echo "gpu-check: see $out/env.log" >&2; exit $unpacked; }

status=0
for t in "$bin"/test_*; do
  name=$(basename "$t")
  limit=${GPU_CHECK_TEST_TIMEOUT:-300}
  ROOFBENCH_BIN="$bin/roofbench" timeout --kill-after=10 "$limit" "$t" >"$out/$name.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) tests\{0,1\}.*/\1/p' "$out/$name.log" | tail -1)
    echo "gpu-check: $name passed${skipped:+ ($skipped skipped: see the log for why)}"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "gpu-check: $name TIMED OUT after ${limit} s: a hung kernel? The last test it started is in $out/$name.log" |
      tee -a "$out/$name.log"
    status=1
  else
    echo "gpu-check: $name FAILED (see $out/$name.log)"
    status=1
  fi
done

"$bin/roofbench" run --device cuda:0 --out "$out/results" "$@" 2>&1 | tee "$out/console.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
