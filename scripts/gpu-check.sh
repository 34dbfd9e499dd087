#!/usr/bin/env bash
# One stage of a GPU visit, run on the GPU machine from an archive made here by
# scripts/pack-build.sh. A session that is lent a GPU has 15 minutes of device time, the machine's
# start (a minute or two) included, each command at most 10 minutes, at most 8 files brought back:
# so a visit is two stages, one command each, back to back on one machine (the first visit:
# smoke, then numbers; the next: tests, then repeat; docs/gpu-visit.md). Each stage ends on its
# own within its limit (unpacking included), every step under `timeout`, and leaves exactly two
# files, OUT/STAGE.tar.xz (every log and result) and OUT/STAGE-summary.txt (the GPU and commit,
# what passed, what failed, where to look), the summary printed last.
#
#   scripts/gpu-check.sh STAGE ARCHIVE|BUILD_DIR OUT [options] [-- RUN-OPTIONS...]
#
#   smoke    nvidia-smi and ldd of every binary; the device test; the wgmma tests alone first (if
#            they fail or hang, every later step leaves wgmma out); the CUPTI counter tests; last,
#            with the time that is left, every other GPU test of test_cuda_kernels (each kernel
#            against its reference at its test sizes, the SASS and graph checks)
#   numbers  the full sizes: the ceilings once, then the kernels in parts (--parts; by default
#            GEMM FP32, GEMM 16-bit, the lesson families, and last the lessons checked at 2^28
#            elements: fusion, lowprec, recompute) each with --ceilings-from the
#            ceilings and a time limit of its own, then `roofbench merge` into baseline/, the
#            folder reports/baselines/<gpu>/ is made from (scripts/visit-baseline.sh). Without
#            --budget, each benchmark samples for the largest budget (0.75 s at most, 0.2 s at
#            least) at which the estimate fits the limit. On a GPU every run has --energy-pass 1.2,
#            so that every benchmark, ceiling or kernel, gets its joules per run; last, the 8192³
#            BF16 GEMMs sampled 3 s each (throttle/: a sample the power cap slowed is flagged)
#   tests    nvidia-smi; `roofbench run --device all` (a folder per GPU); `roofbench run --quick
#            --counters` (every benchmark's CUPTI counters); a BF16 wgmma GEMM and SAXPY of that
#            run again under Nsight Compute, and `roofbench crosscheck` of the two; the example
#            project's kernels (examples/fused_op, its own binary) on that run's ceilings; and
#            scripts/ci-gpu.sh, SAXPY against that run
#   repeat   two quick runs compared (repeatability); `roofbench ab` of the binary against itself
#            over a few kernels (an A/A: any FASTER or SLOWER is a false verdict); compute-sanitizer
#            memcheck over every CUDA kernel at its test sizes with the time that is left, then
#            racecheck, initcheck and synccheck while time allows
#   profile  Nsight Compute's full set of sections on each rung that misses its target (issue 51:
#            profile before a kernel is changed), at the size the target is judged at: a report
#            per benchmark (profile/<name>.ncu-rep) and its details as text (profile/<name>.txt)
#   python   the Python package (issue 46): its extension built there for the machine's Python
#            against the archive (scripts/build-python-ext.sh); tests/python/gpu_visit.py's run
#            (torch and Triton kernels, cuBLAS's BF16 row beside them, with counters, on the
#            ceilings measured in that run) and its checks; the kernels once more under Nsight
#            Compute (gpu_visit.py --profile), and each beside ncu's numbers (--crosscheck)
#
# Options:
#   --device D     the device (default cuda:0; cpu for the dress rehearsal in CI)
#   --limit S      the stage's time limit in seconds, unpacking included, at most 570 (default:
#                  smoke 300 and tests 360, the first command of a visit; numbers, repeat and python
#                  420: pass the device time left less a minute, see docs/gpu-visit.md)
#   --plan         print the stage's estimate and stop, writing nothing (no GPU needed: it plans
#                  from the registry; scripts/update-readme.sh puts it in the README)
#   --force        run even when the estimate exceeds the limit (a step that runs out of time
#                  is stopped: a run stopped so leaves its partial results)
#   --skip REGEX   benchmarks and tests left out everywhere (e.g. wgmma, after it failed in smoke)
#   --budget S     seconds a benchmark may sample (numbers: fitted to the limit, see above; the
#                  quick runs of tests and repeat: 0.2; python: 0.5)
#   --quick        numbers and python: quick sizes instead of the full ones (the dress rehearsal)
#   --parts 'NAME=REGEX;...'   numbers: how the kernels are split into parts
#   --xcheck REGEX tests: the benchmarks Nsight Compute profiles (default a BF16 wgmma GEMM and
#                  SAXPY at their quick sizes; with wgmma skipped, cuBLAS BF16); profile: the
#                  benchmarks it profiles (default the rungs of issue 51's targets)
#   after --       options for every `roofbench run` (e.g. --filter, for the rehearsal)
#
# Before a stage starts it prints its estimate (from the registry: benchmarks x budget plus
# reference checks, from `roofbench run --dry-run`; tests x an allowance each) and refuses a
# stage whose estimate exceeds its limit unless --force. The last step of smoke (the kernel tests)
# and of repeat (memcheck) takes the time that is left (at most half again its allowance, as every
# step); the stage is refused when that leaves it less than a minute (or its whole allowance, when
# smaller).
# Exit: 0 every step passed; 1 a step failed or ran out of time (the summary says which); 2 bad
# arguments or a refused stage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/gpu-lib.sh"

usage() { sed -n '2,60p' "$0" >&2; exit 2; }
[ $# -ge 3 ] || usage
command_line="scripts/gpu-check.sh $*"  # as given, for PROVENANCE.md
what=$1 from=$2 out=$3  # (not "stage": unpack-build.sh sets that)
shift 3
case $what in smoke | tests | numbers | repeat | profile | python) ;; *) echo "gpu-check: unknown stage '$what'" >&2; usage ;; esac
device=cuda:0 limit="" force=0 skip="" budget="" quick=0 parts="" xcheck="" plan_only=0 run_args=()
while (($#)); do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --force) force=1; shift ;;
    --plan) plan_only=1; shift ;;
    --skip) skip=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --parts) parts=$2; shift 2 ;;
    --xcheck) xcheck=$2; shift 2 ;;
    --) shift; run_args=("$@"); break ;;
    -h | --help) usage ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; usage ;;
  esac
