#!/usr/bin/env bash
# What a self-hosted GPU runner runs on each commit: build, run the suite (or a filter of it),
# compare the run with the committed baseline of this GPU, write the Markdown summary (appended to
# $GITHUB_STEP_SUMMARY when GitHub Actions sets it), and exit with compare's code.
#
#   scripts/ci-gpu.sh [--device cuda:0] [--baseline DIR] [--filter REGEX] [--skip REGEX] [--quick]
#                     [--out DIR] [--skip-build] [-- COMPARE-OPTIONS...]
#   scripts/ci-gpu.sh --ab BASE_REF [--device cuda:0] [--filter REGEX] [--quick] [--out DIR]
#                     builds BASE_REF and this checkout and runs them interleaved on this GPU
#                     (scripts/ci-ab.sh: no committed baseline needed, and the machine's drift
#                     between runs cancels)
#
#   --baseline  a folder holding results.json, or results.json.xz as committed (default
#               reports/baselines/<gpu>, <gpu> from nvidia-smi's name: "NVIDIA H200" -> h200)
#   --skip      leave out what REGEX matches (a kernel known to fault): it is listed as not run,
#               and compare lists its baseline rows as "Only in BASE"
#   --out       where the run and the verdicts go (default results/ci): results.json and the
#               reports, compare.md, compare.json
#   after --     options for `roofbench compare`: --threshold 3, --threshold-for '^gemm/naive/=10'
#
# Exit: 0 no regression (improvements never fail); 1 a benchmark is SLOWER than the baseline or
# failed; 2 bad input (no baseline for this GPU, a baseline of another device, bad options).
set -euo pipefail
cd "$(dirname "$0")/.."

device=cuda:0 baseline="" filter="" skip="" quick="" out=results/ci build=1 ab_ref=""
compare_args=()
while (($#)); do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --quick) quick=--quick; shift ;;
    --out) out=$2; shift 2 ;;
    --skip-build) build=0; shift ;;
    --ab) ab_ref=$2; shift 2 ;;
    --) shift; compare_args=("$@"); break ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "ci-gpu: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ -n "$ab_ref" ]; then
  ab_run=()
  [ -n "$filter" ] && ab_run+=(--filter "$filter")
  [ -n "$skip" ] && ab_run+=(--skip "$skip")
  [ -n "$quick" ] && ab_run+=("$quick")
  exec scripts/ci-ab.sh "$ab_ref" --device "$device" --out "$out" -- "${ab_run[@]}"
fi

source scripts/env.sh
if [ -z "$baseline" ]; then
  slug=$(gpu_slug "$device" || true)
  if [ -z "$slug" ]; then
    echo "ci-gpu: no GPU name from nvidia-smi for $device; give --baseline DIR" >&2
    exit 2
  fi
  baseline=reports/baselines/$slug
fi
# Its results file as a run writes it or as committed (results.json.xz): compare reads either.
if ! results_file_in "$baseline" >/dev/null; then
  echo "ci-gpu: no baseline at $baseline (no results.json, .json.xz or .json.gz); baselines here: $(ls reports/baselines 2>/dev/null | tr '\n' ' ')" >&2
  echo "ci-gpu: make one on this GPU and commit it: scripts/baseline.sh --device $device --out $baseline" >&2
  exit 2
fi

bin=${ROOFBENCH_BIN:-build/release/roofbench}
if ((build)); then
  ./scripts/setup.sh
  source scripts/env.sh  # again: setup.sh may have just installed the toolkit
  cmake --preset release >/dev/null
  cmake --build --preset release --target roofbench
fi
[ -x "$bin" ] || { echo "ci-gpu: no roofbench at $bin (build it, or drop --skip-build)" >&2; exit 2; }

run_args=(run --device "$device" --out "$out")
[ -n "$filter" ] && run_args+=(--filter "$filter")
[ -n "$skip" ] && run_args+=(--skip "$skip")
[ -n "$quick" ] && run_args+=("$quick")
set +e
"$bin" "${run_args[@]}"
run_rc=$?
set -e
# 1 is a failed kernel: it still has a results file, and compare lists it as FAILED.
[ "$run_rc" -le 1 ] || { echo "ci-gpu: the run failed (exit $run_rc)" >&2; exit "$run_rc"; }

set +e
"$bin" compare "$baseline" "$out" --markdown "$out/compare.md" --json "$out/compare.json" "${compare_args[@]}"
compare_rc=$?
set -e
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/compare.md" ]; then
  cat "$out/compare.md" >>"$GITHUB_STEP_SUMMARY"
fi
if [ "$compare_rc" -ge 2 ]; then exit "$compare_rc"; fi
if [ "$run_rc" -ne 0 ] || [ "$compare_rc" -ne 0 ]; then exit 1; fi
exit 0
