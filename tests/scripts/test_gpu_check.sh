#!/usr/bin/env bash
# The dress rehearsal of a GPU visit, on the CPU: scripts/gpu-check.sh runs each stage with
# --device cpu against an archive made by scripts/pack-build.sh, as it will on a GPU machine.
# Every stage ends within its limit and leaves its archive and summary (never more than 8 files
# in all), the summary printed last; a stage over its estimate is refused; a stage stopped half-way
# (SIGTERM) still packs its evidence, with a valid partial results file that `roofbench merge`
# joins with the parts that finished. The GPU tests in the archive skip (no GPU), visibly.
# Usage: test_gpu_check.sh BUILD_DIR
set -uo pipefail
build=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
check=$here/scripts/gpu-check.sh
out=$tmp/out

# xz at its fastest here (55 s at -6 for the build's archive on two cores, 6 s at -0): what a visit
# carries is checked by Scripts.PackBuildArchiveUnpacksAndRuns; this is about the stages.
export XZ_OPT='-0 -T0'
bash "$here/scripts/pack-build.sh" "$build" "$tmp/roofbench.tar.xz" >/dev/null || fail "pack-build.sh exited $?"
roofbench=$build/roofbench

# run_stage NAME LIMIT EXPECTED_RC STAGE ARCHIVE OPTIONS...: runs a stage into $out, checks its
# time and files; leaves its unpacked evidence in $tmp/NAME.
run_stage() {
  local name=$1 limit=$2 want=$3 stage=$4 from=$5
  shift 5
  local t0 rc
  t0=$(date +%s)
  bash "$check" "$stage" "$from" "$out" --limit "$limit" "$@" >"$tmp/$name.stdout" 2>"$tmp/$name.stderr"
  rc=$?
  local took=$(($(date +%s) - t0))
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want: $(tail -n 20 "$tmp/$name.stderr") $(cat "$tmp/$name.stdout")"
  [ "$took" -le "$limit" ] || fail "$name: took $took s, over its limit of $limit s"
  [ -s "$out/$stage.tar.xz" ] || fail "$name: no $stage.tar.xz"
  [ -s "$out/$stage-summary.txt" ] || fail "$name: no $stage-summary.txt"
  # The summary comes last on stdout, whole.
  [ "$(tail -n "$(wc -l <"$out/$stage-summary.txt")" "$tmp/$name.stdout")" = "$(cat "$out/$stage-summary.txt")" ] ||
    fail "$name: the summary is not the last thing printed"
  rm -rf "${tmp:?}/$name" && mkdir -p "$tmp/$name" && tar -xJf "$out/$stage.tar.xz" -C "$tmp/$name" ||
    fail "$name: $stage.tar.xz does not unpack"
  echo "$name: exit $rc in $took s (limit $limit s)"
}

# The ceilings the rehearsal's kernels need (a DRAM and an FP32 roof), not every one: the stages'
# mechanics are under test, and on a VM that reports a 260 MiB LLC each DRAM ceiling moves 512 MiB
# arrays, several times per stage.
lean=(--skip 'ceiling/(dram_(write|copy|memcpy|triad|update)|l2_|l3_|fp64|math_|launch_)')

# Each stage's default limit, as --plan states it (numbers gets 540 s: its estimate is some 450 s
# before unpacking and planning).
for st in smoke:480 tests:480 numbers:540 repeat:480; do
  plan=$(bash "$check" "${st%%:*}" "$build" /dev/null --device cpu --plan "${lean[@]}" -- --filter saxpy 2>/dev/null)
  grep -q "^gpu-check ${st%%:*}: estimate [0-9]* s of the ${st#*:} s limit" <<<"$plan" ||
    fail "${st%%:*}: --plan does not give the ${st#*:} s limit: $plan"
done

# A stage whose estimate exceeds its limit does not start, and says so in its summary.
run_stage refused 60 2 smoke "$tmp/roofbench.tar.xz" --device cpu --budget 30 -- --filter saxpy
grep -q '^smoke: REFUSED: the estimate' "$out/smoke-summary.txt" || fail "refused: $(cat "$out/smoke-summary.txt")"
[ ! -d "$tmp/refused/quick-run" ] || fail "a refused stage ran its steps"

run_stage smoke 120 0 smoke "$tmp/roofbench.tar.xz" --device cpu "${lean[@]}" -- --filter saxpy
for step in env device-test wgmma-tests counter-tests quick-run; do
  grep -qE "^  PASS +[0-9]+s  $step " "$out/smoke-summary.txt" || fail "smoke: $step did not pass: $(cat "$out/smoke-summary.txt")"
