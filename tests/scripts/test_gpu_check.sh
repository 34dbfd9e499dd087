#!/usr/bin/env bash
# The dress rehearsal of a GPU visit, on the CPU: scripts/gpu-check.sh runs each stage with
# --device cpu against an archive made by scripts/pack-build.sh, as it will on a GPU machine.
# Every stage ends within its limit and leaves its archive and summary (two files a stage, of the
# 8 a device call brings back), the summary printed last and naming the device and the commit; a stage over its
# estimate is refused, as is one that leaves its last step (the kernel tests) less than its least;
# the numbers stage fits its budget per benchmark to its limit; a stage stopped half-way (SIGTERM)
# still packs its evidence, with a valid partial results file that `roofbench merge` joins with
# the parts that finished. The GPU tests in the archive skip (no GPU), visibly. What came back
# becomes a baseline folder, and a later visit's stages add to it, refused when of another device.
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
# (xz -0: the stages are tested here, not the packing, which Scripts.PackBuildArchiveUnpacksAndRuns
# tests as a visit packs.)
XZ_OPT='-0 -T0' bash "$here/scripts/pack-build.sh" "$build" "$tmp/roofbench.tar.xz" >/dev/null || fail "pack-build.sh exited $?"
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

# Few ceilings (L1, FP32 FMA, the OpenMP launch), none of DRAM: the stages' mechanics are under
# test, not roofs, and on a VM that reports a 260 MiB LLC each DRAM ceiling moves 512 MiB arrays,
# several times per stage (with DRAM update kept, this test took 78 s alone instead of 57).
lean=(--skip 'ceiling/(dram_|l2_|l3_|fp64|math_|launch_)')

# Each stage's default limit, as --plan states it: the first command of a 15-minute visit, smoke
# 300 s and tests 360 s (the example's kernels and ci-gpu.sh after its checks), the second
# (numbers, repeat) 420 s.
for st in smoke:300 tests:360 numbers:420 repeat:420; do
  plan=$(bash "$check" "${st%%:*}" "$build" /dev/null --device cpu --plan "${lean[@]}" -- --filter saxpy 2>/dev/null)
  grep -q "^gpu-check ${st%%:*}: estimate [0-9]* s of the ${st#*:} s limit" <<<"$plan" ||
    fail "${st%%:*}: --plan does not give the ${st#*:} s limit: $plan"
done

# No limit past what one device-tool command may run (600 s, with 30 s for the stage to end).
bash "$check" numbers "$build" /dev/null --device cpu --plan --limit 571 >/dev/null 2>"$tmp/limit.err" &&
  fail "a limit of 571 s was taken"
grep -q 'at most 570 s' "$tmp/limit.err" || fail "the refused limit does not say why: $(cat "$tmp/limit.err")"

# A stage whose estimate exceeds its limit does not start, and says so in its summary.
run_stage refused 60 2 tests "$tmp/roofbench.tar.xz" --device cpu --budget 30 -- --filter saxpy
grep -q '^tests: REFUSED: the estimate' "$out/tests-summary.txt" || fail "refused: $(cat "$out/tests-summary.txt")"
[ ! -d "$tmp/refused/quick-run" ] || fail "a refused stage ran its steps"
# Nor does one whose last step, which takes the time left, would be left less than its least
# (on the CPU the kernel tests' allowance is 5 s: at 40 s the other steps' 25 s and the 20 s kept
# for packing leave it none).
run_stage short 40 2 smoke "$tmp/roofbench.tar.xz" --device cpu
grep -q '^smoke: REFUSED: the other steps leave kernel-tests less than its least' "$out/smoke-summary.txt" ||
  fail "short: $(cat "$out/smoke-summary.txt")"

# The device and the build, first in every summary.
commit=$("$roofbench" --version | sed -n 's/.*commit \([0-9a-f]*\).*/\1/p')
device_line() {
  grep -qE "^device: cpu, .+; roofbench .*commit $commit" "$out/$1-summary.txt" ||
    fail "$1: the summary does not name the device and the commit: $(cat "$out/$1-summary.txt")"
}

run_stage smoke 120 0 smoke "$tmp/roofbench.tar.xz" --device cpu
device_line smoke
for step in env device-test wgmma-tests counter-tests kernel-tests; do
  grep -qE "^  PASS +[0-9]+s  $step " "$out/smoke-summary.txt" || fail "smoke: $step did not pass: $(cat "$out/smoke-summary.txt")"
