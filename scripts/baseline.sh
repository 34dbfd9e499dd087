#!/usr/bin/env bash
# Makes a committed baseline the way issue 7 asks for one: the full suite twice without counters
# and twice with them, each pair compared with `roofbench compare` (two runs of the same build on
# the same machine must agree), and the first run with counters written out as the baseline CI
# compares against, with its console log and provenance.
#
#   scripts/baseline.sh [--device cuda:0] [--out DIR] [--work DIR] [--threshold PCT]
#                       [--sanitizer-log FILE] [--archive FILE] [--evidence DIR] [--limit S]
#                       [-- RUN-OPTIONS...]
#
#   --out        the baseline folder (default reports/baselines/<gpu>, <gpu> from nvidia-smi's
#                name: "NVIDIA H200" -> h200; required for --device cpu)
#   --work       where the four runs go (default results/baseline-runs): WORK/{plain-1,plain-2,
#                counters-1,counters-2}, each with its console.log
#   --threshold  the change compare may not see between two runs of a pair (default 2)
#   --sanitizer-log  scripts/sanitize.sh's summary, copied beside the results
#   --archive    run the roofbench of an archive made by scripts/pack-build.sh (on a GPU machine
#                without the build's packages), unpacked as gpu-check.sh does
#   --evidence   where the evidence goes (default WORK): baseline.tar.xz (the four runs, their
#                logs and the baseline folder) and baseline-summary.txt, printed last; on a GPU
#                machine that is the folder that comes back
#   --limit      seconds the whole script may take (default 7200); each run is stopped at its share
#   after --     options for every `roofbench run`: --quick, --filter REGEX, --skip REGEX
# OUT gets counters-1's results.json (stored as results.json.xz), gbench.json, roofline.svg, report.html, summary.md and
# console.log, each pair's verdicts (agreement-plain.md/.json, agreement-counters.md/.json) and
# PROVENANCE.md. Otherwise uses $ROOFBENCH_BIN (default build/release/roofbench).
# Exit: 0 every run passed and each pair agreed (no SLOWER, FASTER or FAILED verdict); 1 a run
# failed or a pair disagreed (everything is still written); 2 bad input.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/gpu-lib.sh"
device=cuda:0 out="" archive="" work=$here/results/baseline-runs threshold=2 sanitizer_log="" evidence="" limit=7200
run_args=()
while (($#)); do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --archive) archive=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --sanitizer-log) sanitizer_log=$2; shift 2 ;;
    --evidence) evidence=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --) shift; run_args=("$@"); break ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "baseline: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
bin=${ROOFBENCH_BIN:-$here/build/release/roofbench}
if [ -n "$archive" ]; then
  source "$here/scripts/unpack-build.sh"
  unpack_build "$archive" || { echo "baseline: $archive does not unpack with its libraries: ${libs_report:-}" >&2; exit 2; }
  bin=$bin/roofbench  # unpack_build set bin to the archive's bin/
fi
[ -x "$bin" ] || { echo "baseline: no roofbench at $bin (build it first)" >&2; exit 2; }
if [ -z "$out" ]; then
  source "$here/scripts/env.sh"
  slug=$(gpu_slug "$device" || true)
  [ -n "$slug" ] || { echo "baseline: no GPU name from nvidia-smi for $device; give --out DIR" >&2; exit 2; }
  out=$here/reports/baselines/$slug
fi
[ -z "$sanitizer_log" ] || [ -f "$sanitizer_log" ] || { echo "baseline: no sanitizer log at $sanitizer_log" >&2; exit 2; }
# The commit the binary was built from, as it says (and as its results.json records): not the
# tree's HEAD now, which may have moved on since the build, or be absent (a GPU machine's copy).
commit=$("$bin" --version 2>/dev/null | sed -n 's/^.* commit //p')
commit=${commit:-unknown}
mkdir -p "$out" "$work" || { echo "baseline: cannot write $out or $work" >&2; exit 2; }
ev_begin "${evidence:-$work}" baseline "$limit"

