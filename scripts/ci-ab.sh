#!/usr/bin/env bash
# A regression check that holds on a noisy runner: builds the base commit and the candidate (this
# checkout), runs them interleaved with `roofbench ab` on this machine, writes the Markdown
# verdicts (appended to $GITHUB_STEP_SUMMARY when GitHub Actions sets it), and exits with ab's
# code. Works on any runner: --device cpu on a plain one, --device cuda:0 on a GPU runner
# (scripts/ci-gpu.sh --ab BASE_REF runs this).
#
#   scripts/ci-ab.sh BASE_REF [--device cpu|cuda:N] [--rounds N] [--noise FILE] [--out DIR]
#                    [--base-bin BIN --new-bin BIN] [-- RUN-OPTIONS...]
#
#   BASE_REF     the commit to compare with (origin/main, HEAD~1, a tag); built in a git worktree
#   --base-bin, --new-bin   use these roofbench binaries instead of building (both or neither)
#   --noise      a calibration file of this machine (roofbench calibrate): per-benchmark thresholds
#   after --     options of every `roofbench run` (--quick, --filter REGEX, --budget S)
#
# Exit: 0 no regression; 1 a benchmark is SLOWER or FAILED; 2 bad input or a build that failed.
set -euo pipefail
cd "$(dirname "$0")/.."

base_ref="" device=cpu rounds=10 noise="" out=results/ab base_bin="" new_bin=""
run_args=()
while (($#)); do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --noise) noise=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --base-bin) base_bin=$2; shift 2 ;;
    --new-bin) new_bin=$2; shift 2 ;;
    --) shift; run_args=("$@"); break ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "ci-ab: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$base_ref" ] || { echo "ci-ab: one BASE_REF, not '$base_ref' and '$1'" >&2; exit 2; }
       base_ref=$1; shift ;;
  esac
done
if [ -n "$base_bin$new_bin" ]; then
  [ -n "$base_bin" ] && [ -n "$new_bin" ] || { echo "ci-ab: give both --base-bin and --new-bin, or neither" >&2; exit 2; }
else
  [ -n "$base_ref" ] || { echo "ci-ab: which commit is the base? (scripts/ci-ab.sh BASE_REF, see --help)" >&2; exit 2; }
  git rev-parse --verify --quiet "$base_ref^{commit}" >/dev/null ||
    { echo "ci-ab: '$base_ref' is not a commit here (fetch it first: git fetch origin main)" >&2; exit 2; }
  ./scripts/setup.sh
  source scripts/env.sh
  echo "ci-ab: building the candidate (this checkout)" >&2
  cmake --preset release >/dev/null
  cmake --build --preset release --target roofbench
  new_bin=build/release/roofbench
  echo "ci-ab: building the base, $base_ref, in a worktree" >&2
  tree=build/ab-base-src
  git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
  git worktree add --detach "$tree" "$base_ref" >/dev/null
  cmake -S "$tree" -B build/ab-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DROOFBENCH_TESTS=OFF >/dev/null ||
    { echo "ci-ab: the base did not configure" >&2; exit 2; }
  cmake --build build/ab-base --target roofbench || { echo "ci-ab: the base did not build" >&2; exit 2; }
  base_bin=build/ab-base/roofbench
fi

args=(ab "$base_bin" "$new_bin" --rounds "$rounds" --out "$out")
[ -n "$noise" ] && args+=(--noise "$noise")
set +e
"$new_bin" "${args[@]}" -- --device "$device" "${run_args[@]}"
rc=$?
set -e
if [ -f "$out/ab.md" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/ab.md" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$rc"