done
grep -q 'SKIPPED \] [0-9]* tests' "$out/smoke-summary.txt" || fail "smoke: the GPU tests did not skip visibly"
grep -q 'no CUDA GPU visible' "$tmp/smoke/wgmma-tests.log" || fail "smoke: the wgmma tests do not say why they skip"
grep -q 'no CUDA GPU visible' "$tmp/smoke/kernel-tests.log" || fail "smoke: the kernel tests do not say why they skip"
grep -qF '] Registry/CudaVariant.MatchesItsReferenceAtEveryTestSize/gemm_naive_fp32' \
  "$tmp/smoke/kernel-tests.log" || fail "smoke: the kernel tests did not run the kernels' checks"
! grep -qE '^\[ RUN .*wgmma' "$tmp/smoke/kernel-tests.log" || fail "smoke: ran the wgmma tests again"

# The run with CUPTI's counters that Nsight Compute is held against (on the CPU: the run, and ncu
# skipped with why).
run_stage tests 120 0 tests "$tmp/roofbench.tar.xz" --device cpu "${lean[@]}" -- --filter saxpy
device_line tests
grep -qE "^  PASS +[0-9]+s  quick-run " "$out/tests-summary.txt" || fail "tests: $(cat "$out/tests-summary.txt")"
grep -qE '^  SKIPPED +- +ncu +the device is cpu' "$out/tests-summary.txt" || fail "tests: ncu was not skipped with why"
grep -qE '^  SKIPPED +- +device-all +the device is cpu' "$out/tests-summary.txt" || fail "tests: device-all was not skipped with why"
[ "$(json "$tmp/tests/quick-run/results.json" '[b["name"].split("/")[1] for b in d["benchmarks"]]')" = "['saxpy']" ] ||
  fail "tests: the run with counters is not saxpy's alone"
[ "$(json "$tmp/tests/quick-run/results.json" 'd["partial"]')" = None ] || fail "tests: the quick run is partial"
grep -q -- '--counters' "$tmp/tests/quick-run.log" || fail "tests: the quick run has no --counters"
# The example project's kernels from its own binary in the archive, alone (--no-builtin), on the
# quick run's ceilings; then ci-gpu.sh with the archive's roofbench, SAXPY against the quick run.
grep -qE "^  PASS +[0-9]+s  example +roofbench: 2 benchmarks measured, 0 failed" "$out/tests-summary.txt" ||
  fail "tests: the example did not run: $(cat "$out/tests-summary.txt")"
[ "$(json "$tmp/tests/example/results.json" 'sorted(b["name"].split("/")[0] for b in d["benchmarks"])')" = \
  "['myops', 'myops']" ] || fail "tests: the example's run is not its two kernels"
# (Checked and timed; placed on a GPU, where the quick run measured the DRAM ceilings this one skips.)
[ "$(json "$tmp/tests/example/results.json" 'all(b["verification"]["ok"] and b["measurement"] for b in d["benchmarks"])')" = True ] ||
  fail "tests: the example's kernels were not checked and timed"
grep -qE "^  (PASS|DIFFER) +[0-9]+s  ci-gpu " "$out/tests-summary.txt" || fail "tests: ci-gpu.sh: $(cat "$out/tests-summary.txt")"
[ "$(json "$tmp/tests/ci-gpu/compare.json" '[b["name"].split("/")[1] for b in d["benchmarks"]]')" = "['saxpy']" ] ||
  fail "tests: ci-gpu.sh did not compare SAXPY with the quick run"