status=0
for run in plain-1 plain-2 counters-1 counters-2; do
  dir=$work/$run
  rm -rf "$dir" && mkdir -p "$dir"
  extra=()
  [[ $run == counters-* ]] && extra=(--counters)
  ev_step "$run" $(((limit - EV_RESERVE_S) / 4)) "$bin" run --device "$device" --out "$dir" "${extra[@]}" "${run_args[@]}"
  rc=$?
  cp "$EV_WORK/$run.log" "$dir/console.log"
  if [ "$rc" -ge 2 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
    ev_note "run $run stopped with exit $rc (bad input?); see $dir/console.log"
    ev_end
    exit 2
  fi
  [ "$rc" -eq 0 ] || { echo "baseline: run $run had a failed benchmark (exit $rc)" >&2; status=1; }
done

# Two runs of one build on one machine: compare must find nothing SLOWER, FASTER, FAILED or
# IMPLAUSIBLE.
for pair in plain counters; do
  verdicts=$("$bin" compare "$work/$pair-1" "$work/$pair-2" --threshold "$threshold" \
    --markdown "$out/agreement-$pair.md" --json "$out/agreement-$pair.json" 2>&1)
  rc=$?
  # compare's last line: "0 SLOWER, 3 UNSURE, 40 SAME; geometric mean ...; exit 0" (a zero
  # FASTER, FAILED or IMPLAUSIBLE is left out).
  last=$(grep -E '[0-9]+ SLOWER, ' <<<"$verdicts" | tail -n1)
  [ "$rc" -le 1 ] && [ -n "$last" ] || { ev_note "compare of the $pair runs failed: $verdicts"; ev_end; exit 2; }
  count() { local n; n=$(grep -oE "[0-9]+ $1" <<<"$last" | head -n1 | cut -d' ' -f1); echo "${n:-0}"; }
  moved=$(($(count SLOWER) + $(count FASTER) + $(count FAILED) + $(count IMPLAUSIBLE)))
  if [ "$moved" -eq 0 ]; then
    ev_note "the two $pair runs agree: $last"
  else
    ev_note "the two $pair runs DISAGREE: $last (see agreement-$pair.md)"
    status=1
  fi
done

rm -f "$out/results.json.xz" "$out/results.json.gz"  # an earlier baseline's, stored compressed
for f in results.json gbench.json roofline.svg report.html summary.md console.log; do
  cp "$work/counters-1/$f" "$out/$f" || status=1
done
# Stored as results.json.xz, as committed baselines are: every roofbench command reads it so.
bash "$here/scripts/compress-results.sh" "$out" >/dev/null || status=1
[ -n "$sanitizer_log" ] && cp "$sanitizer_log" "$out/sanitizer.log"
{
  echo "# Provenance"
  echo
  echo "Written by \`scripts/baseline.sh\`; every number here is the suite's own output."
  echo
  echo "- command: \`scripts/baseline.sh --device $device --threshold $threshold${run_args[*]:+ -- ${run_args[*]}}\`"
  echo "- commit the binary was built from: $commit"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- baseline: the first of the two runs with counters; the device, driver, clocks and"
  echo "  command line are in results.json (stored as results.json.xz: \`xz -dc\` gives the file the run wrote)"
  echo "- agreement: \`agreement-plain.md\` and \`agreement-counters.md\`, each pair's second run against its first"
  [ -n "$sanitizer_log" ] && echo "- compute-sanitizer: \`sanitizer.log\` (scripts/sanitize.sh)"
  if command -v nvidia-smi >/dev/null && [[ $device == cuda:* ]]; then
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv -i "${device#cuda:}" 2>&1
    echo '```'
  fi
} >"$out/PROVENANCE.md"
mkdir -p "$EV_WORK/runs" "$EV_WORK/baseline"
cp -r "$work"/plain-1 "$work"/plain-2 "$work"/counters-1 "$work"/counters-2 "$EV_WORK/runs/" 2>/dev/null
cp -r "$out"/. "$EV_WORK/baseline/"
ev_note "wrote $out (exit $status)"
ev_end
exit $status