done
# The first command of a visit (smoke, tests) and the second (numbers, repeat), which gets what
# the first and the machine's start left of the 15 minutes (docs/gpu-visit.md).
[ -n "$limit" ] || case $what in smoke) limit=300 ;; tests) limit=360 ;; *) limit=420 ;; esac
[ "$what" != python ] || ((${#run_args[@]} == 0)) ||
  { echo "gpu-check: the python stage takes no run options after -- (tests/python/gpu_visit.py runs it)" >&2; exit 2; }
[[ $limit =~ ^[0-9]+$ ]] || { echo "gpu-check: --limit takes whole seconds" >&2; exit 2; }
# A device-tool command runs at most 600 s, and its timeout_s must leave the stage time to end.
[ "$limit" -le 570 ] || { echo "gpu-check: --limit $limit: at most 570 s (a command runs at most 600 s; give timeout_s the limit + 30)" >&2; exit 2; }

if [ "$plan_only" -eq 1 ]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi  # writes nothing
ev_begin "$out" "$what" "$limit"
# On a GPU, tests that all skip for want of one checked nothing: such a step fails (ev_step).
[[ $device == cuda:* ]] && EV_EXPECT_GPU=1

# ---------------------------------------------------------------- the binaries
if [ -d "$from" ]; then
  bin=$from
  roofbench=$from/roofbench
  example_bench=$from/examples/fused_op_bench  # its target: example_fused_op_bench
  tests_dir=$from/tests
  manifest=$from/gpu-tests.txt
else
  source "$here/unpack-build.sh"
  unpack_build "$from" >"$EV_WORK/unpack.log" 2>&1
  unpacked=$?
  # The unpacked archive (about 100 MB) goes at the end, whatever the end.
  trap 'rm -rf "$stage"; [ "$plan_only" -eq 0 ] || rm -rf "$out"' EXIT
  roofbench=$bin/roofbench
  example_bench=$bin/fused_op_bench
  tests_dir=$bin
  manifest=$stage/roofbench/gpu-tests.txt  # $stage: the unpack folder
  [ $unpacked -eq 0 ] || {
    ev_refuse "the archive does not unpack with its libraries (exit $unpacked): see unpack.log"
    ev_end
    exit 2
  }
fi
[ -x "$roofbench" ] || { ev_refuse "no roofbench in $from"; ev_end; exit 2; }

# The machine and the build, first in the summary (ev_device_note, scripts/gpu-lib.sh): the
# stages of a baseline may come from two visits, and scripts/visit-baseline.sh takes a stage only
# from the GPU model of the baseline.
[ "$plan_only" -eq 1 ] || ev_device_note "$device" "$roofbench"
gpu_tests=()
[ -f "$manifest" ] && while read -r t; do [ -n "$t" ] && gpu_tests+=("$t"); done <"$manifest"
has_test() { [ -x "$tests_dir/$1" ]; }

skip_args=()
[ -n "$skip" ] && skip_args=(--skip "$skip")
# A gtest filter that also leaves out what --skip names (by its words: "wgmma").
gtest_filter() { ev_gtest_filter "$1" "$skip"; }

# ---------------------------------------------------------------- estimates
# dry_estimate run|ceilings OPTIONS...: the seconds `roofbench --dry-run` estimates ("" when it fails)
dry_estimate() { dry_estimate_of "$roofbench" "$@"; }
# dry_estimate_of BINARY run|ceilings OPTIONS...: the same for a binary built on roofbench's library
dry_estimate_of() {
  local bin=$1 cmd=$2
  shift 2
  "$bin" "$cmd" --dry-run "$@" 2>/dev/null | sed -n 's/^estimate: \([0-9]*\) s.*/\1/p'
}
# dry_names OPTIONS...: the kernels a run would take, without the ceilings it measures itself
dry_names() { "$roofbench" run --dry-run "$@" 2>/dev/null | sed -n '/^  \[[0-9]*\] ceiling\//d; s/^  \[[0-9]*\] //p'; }
test_count() {  # BINARY FILTER
  has_test "$1" || { echo 0; return; }
  "$tests_dir/$1" --gtest_list_tests --gtest_filter="$2" 2>/dev/null | grep -c '^  '
}
estimate_lines=()
estimate_total=0
estimate_why=""  # said after the total (the numbers stage's fitted budget)
unpack_s=0
[ -d "$from" ] || unpack_s=$(ev_elapsed) estimate_total=$unpack_s  # unpacking, done
plan() {  # NAME SECONDS [WHY]
  estimate_lines+=("$(printf '  %-16s %5s s%s' "$1" "$2" "${3:+ ($3)}")")
  estimate_total=$((estimate_total + $2))
}
# The stage's last step, which takes the time that is left: the kernel
# tests of smoke, memcheck in repeat. Their allowances may be more than the stage has left once
# its other steps are planned: a step
# that runs out is stopped (TIMEOUT), and its log still lists every test that finished.
fill_name="" fill_allowance=0
kFillAtLeast=60  # the least a fill step is given (or its whole allowance, when smaller)
plan_fill() { fill_name=$1 fill_allowance=$2; }  # NAME ALLOWANCE
fill_want() { echo $((fill_allowance * 3 / 2 + 30)); }  # its cap, half again its allowance as every step's
refuse_or_go() {
  # Planning, done: the dry runs open the device (on a GPU, seconds each).
  [ "$plan_only" -eq 1 ] || plan planning $(($(ev_elapsed) - unpack_s))
  local short=0 least=0
  if [ -n "$fill_name" ]; then
    local left=$((limit - estimate_total - EV_RESERVE_S))
    least=$kFillAtLeast
    [ "$fill_allowance" -lt "$least" ] && least=$fill_allowance
    [ "$left" -lt "$least" ] && short=1 left=$least  # refused below
    if [ "$fill_allowance" -le "$left" ]; then
      plan "$fill_name" "$fill_allowance"
    else
      plan "$fill_name" "$left" "the time left; its allowance is ${fill_allowance} s"
    fi
  fi
  {
    echo "gpu-check $what: estimate ${estimate_total} s of the ${limit} s limit$([ -d "$from" ] || echo " (unpacking $(ev_elapsed) s)")${estimate_why:+ ($estimate_why)}:"
    printf '%s\n' "${estimate_lines[@]}"
  } | tee "$EV_WORK/estimate.txt" >&2
  if [ "$plan_only" -eq 1 ]; then
    cat "$EV_WORK/estimate.txt"
    rm -rf "$EV_WORK"
    exit 0
  fi
  if { [ "$estimate_total" -gt "$limit" ] || [ $short -eq 1 ]; } && [ "$force" -eq 0 ]; then
    if [ "$estimate_total" -gt "$limit" ]; then
      ev_refuse "the estimate (${estimate_total} s) exceeds the limit (${limit} s); lower the budget, split the stage, or --force"
    else
      ev_refuse "the other steps leave ${fill_name} less than its least ${least} s (with it: ${estimate_total} s of the ${limit} s limit, ${EV_RESERVE_S} s kept for packing); raise the limit, or --force"
    fi
    local l
    for l in "${estimate_lines[@]}"; do ev_note "estimate:$l"; done
    ev_end
    exit 2
  fi
  ev_note "estimate ${estimate_total} s of the ${limit} s limit"
}
# Allowances: seconds per GPU test (a CUDA context, the kernels at their test sizes, a few timed
# samples), and per test under compute-sanitizer. On an H200 (2026-11-27, the steps' times in
# reports/baselines/h200/PROVENANCE.md) the GPU tests took 0.03 s (kernels) to 1.7 s (counters)
# each, and each sanitizer tool 0.03 s (synccheck) to 0.22 s (racecheck) a test. 2 s a GPU test
# sizes smoke's estimate (its steps but the last have fixed caps); 1 s a sanitizer test, at least
# 4x what one took, also caps racecheck, initcheck and synccheck in repeat (99 s for 89 tests,
# against racecheck's 20 s). Without a GPU (the dress rehearsal) the tests skip at once.
kTestAllowance=2
kSanitizerTest=1
[[ $device == cuda:* ]] || kTestAllowance=0 kSanitizerTest=0

# ---------------------------------------------------------------- stages
env_step() {
  ev_step env 60 bash -c '
    nvidia-smi -L 2>/dev/null
    echo "== nvidia-smi"; nvidia-smi || echo "(no nvidia-smi)"
    echo "== nvcc"; nvcc --version || echo "(no nvcc)"
    echo "== LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
    for b in "$@"; do echo "== ldd $b"; ldd "$b"; done' _ "$roofbench" "${gpu_tests[@]/#/$tests_dir/}"
}

run_smoke() {
  local wgmma_filter='*wgmma*' skip_wgmma=0 rest
  rest=$(gtest_filter '-*wgmma*')  # the kernel tests after the wgmma ones, which run alone, first
  plan env 10
  plan device-test $((kTestAllowance * $(test_count test_cuda_device "$(gtest_filter '*')") + 5))
  plan wgmma-tests $((kTestAllowance * $(test_count test_cuda_kernels "$wgmma_filter") + 5))
  plan counter-tests $((kTestAllowance * $(test_count test_cupti_counters "$(gtest_filter '*')") + 5))
  plan_fill kernel-tests $((kTestAllowance * $(test_count test_cuda_kernels "$rest") + 5))
  refuse_or_go

  # Each step before the kernel tests is capped (its allowance two to four times over), so that
  # one that hangs leaves them most of the stage: a wgmma that traps (10 s) or a stuck CUPTI pass.
  env_step
  if has_test test_cuda_device; then
    ev_step device-test 60 "$tests_dir/test_cuda_device" --gtest_filter="$(gtest_filter '*')"
  else
    ev_skip device-test "no test_cuda_device in the archive (a build without CUDA)"
  fi
  if ! has_test test_cuda_kernels; then
    ev_skip wgmma-tests "no test_cuda_kernels in the archive"
  elif [[ -n $skip && wgmma =~ $skip ]]; then
    ev_skip wgmma-tests "left out by --skip '$skip'"
  elif ! ev_step wgmma-tests 90 "$tests_dir/test_cuda_kernels" --gtest_filter="$wgmma_filter"; then
    # A faulting or hanging wgmma must not take the rest down: every later step leaves it out.
    skip_wgmma=1
    skip=${skip:+$skip|}wgmma
    skip_args=(--skip "$skip")
    ev_note "the wgmma tests failed: every later step leaves wgmma out (--skip '$skip')"
  fi
  if has_test test_cupti_counters; then
    ev_step counter-tests 60 "$tests_dir/test_cupti_counters" --gtest_filter="$(gtest_filter '*')"
  else
    ev_skip counter-tests "no test_cupti_counters in the archive"
  fi
  # Last, with the time that is left (a TIMEOUT's log still lists every test that finished).
  if has_test test_cuda_kernels; then
    ev_step kernel-tests "$(fill_want)" "$tests_dir/test_cuda_kernels" --gtest_filter="$rest"
  else
    ev_skip kernel-tests "no test_cuda_kernels in the archive"
  fi
  [ $skip_wgmma -eq 0 ] || ev_note "next stages: pass --skip '$skip'"
}

# The ceilings the --device all run leaves out: all but the DRAM read, copy and update and the
# FP32 FMA ones (its folders are looked at for what they hold and whose they are, not their
# roofs; but a kernel above the roofs kept is refused, and on a CPU read-only is no roof for SAXPY).
lean_skip="ceiling/(dram_(write|memcpy|triad|copy_bulk)|l2_|smem_|fp64|fp16|bf16|math_|mufu_|pcie_|launch_)"

run_tests() {
  # GPUs that --device all will see: CUDA_VISIBLE_DEVICES' entries when set, else nvidia-smi's.
  local gpus=0 budget_s=${budget:-0.2} q_est
  plan env 10
  if [[ $device == cuda:* ]]; then
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
      gpus=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c . || true)
    else
      gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    fi
    plan device-all $((30 * (gpus > 0 ? gpus : 1) + 10))
  fi
  q_est=$(dry_estimate run --device "$device" --quick --counters --budget "$budget_s" "${skip_args[@]}" \
    "${run_args[@]}")
  [ -n "$q_est" ] || { ev_refuse "roofbench run --dry-run failed: see its output"; ev_end; exit 2; }
  plan quick-run "$q_est"
  xcheck_plan
  # The example project's kernels (its binary, packed beside roofbench) on the quick run's
  # ceilings, and ci-gpu.sh as a GPU runner runs it: SAXPY against the quick run, few ceilings.
  local ex_est="" ci_est ci_args=(--device "$device" --quick --filter '^stream/saxpy/' --skip "$lean_skip${skip:+|$skip}")
  local ex_args=(--device "$device" --quick --budget "$budget_s" --no-builtin --ceilings-from "$EV_WORK/quick-run")
  [ -x "$example_bench" ] && ex_est=$(dry_estimate_of "$example_bench" run "${ex_args[@]}" "${skip_args[@]}")
  [ -n "$ex_est" ] && plan example "$ex_est"
  ci_est=$(dry_estimate run "${ci_args[@]}")
  [ -n "$ci_est" ] || { ev_refuse "roofbench run --dry-run of ci-gpu.sh's run failed"; ev_end; exit 2; }
  plan ci-gpu $((ci_est + 5))
  refuse_or_go

  env_step
  # `run --device all` on the GPUs of this machine (issue: fleets): one process per visible GPU,
  # each pinned with CUDA_VISIBLE_DEVICES, each writing <host>-gpu<i>-<uuid>/. Then a folder per
  # GPU, each a whole CUDA results file of the GPU its name says (its device.uuid), no two alike.
  if [[ $device == cuda:* ]]; then
    ev_step device-all $((90 * (gpus > 0 ? gpus : 1) + 30)) bash -c '
      set -e
      "$1" run --device all --quick --budget 0.1 --filter "^stream/saxpy/" --skip "$4" --out "$2"
      python3 "$5" "$2" "$3"
' _ "$roofbench" "$EV_WORK/device-all" "$gpus" "$lean_skip${skip:+|$skip}" \
      "$here/check-device-all.py"
  else
    ev_skip device-all "the device is cpu: --device all runs once there (tests/cli)"
  fi
  # Every benchmark with CUPTI's counters (the hierarchical roofline, the counters' checks), the
  # ceilings measured too: its launch ceilings, with CUPTI's hooks in the process, stand beside
  # the repeat stage's quick runs without them.
  ev_step quick-run $((q_est * 3 / 2 + 30)) "$roofbench" run --device "$device" --quick --counters \
    --budget "$budget_s" --out "$EV_WORK/quick-run" "${skip_args[@]}" "${run_args[@]}"
  xcheck_steps
  if [ ! -f "$EV_WORK/quick-run/results.json" ]; then
    ev_skip example "the quick run with counters wrote no results: no ceilings to place it on"
    ev_skip ci-gpu "the quick run with counters wrote no results: no baseline to compare with"
    return
  fi
  if [ -z "$ex_est" ]; then
    ev_skip example "no example binary (fused_op_bench) in $from: scripts/pack-build.sh packs it"
  else
    ev_step example $((ex_est * 3 / 2 + 30)) "$example_bench" run "${ex_args[@]}" --out "$EV_WORK/example" \
      "${skip_args[@]}"
  fi
  # Exit 1 is compare's SLOWER (against one quick run, noise) or a failed kernel: DIFFER, not a
  # failed step (its detail line counts the failed ones). ci-gpu.sh runs from the source tree's root.
  EV_DIFFER_OK=1 ev_step ci-gpu $((ci_est * 3 / 2 + 30)) env ROOFBENCH_BIN="$(realpath "$roofbench")" \
    bash "$here/ci-gpu.sh" --skip-build "${ci_args[@]}" --baseline "$EV_WORK/quick-run" --out "$EV_WORK/ci-gpu"
}

# The parts of the kernels' run: by family, GEMM split by precision (its largest family), and
# the lessons in two parts. The lessons whose checks make and check arrays of 2^28 elements on
# the host (fusion, lowprec, recompute: 4 to 10 s of host time a benchmark on the second H200)
# come last, in a part of their own: on that visit one lessons part ran them first (a run takes
# its benchmarks in the registry's order) and ran out of time before the launch, overlap,
# divergence and stream lessons, which scripts/targets.py judges, had started.
kLargeLessons='^(fusion|lowprec|recompute)$'
default_parts() {
  local backend=${device%%:*} fams f out=""
  fams=$("$roofbench" list | awk -v b="$backend" '$1 == b && $3 != "[ceiling]" {split($2, a, "/"); print a[1]}' | sort -u)
  local lessons="" large=""
  for f in $fams; do
    if [ "$f" = gemm ]; then
      out+="gemm-fp32=^gemm/[^/]+/fp32/;gemm-16bit=^gemm/[^/]+/(fp16|bf16)/;"
    elif [[ $f =~ $kLargeLessons ]]; then
      large+="${large:+|}$f"
    else
      lessons+="${lessons:+|}$f"
    fi
  done
  [ -n "$lessons" ] && out+="lessons=^($lessons)/;"
  [ -n "$large" ] && out+="big-lessons=^($large)/;"
  echo "${out%;}"
}

# The budget per benchmark of the numbers stage when --budget is not given: the largest in
# [kBudgetLeast, kBudgetMost] at which the stage's estimate fits its limit.
kBudgetMost=0.75
kBudgetLeast=0.2

run_numbers() {
  local budget_s=${budget:-$kBudgetMost} q=() names=() regexes=() p i est
  [ $quick -eq 1 ] && q=(--quick)
  # Issue 47: the 8192³ BF16 GEMMs sampled 3 s each more (every sample taken: the noise target
  # never stops them), long enough for the power cap to pull the clock down partway through, as
  # it did on the first H200 in its full run; a sample that ran throttled is flagged, with the
  # share. After the merge, into throttle/ beside the baseline (not in it: the same names as the
  # 16-bit part's), on its ceilings; not the launch ceilings every run measures for itself (they
  # would sample 3 s each too, and place no GEMM). No such GEMM on the CPU.
  local th_est="" th_args=(--device "$device" --filter '^gemm/(cublas|wgmma)/bf16/M:8192/' --budget 3
    --min-samples 100000 --ceilings-from "$EV_WORK/parts/ceilings" --skip "ceiling/launch_${skip:+|$skip}")
  [ "$device" = cpu ] || th_est=$(dry_estimate run "${th_args[@]}")
  [ -n "$parts" ] || parts=$(default_parts)
  IFS=';' read -r -a specs <<<"$parts"
  for p in "${specs[@]}"; do
    [ -n "$p" ] || continue
    names+=("${p%%=*}")
    regexes+=("${p#*=}")
  done
  # The estimates at a budget: the ceilings', then each part's ("-" for a part that matches no
  # benchmark of this device: 16-bit GEMMs on the CPU).
  # Energy: on a GPU an energy pass for each ceiling that no hold covers and for each kernel
  # whose samples are too brief for NVML's counter (it advances every 100 ms or so: 1.1 s a
  # benchmark), so that every benchmark has its joules per run and the reports can set each
  # kernel's work per joule beside the machine's best (docs/measurement.md). The plan charges
  # the passes, and the fitted budget makes room for them.
  local ceil_energy=()
  [ "$device" = cpu ] || ceil_energy=(--energy-pass 1.2)
  estimates_at() {
    local c=(--device "$device" --budget "$1" "${q[@]}" "${skip_args[@]}") e out
    out=$(dry_estimate ceilings "${c[@]}" "${ceil_energy[@]}")
    [ -n "$out" ] || return 1
    for i in "${!names[@]}"; do
      e=$(dry_estimate run "${c[@]}" "${ceil_energy[@]}" --ceilings-from "$EV_WORK/parts/ceilings" \
        --filter "${regexes[$i]}" "${run_args[@]}")
      out+=" ${e:--}"
    done
    echo "$out"
  }
  local -a ests lows
  local round_s; round_s=$(date +%s)
  read -r -a ests <<<"$(estimates_at "$budget_s")"
  round_s=$(($(date +%s) - round_s))  # a round of dry runs (on a GPU each opens the device)
  [ ${#ests[@]} -gt 0 ] || { ev_refuse "roofbench ceilings --dry-run failed"; ev_end; exit 2; }
  sum() { local t=0 x; for x in "$@"; do [ "$x" = - ] || t=$((t + x)); done; echo $t; }
  if [ -z "$budget" ]; then
    # What the benchmarks may take: the limit less what is spent, the merge, the planning still
    # to come (a second round of dry runs, as long as the first), the rounding up of each part's
    # estimate, and the packing.
    # (--plan leaves out what it took itself: the README's table is made from it, and must not
    # move with how long this machine took to plan it.)
    local spent=$(ev_elapsed)
    [ "$plan_only" -eq 0 ] || spent=0 round_s=0
    local avail=$((limit - spent - 15 - round_s - 5 - EV_RESERVE_S - ${th_est:-0})) most
    most=$(sum "${ests[@]}")
    if [ "$most" -gt "$avail" ]; then
      # The estimate is linear in the budget (each benchmark: budget, warm-up, overhead; the
      # checks do not depend on it): between the least and the most, the budget that fits.
      read -r -a lows <<<"$(estimates_at "$kBudgetLeast")"
      [ ${#lows[@]} -eq ${#ests[@]} ] || { ev_refuse "roofbench --dry-run at a ${kBudgetLeast} s budget failed"; ev_end; exit 2; }
      local least
      least=$(sum "${lows[@]}")
      if [ "$least" -ge "$avail" ]; then
        budget_s=$kBudgetLeast
        ests=("${lows[@]}")
        estimate_why="each benchmark's budget ${budget_s} s, the least, and still over"
        ev_note "budget: ${budget_s} s per benchmark, the least (at ${kBudgetMost} s the benchmarks' estimate is ${most} s, at ${budget_s} s ${least} s; ${avail} s are left for them)"
      else
        budget_s=$(awk -v lo="$kBudgetLeast" -v hi="$kBudgetMost" -v a="$avail" -v l="$least" -v m="$most" \
          'BEGIN { b = lo + (hi - lo) * (a - l) / (m - l); b = int(b * 20) / 20; printf "%.2f", (b < lo ? lo : b) }')
        for i in "${!ests[@]}"; do
          [ "${ests[$i]}" = - ] && continue
          ests[i]=$(awk -v lo="$kBudgetLeast" -v hi="$kBudgetMost" -v b="$budget_s" -v l="${lows[$i]}" \
            -v m="${ests[$i]}" 'BEGIN { e = l + (m - l) * (b - lo) / (hi - lo); printf "%d", (e == int(e) ? e : int(e) + 1) }')
        done
        estimate_why="each benchmark's budget ${budget_s} s, fitted"
        ev_note "budget: ${budget_s} s per benchmark, fitted to the ${limit} s limit (at ${kBudgetMost} s the benchmarks' estimate is ${most} s; ${avail} s are left for them)"
      fi
    fi
  fi
  local common=(--device "$device" --budget "$budget_s" "${q[@]}" "${skip_args[@]}")
  local ceil_est=${ests[0]}
  plan ceilings "$ceil_est"
  local -a part_est=() kept_names=() kept_regexes=()
  for i in "${!names[@]}"; do
    est=${ests[$((i + 1))]}
    if [ "$est" = - ]; then
      ev_note "part ${names[$i]} ('${regexes[$i]}') matches no benchmark of $device: left out"
      continue
    fi
    part_est+=("$est")
    kept_names+=("${names[$i]}")
    kept_regexes+=("${regexes[$i]}")
    plan "part-${names[$i]}" "$est"
  done
  names=("${kept_names[@]}")
  regexes=("${kept_regexes[@]}")
  plan merge 15
  [ -n "$th_est" ] && plan throttle "$th_est"
  refuse_or_go

  mkdir -p "$EV_WORK/parts" "$EV_WORK/baseline"
  ev_step ceilings $((ceil_est * 3 / 2 + 30)) \
    "$roofbench" ceilings "${common[@]}" "${ceil_energy[@]}" --out "$EV_WORK/parts/ceilings"
  [ -f "$EV_WORK/parts/ceilings/results.json" ] || { ev_note "no ceilings: the parts cannot run"; ev_end; exit 1; }
  for i in "${!names[@]}"; do
    # Each part may take half again its estimate, but leaves the merge its time, and the throttle
    # run its estimate (issue 47's evidence: a stopped part keeps what finished).
    local want=$((part_est[i] * 3 / 2 + 30)) left=$(($(ev_remaining) - 15 - ${th_est:-0}))
    [ "$left" -lt "$want" ] && want=$left
    ev_step "part-${names[$i]}" "$want" "$roofbench" run "${common[@]}" "${ceil_energy[@]}" \
      --ceilings-from "$EV_WORK/parts/ceilings" --filter "${regexes[$i]}" --out "$EV_WORK/parts/${names[$i]}" \
      "${run_args[@]}"
  done
  local have=("$EV_WORK/parts/ceilings")
  for n in "${names[@]}"; do [ -f "$EV_WORK/parts/$n/results.json" ] && have+=("$EV_WORK/parts/$n"); done
  ev_step merge 60 "$roofbench" merge "${have[@]}" --out "$EV_WORK/baseline"
  # The console logs of every part, in order, beside the merged results.
  for log in ceilings "${names[@]/#/part-}"; do
    [ -f "$EV_WORK/$log.log" ] && { echo "==== $log"; cat "$EV_WORK/$log.log"; }
  done >"$EV_WORK/baseline/console.log"
  provenance >"$EV_WORK/baseline/PROVENANCE.md"
  if [ -z "$th_est" ]; then
    ev_skip throttle "no 8192³ BF16 tensor GEMM on $device (or its dry run failed)"
  elif [ "$(($(ev_remaining) - 5))" -lt "$th_est" ]; then
    ev_skip throttle "$(($(ev_remaining) - 5)) s left, under its estimate (${th_est} s)"
  else
    local th_want=$((th_est * 3 / 2 + 30)) th_left=$(($(ev_remaining) - 5))
    [ "$th_left" -lt "$th_want" ] && th_want=$th_left
    ev_step throttle "$th_want" "$roofbench" run "${th_args[@]}" --out "$EV_WORK/throttle"
  fi
}

provenance() {
  echo "# Provenance"
  echo
  echo "Written by \`scripts/gpu-check.sh numbers\` on the GPU machine; every number here is the suite's own output."
  echo
  echo "- stage: \`$command_line\` (limit ${limit} s${skip:+, --skip '$skip'})"
  echo "- budget per benchmark: ${budget_s} s$([ -n "$budget" ] || echo " (fitted to the stage's limit: at most ${kBudgetMost} s)")"
  echo "- parts: \`$parts\` (each \`roofbench run --ceilings-from\` the ceilings part, merged by \`roofbench merge\`)"
  echo "- commit, command lines, device, driver and clocks: results.json (provenance, device, each part under provenance.merged_from)"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  if command -v nvidia-smi >/dev/null && [[ $device == cuda:* ]]; then
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,ecc.mode.current \
      --format=csv -i "$(ev_smi_index "$device")" 2>&1
    echo '```'
  fi
}

# The A/A of the repeat stage: `roofbench ab` of the binary against itself, kAbRounds rounds (the
# fewest at which ab gives a verdict other than UNSURE) over kernels of each kind (a tensor GEMM,
# a stream, a fused chain, a CUDA graph of launches; on the CPU the stream and the chain), the
# ceilings taken from quick-1. Run options after -- that name a --filter take its place.
kAbRounds=5
kAbFilter='^(gemm/cublas/bf16|stream/saxpy|fusion/sincos_fused|launch/graph)/'

run_repeat() {
  local budget_s=${budget:-0.2}
  local quick_args=(--device "$device" --quick --budget "$budget_s" "${skip_args[@]}")
  local q_est filter='Registry/CudaVariant.MatchesItsReferenceAtEveryTestSize/*:Registry/CudaGemmVariant.*'
  filter=$(gtest_filter "$filter")
  q_est=$(dry_estimate run "${quick_args[@]}" "${run_args[@]}")
  [ -n "$q_est" ] || { ev_refuse "roofbench run --dry-run failed"; ev_end; exit 2; }
  local ab_run=("${quick_args[@]}" --ceilings-from "$EV_WORK/runs/quick-1") ab_est a
  for a in "${run_args[@]}"; do [[ $a == --filter || $a == --filter=* ]] && break; done
  [[ ${a:-} == --filter || ${a:-} == --filter=* ]] || ab_run+=(--filter "$kAbFilter")
  ab_run+=("${run_args[@]}")
  ab_est=$(dry_estimate run "${ab_run[@]}")
  [ -n "$ab_est" ] || { ev_refuse "roofbench run --dry-run of the A/A failed"; ev_end; exit 2; }
  local sanitize_n
  sanitize_n=$(test_count test_cuda_kernels "$filter")
  plan quick-1 "$q_est"
  plan quick-2 "$q_est"
  plan compare 5
  plan ab $((2 * kAbRounds * ab_est + 5))
  # memcheck takes the time that is left (the CPU rehearsal skips it); the other tools follow
  # while a whole pass of theirs fits.
  [[ $device == cuda:* ]] && plan_fill memcheck $((sanitize_n * kSanitizerTest + 10))
  refuse_or_go

  ev_step quick-1 $((q_est * 3 / 2 + 30)) "$roofbench" run "${quick_args[@]}" --out "$EV_WORK/runs/quick-1" "${run_args[@]}"
  ev_step quick-2 $((q_est * 3 / 2 + 30)) "$roofbench" run "${quick_args[@]}" --out "$EV_WORK/runs/quick-2" "${run_args[@]}"
  EV_DIFFER_OK=1 ev_step compare 30 "$roofbench" compare "$EV_WORK/runs/quick-1" "$EV_WORK/runs/quick-2" \
    --markdown "$EV_WORK/agreement.md" --json "$EV_WORK/agreement.json"
  # Exit 1 is a verdict (SLOWER, or a failed round), not a failed step: DIFFER, as compare's.
  EV_DIFFER_OK=1 ev_step ab $((2 * kAbRounds * ab_est * 3 / 2 + 30)) "$roofbench" ab "$roofbench" "$roofbench" \
    --rounds "$kAbRounds" --seed 1 --out "$EV_WORK/ab" -- "${ab_run[@]}"

  local sanitizer
  sanitizer=$(ev_find_tool compute-sanitizer)
  if [[ $device != cuda:* ]]; then
    ev_skip memcheck "the device is $device: compute-sanitizer checks CUDA kernels"
  elif [ -z "$sanitizer" ]; then
    ev_fail memcheck "no compute-sanitizer on this machine (looked on PATH and in /usr/local/cuda*)"
  elif ! has_test test_cuda_kernels; then
    ev_skip memcheck "no test_cuda_kernels in the archive"
  else
    local tool extra
    for tool in memcheck racecheck initcheck synccheck; do
      local want=$((sanitize_n * kSanitizerTest + 10))
      if [ $tool = memcheck ]; then
        want=$(fill_want)
      elif [ "$(ev_remaining)" -lt "$want" ]; then
        ev_skip "$tool" "not enough time left (${want} s wanted, $(ev_remaining) s left)"
        continue
      fi
      extra=()
      [ $tool = memcheck ] && extra=(--leak-check full)
      ev_step "$tool" "$want" "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 50 \
        "$tests_dir/test_cuda_kernels" --gtest_filter="$filter" --gtest_brief=1
    done
  fi
}

# What Nsight Compute is run with, here and in the python stage: the counters crosscheck derives
# FLOPs, bytes and time from, at the clocks the GPU runs at (--clock-control none: ncu's default
# locks them to base, and only "none" has been seen working on these machines).
ncu_metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex.sum
ncu_metrics+=,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp16.sum
ncu_metrics+=,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum
ncu_metrics+=,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
ncu_args=(--csv --print-units base --clock-control none --metrics "$ncu_metrics")
# For a program under ncu: the archive's libraries but its libnvperf_* (ncu loads its own, and
# LD_LIBRARY_PATH would come before them). newer-stdcxx: see ev_linked_library_path.
ncu_library_path() { ev_linked_library_path "${stage:-/nonexistent}/roofbench/lib" "$EV_WORK/ncu-libs" '^libnvperf_' "$@"; }

# Nsight Compute beside roofbench's CUPTI counters: benchmarks of the tests stage's quick run
# with counters, once more under ncu, at the same sizes. xcheck_plan first (it plans), then
# xcheck_steps.
xcheck_plan() {
  xc=$xcheck
  if [ -z "$xc" ]; then
    xc='^gemm/wgmma/bf16/|^stream/saxpy/fp32/'
    [[ -n $skip && wgmma =~ $skip ]] && xc='^gemm/cublas/bf16/|^stream/saxpy/fp32/'
  fi
  if [[ $device == cuda:* ]]; then  # the CPU rehearsal skips both
    plan ncu 60
    plan crosscheck 5
  fi
}

# find_ncu: ncu=its path, for a CUDA device on a machine that has it; else returns 1 with
# ncu_verdict (ev_skip on the CPU, ev_fail on a GPU machine without it) and ncu_why.
find_ncu() {
  ncu=$(ev_find_tool ncu)
  if [[ $device != cuda:* ]]; then
    ncu_verdict=ev_skip ncu_why="the device is $device: Nsight Compute profiles CUDA kernels"
  elif [ -z "$ncu" ]; then
    ncu_verdict=ev_fail ncu_why="no ncu on this machine (looked on PATH, in /usr/local/cuda*, /opt/nvidia/nsight-compute)"
  else
    return 0
  fi
  return 1
}

xcheck_steps() {
  local ncu ncu_verdict ncu_why quick=$EV_WORK/quick-run
  if ! find_ncu; then
    "$ncu_verdict" ncu "$ncu_why"
    return
  elif [ ! -f "$quick/results.json" ]; then
    ev_skip ncu "the quick run with counters wrote no results"
    return
  fi
  local names=()
  mapfile -t names < <(dry_names --device "$device" --quick --filter "$xc" --ceilings-from x "${skip_args[@]}")
  # The same sizes as the run with counters (--quick; --skip as everywhere, and the launch
  # ceilings a run measures itself left out: thousands of empty kernels under ncu).
  local path
  path=$(ncu_library_path)
  mkdir -p "$EV_WORK/xcheck"
  # ncu writes its own ==PROF== and ==ERROR== lines to stdout, among the CSV: the step's log
  # gets them too (crosscheck reads past them).
  ev_step ncu 180 env LD_LIBRARY_PATH="$path" bash -c 'set -o pipefail; csv=$1; shift; "$@" | tee "$csv"' _ \
    "$EV_WORK/xcheck/ncu.csv" \
    "$ncu" "${ncu_args[@]}" \
    "$roofbench" run --device "$device" --profile --quick --filter "$xc" \
    --ceilings-from "$quick" --out "$EV_WORK/xcheck/profiled" --skip "${skip:+$skip|}^ceiling/launch_"
  rm -rf "$EV_WORK/ncu-libs"
  local bargs=() n
  for n in "${names[@]}"; do bargs+=(--benchmark "$n"); done
  ev_step crosscheck 30 bash -c '"$@" >"'"$EV_WORK/xcheck/crosscheck.md"'"' _ "$roofbench" crosscheck \
    "$quick" "$EV_WORK/xcheck/ncu.csv" "${bargs[@]}"
}

# ---------------------------------------------------------------- profile
# Issue 51: profile before a kernel is changed. The rungs whose targets were missed, at the size
# each target is judged at (the GEMMs of the WMMA, SIMT and wgmma targets, and cuBLAS beside
# them), and the L2 read and HBM copy ceilings, each in a run of its own under Nsight Compute with
# its full set of sections, at the GPU's own clocks (a ceiling in a `roofbench ceilings` of its
# own). A run with --profile launches the benchmark's kernel first (the prepare run), then the
# cache flush and the kernel again (the warm-up, from a flushed cache as a sample is), then the
# clock probe: its first kProfileLaunches launches hold the kernel twice whatever its kernels'
# names (cuBLAS's are its own). The report is exported and printed as text, every section's body
# and its rules' advice: what a session without a GPU reads before it changes the kernel
# (scripts/visit-baseline.sh commits the text).
kProfileTargets='^gemm/(wmma|mma_sync)/bf16/M:8192/N:8192/K:8192$|^gemm/(register_tiled|warp_tiled)/fp32/M:4096/N:4096/K:4096$'
kProfileTargets+='|^gemm/(wgmma|cublas)/bf16/M:8192/N:8192/K:8192$'
kProfileCeilings=(l2_read dram_copy)
kProfileLaunches=4
# A run of one benchmark, about 40 replay passes of each launch profiled, the text: 14 s for each
# 8192³ and 4096³ GEMM on the second H200, 12 to 15 s for each ceiling (reports/baselines/
# h200-2026-11-29/PROVENANCE.md); each step may take half again its allowance and 30 s more.
kProfileEach=40
kProfileCeiling=30
kProfileKeepMiB=24  # the reports come back while together they take at most this (the text always does)

# The step name of a benchmark of names[]: its variant ("wmma"), with its precision where another
# has the same variant ("wmma-bf16"), and its size where another has both.
profile_step() {
  local p q n same=0 both=0
  IFS=/ read -r -a p <<<"$1"
  for n in "${names[@]}"; do
    [ "$n" = "$1" ] && continue
    IFS=/ read -r -a q <<<"$n"
    [ "${q[1]}" = "${p[1]}" ] && same=1
    [ "${q[1]}/${q[2]}" = "${p[1]}/${p[2]}" ] && both=1
  done
  if ((both)); then echo "${p[1]}-${p[2]}-$(IFS=-; echo "${p[*]:3}" | tr -d ':')"
  elif ((same)); then echo "${p[1]}-${p[2]}"
  else echo "${p[1]}"; fi
}

run_profile() {
  local re=${xcheck:-$kProfileTargets} names=() n ceilings=() c dry no_ceilings="^ceiling/${skip:+|$skip}"
  mapfile -t names < <(dry_names --device "$device" --filter "$re" --skip "$no_ceilings")
  [ ${#names[@]} -gt 0 ] || { ev_refuse "no benchmark of $device matches '$re'"; ev_end; exit 2; }
  # The ceilings of the default list that this device has (--xcheck names benchmarks alone).
  if [ -z "$xcheck" ]; then
    for c in "${kProfileCeilings[@]}"; do
      dry=$("$roofbench" ceilings --device "$device" --dry-run --skip "^ceiling/(?!$c/)" 2>/dev/null)
      grep -q "^  \[1\] ceiling/$c/" <<<"$dry" && ceilings+=("$c")
    done
  fi
  plan env 10
  for n in "${names[@]}"; do plan "$(profile_step "$n")" "$kProfileEach"; done
  for c in "${ceilings[@]}"; do plan "$c" "$kProfileCeiling"; done
  refuse_or_go

  env_step
  local ncu ncu_verdict ncu_why
  if ! find_ncu; then
    for n in $(for x in "${names[@]}"; do profile_step "$x"; done) "${ceilings[@]}"; do "$ncu_verdict" "$n" "$ncu_why"; done
    return
  fi
  local path s
  path=$(ncu_library_path)
  mkdir -p "$EV_WORK/profile"
  # profile_one STEP ALLOWANCE COMMAND...: COMMAND under ncu, its report exported and printed as
  # text (ev_ncu_report, scripts/gpu-lib.sh).
  export -f ev_ncu_report
  profile_one() {
    ev_step "$1" $(($2 * 3 / 2 + 30)) env LD_LIBRARY_PATH="$path" bash -c 'ev_ncu_report "$@"' _ \
      "$ncu" "$EV_WORK/profile/$1" "$kProfileLaunches" "${@:3}"
  }
  for n in "${names[@]}"; do
    s=$(profile_step "$n")
    # No ceiling runs (none is needed to profile a kernel): its kernels are not placed.
    profile_one "$s" "$kProfileEach" "$roofbench" run --device "$device" --profile --filter "^$n\$" --skip "$no_ceilings" \
      --out "$EV_WORK/profile/$s-run"
  done
  for c in "${ceilings[@]}"; do
    profile_one "$c" "$kProfileCeiling" "$roofbench" ceilings --device "$device" --profile --skip "^ceiling/(?!$c/)${skip:+|$skip}" \
      --out "$EV_WORK/profile/$c-run"
  done
  rm -rf "$EV_WORK/ncu-libs"
  local mib
  mib=$(du -cm "$EV_WORK"/profile/*.ncu-rep 2>/dev/null | awk 'END { print $1 + 0 }')
  if [ "$mib" -gt "$kProfileKeepMiB" ]; then
    rm -f "$EV_WORK"/profile/*.ncu-rep
    ev_note "the reports took ${mib} MiB, over the ${kProfileKeepMiB} MiB that come back with the stage: left out, their text kept"
  fi
}

# The ceilings the Python run leaves out: none is a roof of its kernels (transcendentals, PCIe,
# launches, FP64, shared memory).
python_skip="ceiling/(math_|mufu_|pcie_|launch_|fp64|smem_)"
# Allowances: a Python kernel's inputs, its two checks and its counter passes beside its budget
# (the references run on the GPU: an FP32 matmul at 8192^3 takes tens of ms), and the process's
# start (torch's import, Triton's three compiles, do_bench's calls). Without a GPU (the dress
# rehearsal, NumPy stand-ins at small sizes) each takes seconds.
kPyKernel=10 kPyStart=45 kBuildExt=60
[[ $device == cuda:* ]] || kPyKernel=3 kPyStart=5

run_python() {
  # An absolute path: CMake's FindPython takes Python_EXECUTABLE only so (build-python-ext.sh).
  local py tests_py=$here/../tests/python backend=cpu
  py=$(command -v "${PYTHON:-python3}") || { ev_refuse "no ${PYTHON:-python3} on PATH"; ev_end; exit 2; }
  [[ $device == cuda:* ]] && backend=cuda
  local visit_py=$tests_py/gpu_visit.py budget_s=${budget:-0.5} skip_all="$python_skip${skip:+|$skip}"
  local small=() q=() counters=() ext planned n builtin run_est
  [ $quick -eq 1 ] && small=(--small) q=(--quick)
  [ $backend = cuda ] && counters=(--counters)
  # How many kernels, and the built-in row beside them, from tests/python/gpu_kernels.py (NumPy
  # and, where it is, Triton imported; not torch or roofbench): the run's estimate is the
  # roofbench dry run of the ceilings and that row, and an allowance a kernel. (Its last line: an
  # import may print warnings before it.)
  planned=$("$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import gpu_kernels as g
print(len(g.PLANNED[sys.argv[2]]), g.builtin(sys.argv[2], sys.argv[3] == "1"))' "$tests_py" "$backend" "$quick" \
    2>"$EV_WORK/plan.err" | tail -n 1)
  read -r n builtin <<<"$planned"
  [[ $n =~ ^[0-9]+$ ]] ||
    { ev_refuse "$py cannot read the kernels' plan in tests/python/gpu_kernels.py: $(tail -n 1 "$EV_WORK/plan.err")"; ev_end; exit 2; }
  run_est=$(dry_estimate run --device "$device" "${q[@]}" "${counters[@]}" --budget "$budget_s" --filter "$builtin" \
    --skip "$skip_all" --sustain 0)
  [ -n "$run_est" ] || { ev_refuse "roofbench run --dry-run of the ceilings and '$builtin' failed"; ev_end; exit 2; }
  run_est=$((run_est + n * kPyKernel + kPyStart))
  plan env 15
  if [ -d "$from" ]; then
    ext=$from/python  # a build folder's own extension, for this Python
    # --plan of a build folder plans what a visit's archive takes (the README's table).
    [ "$plan_only" -eq 0 ] || plan build-ext $kBuildExt "from an archive; a build folder has its own"
  else
    ext=$stage/ext  # built here, for this machine's Python; removed with the unpacked archive
    plan build-ext $kBuildExt
  fi
  plan run "$run_est" "$n kernels, the ceilings and $builtin"
  if [ $backend = cuda ]; then
    plan ncu 90
    plan crosscheck 10
  fi
  refuse_or_go

  # libstdc++: the newer of the machine's and the archive's, for every Python step (ev_machine_stdcxx).
  local py_path
  py_path=$(ev_linked_library_path "${stage:-/nonexistent}/roofbench/lib" "$EV_WORK/py-libs" '^$' newer-stdcxx)
  if [ -L "$EV_WORK/py-libs/libstdc++.so.6" ] && [[ $(readlink "$EV_WORK/py-libs/libstdc++.so.6") != "${stage:-/nonexistent}"/* ]]; then
    ev_note "libstdc++: the machine's $(readlink "$EV_WORK/py-libs/libstdc++.so.6") (GLIBCXX_3.4.$(ev_glibcxx "$(readlink -f "$EV_WORK/py-libs/libstdc++.so.6")")), at least as new as the archive's"
  fi
  ev_step env 60 env LD_LIBRARY_PATH="$py_path" bash -c '
    nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
    "$1" - <<"PY"
import importlib, platform, sys
print("Python", platform.python_version(), sys.executable)
for m in ("numpy", "torch", "triton", "nanobind", "cupy"):
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", "?"))
    except Exception as e:
        print(m, "not importable:", e)
try:
    import torch
    print("torch sees", [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())], "CUDA", torch.version.cuda)
except Exception as e:
    print("torch.cuda:", e)
PY' _ "$py"
  if [ ! -d "$from" ]; then
    local brc=0
    ev_step build-ext 240 env LD_LIBRARY_PATH="$py_path" PYTHON="$py" bash "$here/build-python-ext.sh" "$stage/roofbench" "$ext" ||
      brc=$?
    if [ $brc -eq 3 ]; then
      # Built, and imports first in its process but not after NumPy or torch (the second H200's
      # crash): a failure said, and gpu_visit.py, which imports roofbench before either, runs.
      ev_note "the extension imports alone but not after NumPy or torch (build-ext.log): gpu_visit.py imports it first, so its run goes on"
    elif [ $brc -ne 0 ]; then
      ev_note "the extension did not build: the Python kernels cannot run (see build-ext.log)"
      rm -rf "$EV_WORK/py-libs"
      return
    fi
  elif [ ! -d "$ext/roofbench" ]; then
    ev_fail run "the build folder has no python/roofbench: it was configured without the Python package"
    rm -rf "$EV_WORK/py-libs"
    return
  fi
  local vargs=(--device "$device" --budget "$budget_s" --skip "$skip_all" "${small[@]}")
  ev_step run $((run_est * 3 / 2 + 30)) env LD_LIBRARY_PATH="$py_path" PYTHONPATH="$ext" "$py" "$visit_py" "$EV_WORK/python" \
    "${vargs[@]}"
  local ncu ncu_verdict ncu_why
  if ! find_ncu; then
    "$ncu_verdict" ncu "$ncu_why"
    [ "$ncu_verdict" = ev_skip ] && ev_skip crosscheck "no ncu numbers on $device"
  elif [ ! -f "$EV_WORK/python/agreement.json" ]; then
    ev_skip ncu "the run wrote no agreement.json: nothing to crosscheck"
  else
    # One run of each kernel (gpu_visit.py --profile: the ceilings from the run above), every
    # kernel of the process profiled; ncu's CSV among what the program prints (crosscheck reads
    # past it), then each kernel beside ncu's numbers for one run of it.
    local path
    path=$(ncu_library_path newer-stdcxx)
    ev_step ncu 240 env LD_LIBRARY_PATH="$path" PYTHONPATH="$ext" \
      bash -c 'set -o pipefail; csv=$1; shift; "$@" | tee "$csv"' _ "$EV_WORK/python/ncu.csv" \
      "$ncu" "${ncu_args[@]}" "$py" "$visit_py" "$EV_WORK/python" --profile "${vargs[@]}"
    rm -rf "$EV_WORK/ncu-libs"
    # Without ncu's table (it refused the machine, or stopped) every kernel would be NOT MET for
    # that one failure: said once, by the ncu step.
    if grep -q '"Metric Name"' "$EV_WORK/python/ncu.csv" 2>/dev/null; then
      ev_step crosscheck 60 env LD_LIBRARY_PATH="$py_path" PYTHONPATH="$ext" "$py" "$visit_py" "$EV_WORK/python" \
        --crosscheck "$EV_WORK/python/ncu.csv"
    else
      ev_skip crosscheck "ncu printed no table of metrics: see ncu.log"
    fi
  fi
  rm -rf "$EV_WORK/py-libs"
  # The checks' verdicts in the summary (python/agreement.md has them as a table).
  local f=$EV_WORK/python/summary.txt line
  if [ -f "$f" ]; then
    ev_note "checks: $(head -n 1 "$f")"
    while IFS= read -r line; do EV_LINES+=("$line"); done < <(tail -n +3 "$f")
  fi
}

run_"$what"
ev_end