# Without --budget, numbers fits each benchmark's budget to its limit: the estimate is linear in
# the budget, so between the least (0.2 s) and the most (0.75 s) a limit half-way between the two
# estimates gets a budget strictly between them and an estimate within the limit. (--plan: the
# registry's estimates, nothing run; the limit keeps 40 s for the merge, planning and packing.)
plan_total() { bash "$check" numbers "$build" /dev/null --device cpu --plan "$@" 2>/dev/null | sed -n '1s/.*estimate \([0-9]*\) s.*/\1/p'; }
most=$(plan_total --budget 0.75 --limit 570)
least=$(plan_total --budget 0.2 --limit 570)
[ "$most" -gt $((least + 10)) ] || fail "numbers: the estimate at 0.75 s ($most s) is not above the one at 0.2 s ($least s)"
mid=$((40 + (most + least) / 2 - 15))
fit=$(bash "$check" numbers "$build" /dev/null --device cpu --plan --limit "$mid" 2>/dev/null | head -n 1)
b=$(sed -n "s/.*each benchmark's budget \([0-9.]*\) s, fitted.*/\1/p" <<<"$fit")
[ -n "$b" ] && awk -v b="$b" 'BEGIN { exit !(b > 0.2 && b < 0.75) }' || fail "numbers: no budget fitted between 0.2 and 0.75 s at $mid s: $fit"
[ "$(sed -n '1s/.*estimate \([0-9]*\) s.*/\1/p' <<<"$fit")" -le "$mid" ] || fail "numbers: the fitted estimate exceeds the limit: $fit"
grep -q "fitted" <<<"$(bash "$check" numbers "$build" /dev/null --device cpu --plan --limit 570 2>/dev/null | head -n 1)" &&
  fail "numbers: a limit with room to spare still fitted the budget"
grep -q "the least, and still over" <<<"$(bash "$check" numbers "$build" /dev/null --device cpu --plan --limit 30 2>/dev/null | head -n 1)" ||
  fail "numbers: a limit below the least budget's estimate does not say so"
# The default parts: the lessons whose checks are largest (2^28 elements) last, in a part of their
# own, so that a part stopped by the limit loses them and not the lessons the targets judge.
order=$(bash "$check" numbers "$build" /dev/null --device cpu --plan 2>/dev/null | awk '/^  part-/ {printf "%s ", $1}')
[ "$order" = "part-gemm-fp32 part-lessons part-big-lessons " ] ||
  fail "numbers: the default parts are not GEMM, the lessons, then the large lessons: $order"

run_stage numbers 150 0 numbers "$tmp/roofbench.tar.xz" --device cpu --quick --budget 0.3 "${lean[@]}" \
  --parts 'saxpy=stream/saxpy;relu=lowprec/relu/fp32'
device_line numbers
b=$tmp/numbers/baseline
for f in results.json gbench.json roofline.svg report.html summary.md console.log PROVENANCE.md; do
  [ -s "$b/$f" ] || fail "numbers: no baseline/$f"
done
[ "$(json "$b/results.json" 'sorted(x["name"].split("/")[1] for x in d["benchmarks"])')" = "['relu', 'saxpy']" ] ||
  fail "numbers: the merged results do not hold both parts"
[ "$(json "$b/results.json" 'len(d["ceilings"])')" -gt 0 ] || fail "numbers: no ceilings in the merged results"
[ "$(json "$b/results.json" 'd["partial"]')" = None ] || fail "numbers: the merged results are partial"
[ "$(json "$b/gbench.json" 'len(d["benchmarks"])')" -ge 2 ] || fail "numbers: gbench.json lost a part"
# Its last step, the 8192³ BF16 GEMMs sampled 3 s each (issue 47), has no such GEMM on the CPU.
grep -qE '^  SKIPPED +- +throttle +no 8192³ BF16 tensor GEMM on cpu' "$out/numbers-summary.txt" ||
  fail "numbers: the throttle run was not skipped with why: $(cat "$out/numbers-summary.txt")"
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
device_line repeat
grep -qE '^  (PASS|DIFFER) ' "$out/repeat-summary.txt" || fail "repeat: $(cat "$out/repeat-summary.txt")"
grep -qE '^  SKIPPED +- +memcheck +the device is cpu' "$out/repeat-summary.txt" || fail "repeat: memcheck was not skipped with why"
[ -s "$tmp/repeat/agreement.json" ] || fail "repeat: no agreement.json"
# The A/A: roofbench ab of the binary against itself, on the run options' own filter, its rounds'
# ceilings taken from quick-1, its verdicts in the summary.
grep -qE '^  (PASS|DIFFER) +[0-9]+s +ab +[0-9]+ SLOWER, ' "$out/repeat-summary.txt" || fail "repeat: no A/A: $(cat "$out/repeat-summary.txt")"
[ "$(json "$tmp/repeat/ab/ab.json" 'len(d["rounds"])')" -eq 5 ] || fail "repeat: the A/A did not run 5 rounds"
[ ! -e "$tmp/repeat/ab/ceilings" ] || fail "repeat: the A/A measured its own ceilings, not quick-1's"
[ "$(json "$tmp/repeat/ab/ab.json" 'sorted({b["name"].split("/")[1] for b in d["benchmarks"]})')" = "['saxpy']" ] ||
  fail "repeat: the A/A did not keep the run options' filter"