done
grep -q 'SKIPPED \] [0-9]* tests' "$out/smoke-summary.txt" || fail "smoke: the GPU tests did not skip visibly"
grep -q 'no CUDA GPU visible' "$tmp/smoke/wgmma-tests.log" || fail "smoke: the wgmma tests do not say why they skip"
[ "$(json "$tmp/smoke/quick-run/results.json" 'd["partial"]')" = None ] || fail "smoke: the quick run is partial"

# The other GPU tests, wgmma left out (smoke ran those alone, first), after the run with counters
# that Nsight Compute is held against (on the CPU: the run, and ncu skipped with why).
run_stage tests 90 0 tests "$tmp/roofbench.tar.xz" --device cpu "${lean[@]}"
grep -qE "^  PASS +[0-9]+s  gpu-tests " "$out/tests-summary.txt" || fail "tests: $(cat "$out/tests-summary.txt")"
grep -qE "^  PASS +[0-9]+s  xcheck-run " "$out/tests-summary.txt" || fail "tests: $(cat "$out/tests-summary.txt")"
grep -qE '^  SKIPPED +- +ncu +the device is cpu' "$out/tests-summary.txt" || fail "tests: ncu was not skipped with why"
[ "$(json "$tmp/tests/xcheck/roofbench/results.json" '[b["name"].split("/")[1] for b in d["benchmarks"]]')" = "['saxpy']" ] ||
  fail "tests: the run with counters is not saxpy's alone"
grep -q 'no CUDA GPU visible' "$tmp/tests/gpu-tests.log" || fail "tests: the GPU tests do not say why they skip"
! grep -qE '^\[ RUN .*wgmma' "$tmp/tests/gpu-tests.log" || fail "tests: ran the wgmma tests again"

run_stage numbers 150 0 numbers "$tmp/roofbench.tar.xz" --device cpu --quick --budget 0.3 "${lean[@]}" \
  --parts 'saxpy=stream/saxpy;relu=lowprec/relu/fp32'
b=$tmp/numbers/baseline
for f in results.json gbench.json roofline.svg report.html summary.md console.log PROVENANCE.md; do
  [ -s "$b/$f" ] || fail "numbers: no baseline/$f"
done
[ "$(json "$b/results.json" 'sorted(x["name"].split("/")[1] for x in d["benchmarks"])')" = "['relu', 'saxpy']" ] ||
  fail "numbers: the merged results do not hold both parts"
[ "$(json "$b/results.json" 'len(d["ceilings"])')" -gt 0 ] || fail "numbers: no ceilings in the merged results"
[ "$(json "$b/results.json" 'd["partial"]')" = None ] || fail "numbers: the merged results are partial"
[ "$(json "$b/gbench.json" 'len(d["benchmarks"])')" -ge 2 ] || fail "numbers: gbench.json lost a part"
# The ceilings ran once: the parts took them from the ceilings part.
[ "$(json "$tmp/numbers/parts/saxpy/results.json" 'd["settings"]["ceilings_from"]["path"].endswith("ceilings/results.json")')" = True ] ||
  fail "numbers: a part measured its own ceilings"

# Stopped half-way: SIGTERM once a part has written its first benchmark.
mkdir -p "$tmp/scratch"
stopped_out=$tmp/out-stopped
TMPDIR=$tmp/scratch bash "$check" numbers "$tmp/roofbench.tar.xz" "$stopped_out" --device cpu --quick --budget 0.3 --limit 150 "${lean[@]}" \
  --parts 'saxpy=stream/saxpy;lessons=^(lowprec|fusion)/' >"$tmp/stopped.stdout" 2>"$tmp/stopped.stderr" &
pid=$!
t0=$(date +%s)
snapshot=""
for _ in $(seq 1 1200); do
  snapshot=$(ls "$tmp"/scratch/tmp.*/parts/lessons/results.json 2>/dev/null | head -n1)
  [ -n "$snapshot" ] && break
  sleep 0.1