# The profile stage: on the CPU, each benchmark it would profile planned and skipped with why (it
# needs Nsight Compute and a GPU); --xcheck names them (the default rungs are CUDA GEMMs).
run_stage profile 100 0 profile "$tmp/roofbench.tar.xz" --device cpu --xcheck '^gemm/naive/fp32/M:256/'
device_line profile
grep -qE '^  SKIPPED +- +naive +the device is cpu: Nsight Compute' "$out/profile-summary.txt" ||
  fail "profile: the benchmark was not planned and skipped with why: $(cat "$out/profile-summary.txt")"
grep -qE '^  naive +40 s$' "$tmp/profile/estimate.txt" || fail "profile: no plan for it: $(cat "$tmp/profile/estimate.txt")"
plan=$(bash "$check" profile "$build" /dev/null --device cuda:0 --plan 2>/dev/null)
for s in register_tiled:40 warp_tiled:40 wmma:40 mma_sync:40 wgmma:40 cublas:40 l2_read:30 dram_copy:30; do
  grep -qE "^  ${s%%:*} +${s#*:} s$" <<<"$plan" || fail "profile: the default rungs on a GPU do not include ${s%%:*}: $plan"
done

# What the visit brought back becomes the baseline folder (here --out: a CPU has no GPU name): the
# numbers stage's files, the tests stage's run with counters in counters/, repeat's verdicts, and
# every stage's summary in PROVENANCE.md.
vb=$here/scripts/visit-baseline.sh
# The numbers stage's throttle run (no 8192³ GEMM on the CPU: its merged run stands in for one)
# goes into throttle/, and targets.md reads it.
mkdir -p "$tmp/repack" && tar -xJf "$out/numbers.tar.xz" -C "$tmp/repack" && mkdir -p "$tmp/repack/throttle" &&
  cp "$tmp/repack/baseline/results.json" "$tmp/repack/baseline/summary.md" "$tmp/repack/throttle/" &&
  tar -cJf "$out/numbers.tar.xz" -C "$tmp/repack" . || fail "could not add a throttle run to the numbers archive"
bash "$vb" "$out" --out "$tmp/committed" >/dev/null || fail "visit-baseline.sh failed"
[ -s "$tmp/committed/throttle/results.json.xz" ] && [ -s "$tmp/committed/throttle/summary.md" ] ||
  fail "visit-baseline: the numbers stage's throttle run is not in throttle/"
grep -q '`throttle/results.json`' "$tmp/committed/targets.md" || fail "visit-baseline: targets.md does not read throttle/"
for f in results.json.xz gbench.json roofline.svg report.html summary.md console.log PROVENANCE.md agreement.md agreement.json \
  ab.md ab.json counters/results.json.xz counters/summary.md example/results.json.xz example/summary.md ci-gpu.md \
  targets.md; do
  [ -s "$tmp/committed/$f" ] || fail "visit-baseline: no $f"
done
# Its results files are stored as xz, and only so (scripts/compress-results.sh), and roofbench reads them as they are.
[ ! -e "$tmp/committed/results.json" ] && [ ! -e "$tmp/committed/counters/results.json" ] ||
  fail "visit-baseline: a plain results.json beside its xz"
"$roofbench" compare "$tmp/committed" "$tmp/numbers/baseline" >/dev/null 2>&1 || fail "compare of the xz baseline and the stage's run: exit $?"
grep -q '^| suite wall time / time in timed samples | [0-9.]*× ' "$tmp/committed/targets.md" ||
  fail "visit-baseline: targets.md does not read the run: $(cat "$tmp/committed/targets.md")"
grep -q '^| `roofbench ab` of the binary against itself (A/A): false verdicts | [0-9]* (.*; 5 rounds) ' \
  "$tmp/committed/targets.md" || fail "visit-baseline: targets.md does not read the A/A: $(cat "$tmp/committed/targets.md")"
for st in smoke tests numbers repeat profile; do
  [ "$(grep -c "^## The $st stage" "$tmp/committed/PROVENANCE.md")" -eq 1 ] ||
    fail "visit-baseline: PROVENANCE.md has not one section of the $st stage"
done
grep -q "^device: cpu, .*commit $commit" "$tmp/committed/PROVENANCE.md" || fail "visit-baseline: no stage's device in PROVENANCE.md"
# The device section: its power limit and where power and energy came from, said even when unread.
[ "$(grep -c '^## The device$' "$tmp/committed/PROVENANCE.md")" -eq 1 ] || fail "visit-baseline: not one device section"
grep -q '^- power limit: not recorded$' "$tmp/committed/PROVENANCE.md" || fail "visit-baseline: no power-limit line"
grep -q '^- power and energy: \(RAPL: \|unavailable: \)' "$tmp/committed/PROVENANCE.md" ||
  fail "visit-baseline: no power and energy line: $(grep -A5 '^## The device' "$tmp/committed/PROVENANCE.md")"
xz -dc "$tmp/committed/results.json.xz" | cmp -s - "$tmp/numbers/baseline/results.json" ||
  fail "visit-baseline: results.json.xz is not the numbers stage's results.json"

# A later visit's stages add to that folder: its repeat stage takes the place of the first one's
# (one section, its verdicts), and the numbers stage's files stay as they were.
later=$tmp/later
mkdir -p "$later"
cp "$out/repeat.tar.xz" "$out/repeat-summary.txt" "$later/"
sum_before=$(cat "$tmp/committed/results.json.xz" "$tmp/committed/counters/results.json.xz" | md5sum)
bash "$vb" "$later" --out "$tmp/committed" >/dev/null || fail "visit-baseline.sh of a later visit's repeat stage failed"
[ "$(grep -c '^## The repeat stage' "$tmp/committed/PROVENANCE.md")" -eq 1 ] || fail "visit-baseline: two repeat sections"
[ "$(grep -c '^## The numbers stage' "$tmp/committed/PROVENANCE.md")" -eq 1 ] || fail "visit-baseline: the numbers section went"
[ "$(cat "$tmp/committed/results.json.xz" "$tmp/committed/counters/results.json.xz" | md5sum)" = "$sum_before" ] ||
  fail "visit-baseline: a later repeat stage changed the baseline's results"
# ... but not from another device, and not where no numbers stage made a baseline: refused, nothing written.
printf 'smoke: passed (in 9 s of 300 s)\ndevice: NVIDIA H200, GPU-0, 580.159.04; roofbench 0.1.0 commit %s\n' "$commit" \
  >"$later/smoke-summary.txt"
snapshot() { (cd "$tmp/committed" && find . -type f -exec md5sum {} + | sort); }
before=$(snapshot)
bash "$vb" "$later" --out "$tmp/committed" >"$tmp/vb.out" 2>&1 && fail "visit-baseline took a stage of another device"
grep -q "the smoke stage ran on 'NVIDIA H200', the baseline is of '" "$tmp/vb.out" || fail "visit-baseline: $(cat "$tmp/vb.out")"
[ "$(snapshot)" = "$before" ] || fail "visit-baseline: a refused visit changed the folder"
rm "$later/smoke-summary.txt"
# A stage that was refused ran nothing: it is left out, saying so, and takes nothing away.
refused_out=$tmp/refused-visit
bash "$check" tests "$tmp/roofbench.tar.xz" "$refused_out" --device cpu --budget 30 --limit 60 >/dev/null 2>&1
[ $? -eq 2 ] || fail "the refused tests stage did not exit 2"
bash "$vb" "$refused_out" --out "$tmp/committed" >"$tmp/vb.out" 2>&1 && fail "visit-baseline took only a refused stage"
grep -q 'the tests stage left out: it was refused' "$tmp/vb.out" || fail "visit-baseline: $(cat "$tmp/vb.out")"
[ "$(snapshot)" = "$before" ] || fail "visit-baseline: a refused stage changed the folder"
bash "$vb" "$later" --out "$tmp/nothing-here" >"$tmp/vb.out" 2>&1 && fail "visit-baseline added to a folder with no baseline"
grep -q 'a numbers stage makes it first' "$tmp/vb.out" && [ ! -e "$tmp/nothing-here" ] || fail "visit-baseline: $(cat "$tmp/vb.out")"

# The sanitize stage (scripts/sanitize.sh, a call of its own with the time a visit has left): its
# logs go into sanitizer.log beside repeat's, each tool's in place of its earlier one. One whose
# summary names no device is left out, unless --device-from names a stage of the same call.
san=$tmp/sanitize-visit
sanitize_stage() {  # LOG_TEXT: a sanitize stage's archive and summary in $san, as sanitize.sh leaves them
  rm -rf "$san" && mkdir -p "$san/x"
  printf 'sanitize: passed (in 28 s of 240 s)\n  PASS       20s  racecheck        [  PASSED  ] 89 tests.; see racecheck.log\n' \
    >"$san/x/summary.txt"
  printf '%s\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n' "$1" >"$san/x/racecheck.log"
  tar -cJf "$san/sanitize.tar.xz" -C "$san/x" summary.txt racecheck.log && cp "$san/x/summary.txt" "$san/sanitize-summary.txt"
  rm -r "$san/x"
}
sanitize_stage "first racecheck"
before=$(snapshot)
bash "$vb" "$san" --out "$tmp/committed" >"$tmp/vb.out" 2>&1 && fail "visit-baseline took a sanitize stage that names no device"
grep -q 'the sanitize stage left out: cannot tell which device' "$tmp/vb.out" || fail "visit-baseline: $(cat "$tmp/vb.out")"
[ "$(snapshot)" = "$before" ] || fail "visit-baseline: a sanitize stage of no device changed the folder"
cp "$out/smoke-summary.txt" "$san/"
bash "$vb" "$san" --out "$tmp/committed" --device-from sanitize=smoke >"$tmp/vb.out" 2>&1 ||
  fail "visit-baseline --device-from sanitize=smoke: $(cat "$tmp/vb.out")"
grep -qx '==== racecheck (the sanitize stage)' "$tmp/committed/sanitizer.log" && grep -q 'first racecheck' "$tmp/committed/sanitizer.log" ||
  fail "visit-baseline: the sanitize stage's racecheck log is not in sanitizer.log: $(cat "$tmp/committed/sanitizer.log")"
grep -q 'whose device it takes (--device-from)' "$tmp/committed/PROVENANCE.md" ||
  fail "visit-baseline: PROVENANCE.md does not say where the sanitize stage's device came from"
sanitize_stage "second racecheck"
cp "$out/smoke-summary.txt" "$san/"
bash "$vb" "$san" --out "$tmp/committed" --device-from sanitize=smoke >/dev/null 2>&1 || fail "visit-baseline: a second sanitize stage"
[ "$(grep -c '^==== racecheck' "$tmp/committed/sanitizer.log")" -eq 1 ] && grep -q 'second racecheck' "$tmp/committed/sanitizer.log" &&
  ! grep -q 'first racecheck' "$tmp/committed/sanitizer.log" || fail "visit-baseline: a later racecheck log did not replace the first"
[ "$(grep -c '^## The sanitize stage' "$tmp/committed/PROVENANCE.md")" -eq 1 ] || fail "visit-baseline: two sanitize sections"
xz -dc "$tmp/committed/results.json.xz" | cmp -s - "$tmp/numbers/baseline/results.json" ||
  fail "visit-baseline: a sanitize stage changed the results"

# sanitize.sh names the device and the build first, as the stages do, so that its logs can be
# placed (a stand-in compute-sanitizer here: there is no GPU for the real one).
mkdir -p "$tmp/fake-sanitizer"
printf '#!/bin/sh\necho "========= ERROR SUMMARY: 0 errors"\n' >"$tmp/fake-sanitizer/compute-sanitizer"
printf '#!/bin/sh\nexit 9\n' >"$tmp/fake-sanitizer/nvidia-smi"  # a GPU box's nvidia-smi would name its GPU
chmod +x "$tmp/fake-sanitizer/compute-sanitizer" "$tmp/fake-sanitizer/nvidia-smi"
PATH=$tmp/fake-sanitizer:$PATH bash "$here/scripts/sanitize.sh" "$build" "$tmp/san-out" --limit 60 racecheck >/dev/null 2>&1
san_device=$(sed -n 2p "$tmp/san-out/sanitize-summary.txt")
[[ $san_device == "device: cuda:0 (nvidia-smi did not name it); roofbench "*"commit $commit"* ]] ||
  fail "sanitize.sh: no device line second in its summary: $(cat "$tmp/san-out/sanitize-summary.txt")"

# The baseline folder follows the GPU that came: H100 or H200.
mkdir -p "$tmp/fakebin"
source "$here/scripts/env.sh"
for name in "NVIDIA H100 80GB HBM3:h100" "NVIDIA H200:h200" "NVIDIA H100 PCIe:h100"; do
  printf '#!/bin/sh\necho "%s"\n' "${name%%:*}" >"$tmp/fakebin/nvidia-smi"
  chmod +x "$tmp/fakebin/nvidia-smi"
  [ "$(PATH=$tmp/fakebin:$PATH gpu_slug cuda:0)" = "${name##*:}" ] || fail "gpu_slug of '${name%%:*}' is not ${name##*:}"
done

# Each stage writes its two files into OUT and nothing else: a device call brings back at most 8,
# so four stages fit one call.
want=$(for st in smoke tests numbers repeat profile; do echo "$st-summary.txt"; echo "$st.tar.xz"; done | sort)
[ "$(ls "$out" | sort)" = "$want" ] || fail "OUT after every stage holds $(ls "$out" | tr '\n' ' '), not two files a stage"

# Stages back to back in one call (scripts/visit-stages.sh): each given what is left of the call,
# one with under a minute left not run and said, the exit 1 for it; bad arguments refused.
vs_out=$tmp/vs-out
mkdir -p "$vs_out"
OUT=$vs_out ARCHIVE=$build DEVICE_ARGS="--device cpu" bash "$here/scripts/visit-stages.sh" 150 smoke:60 \
  "profile:150:--xcheck ^gemm/naive/fp32/M:256/" tests:50 >"$tmp/vs.stdout" 2>&1
vs_rc=$?
[ "$vs_rc" -eq 1 ] || fail "visit-stages: exit $vs_rc, expected 1 (a stage not run): $(cat "$tmp/vs.stdout")"
grep -qE '^=== visit-stages: smoke --limit 60 \(at [0-9]+ s\)$' "$tmp/vs.stdout" || fail "visit-stages: smoke not given its cap: $(cat "$tmp/vs.stdout")"
# profile's cap is over what is left: it gets the rest of the 150 s, less the 10 kept, from when it starts.
vs_line=$(grep -E '^=== visit-stages: profile --limit [0-9]+ \(at [0-9]+ s\)$' "$tmp/vs.stdout") ||
  fail "visit-stages: profile not run: $(cat "$tmp/vs.stdout")"
vs_lim=$(sed -E 's/.*--limit ([0-9]+) .*/\1/' <<<"$vs_line") vs_at=$(sed -E 's/.*\(at ([0-9]+) s\)/\1/' <<<"$vs_line")
[ "$vs_lim" -eq $((140 - vs_at)) ] || fail "visit-stages: profile got $vs_lim s at $vs_at s, not what was left ($((140 - vs_at)))"
grep -qE '^visit-stages: tests NOT RUN: [0-9]+ s for it \(of its 50\), under a minute$' "$tmp/vs.stdout" ||
  fail "visit-stages: the stage with too little time left was not said: $(cat "$tmp/vs.stdout")"
grep -q '^smoke: passed' "$tmp/vs.stdout" || fail "visit-stages: smoke's summary not printed: $(cat "$tmp/vs.stdout")"
[ "$(ls "$vs_out" | sort | tr '\n' ' ')" = "profile-summary.txt profile.tar.xz smoke-summary.txt smoke.tar.xz " ] ||
  fail "visit-stages: OUT holds $(ls "$vs_out")"
OUT=$vs_out bash "$here/scripts/visit-stages.sh" 80 smoke:60 smoek:60 >"$tmp/vs-bad.stdout" 2>&1
[ $? -eq 2 ] && ! grep -q '^=== visit-stages: smoke' "$tmp/vs-bad.stdout" ||
  fail "visit-stages: a misspelt stage was not refused before the first ran: $(cat "$tmp/vs-bad.stdout")"

echo "gpu-check dress rehearsal: $(ls "$out" | wc -l) files from 5 stages (refused, fitted, stopped and merged on the way)"