done
[ -n "$snapshot" ] || { kill "$pid"; fail "stopped: the lessons part never wrote a snapshot"; }
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 1 ] || fail "stopped: exit $rc, expected 1: $(tail -n 20 "$tmp/stopped.stderr")"
[ $(($(date +%s) - t0)) -le 150 ] || fail "stopped: over its limit"
grep -q '^numbers: STOPPED by SIGTERM' "$stopped_out/numbers-summary.txt" || fail "stopped: $(cat "$stopped_out/numbers-summary.txt")"
grep -qE '^  SKIPPED +- +merge +the stage was stopped' "$stopped_out/numbers-summary.txt" || fail "stopped: the merge still ran"
[ "$(ls "$stopped_out" | wc -l)" -eq 2 ] || fail "stopped: $(ls "$stopped_out")"
rm -rf "$tmp/stopped" && mkdir "$tmp/stopped" && tar -xJf "$stopped_out/numbers.tar.xz" -C "$tmp/stopped"
p=$tmp/stopped/parts/lessons/results.json
[ "$(json "$p" 'd["partial"]["reason"]')" = "stopped by SIGTERM" ] || fail "stopped: the part's results are not marked partial"
done_n=$(json "$p" 'd["partial"]["completed"]')
[ "$done_n" -ge 1 ] && [ "$done_n" -lt "$(json "$p" 'd["partial"]["planned"]')" ] || fail "stopped: $done_n benchmarks done"
[ "$(json "$p" 'len(d["benchmarks"])')" -eq "$done_n" ] || fail "stopped: the partial file holds other than what finished"
"$roofbench" report "$p" --out "$tmp/stopped-report" >/dev/null || fail "stopped: the partial results do not render"
grep -q 'PARTIAL: ' "$tmp/stopped-report/summary.md" || fail "stopped: the report does not say partial"
"$roofbench" merge "$tmp/stopped/parts/ceilings" "$tmp/stopped/parts/saxpy" "$tmp/stopped/parts/lessons" \
  --out "$tmp/merged" >/dev/null 2>&1 || fail "stopped: merge of the parts failed"
[ "$(json "$tmp/merged/results.json" 'len(d["benchmarks"])')" -eq $((done_n + 1)) ] || fail "stopped: merge lost benchmarks"
[ "$(json "$tmp/merged/results.json" 'd["partial"] is not None')" = True ] || fail "stopped: the merge of a partial part is not partial"

run_stage repeat 150 0 repeat "$tmp/roofbench.tar.xz" --device cpu --budget 0.1 "${lean[@]}" -- --filter saxpy
grep -qE '^  (PASS|DIFFER) ' "$out/repeat-summary.txt" || fail "repeat: $(cat "$out/repeat-summary.txt")"
grep -qE '^  SKIPPED +- +memcheck +the device is cpu' "$out/repeat-summary.txt" || fail "repeat: memcheck was not skipped with why"
[ -s "$tmp/repeat/agreement.json" ] || fail "repeat: no agreement.json"

# What the visit brought back becomes the baseline folder (here --out: a CPU has no GPU name).
bash "$here/scripts/visit-baseline.sh" "$out" --out "$tmp/committed" >/dev/null || fail "visit-baseline.sh failed"
for f in results.json gbench.json roofline.svg report.html summary.md console.log PROVENANCE.md agreement.md agreement.json; do
  [ -s "$tmp/committed/$f" ] || fail "visit-baseline: no $f"
done
for st in smoke tests numbers repeat; do
  grep -q "^## The $st stage" "$tmp/committed/PROVENANCE.md" || fail "visit-baseline: PROVENANCE.md lacks the $st stage"
done
grep -q '^## The repeat stage' "$tmp/committed/PROVENANCE.md" || fail "visit-baseline: PROVENANCE.md lacks the repeat stage"

# The baseline folder follows the GPU that came: H100 or H200.
mkdir -p "$tmp/fakebin"
source "$here/scripts/env.sh"
for name in "NVIDIA H100 80GB HBM3:h100" "NVIDIA H200:h200" "NVIDIA H100 PCIe:h100"; do
  printf '#!/bin/sh\necho "%s"\n' "${name%%:*}" >"$tmp/fakebin/nvidia-smi"
  chmod +x "$tmp/fakebin/nvidia-smi"
  [ "$(PATH=$tmp/fakebin:$PATH gpu_slug cuda:0)" = "${name##*:}" ] || fail "gpu_slug of '${name%%:*}' is not ${name##*:}"
done

n=$(ls "$out" | wc -l)
[ "$n" -le 8 ] || fail "$n files in OUT after every stage: $(ls "$out" | tr '\n' ' ')"
echo "gpu-check dress rehearsal: $n files from 4 stages (refused, stopped and merged on the way)"
