#!/usr/bin/env bash
# The GPU visit's python stage (scripts/gpu-check.sh python: the extension built against the
# packed build, tests/python/gpu_visit.py's run and checks) rehearsed on the CPU, NumPy stand-ins
# at small sizes, few ceilings. The stage ends within its limit with its archive and summary, the
# checks' verdicts in the summary; every row is what the rehearsal must give: each kernel checked
# and placed, the matmul beside OpenBLAS's row of the same run, do_bench and the counted bytes said
# to need a GPU, the torch and Triton kernels said to be left out, Nsight Compute skipped. What
# came back goes into a baseline's python/ through scripts/visit-baseline.sh. Then the crosscheck
# against Nsight Compute (gpu_visit.py --crosscheck), which needs a GPU's kernel trace and ncu's
# CSV: replayed here with a trace and a CSV planted in a copy of the run, so that its verdicts,
# met and NOT MET, are seen to follow the numbers (not a GPU result).
# Usage: test_gpu_visit.sh PYTHON BUILD_DIR (PYTHONPATH: the build's python/)
set -uo pipefail
py=${1:-python3}
build=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
lean='ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_|launch_)'

# The stage, from an archive as a visit carries it (xz at its fastest: the packing is
# Scripts.PackBuildArchiveUnpacksAndRuns's to test).
XZ_OPT='-0 -T0' bash "$src/scripts/pack-build.sh" "$build" "$tmp/roofbench.tar.xz" >/dev/null || fail "pack-build.sh exited $?"
limit=240
t0=$(date +%s)
PYTHON=$py bash "$src/scripts/gpu-check.sh" python "$tmp/roofbench.tar.xz" "$tmp/visit" --device cpu --quick \
  --budget 0.1 --limit $limit --skip "$lean" >"$tmp/stage.out" 2>"$tmp/stage.err" ||
  { rc=$?; tail -20 "$tmp/stage.err"; cat "$tmp/stage.out"; fail "the python stage exited $rc"; }
took=$(($(date +%s) - t0))
[ "$took" -le "$limit" ] || fail "the stage took $took s, over its limit of $limit s"
[ "$(ls "$tmp/visit" | sort | tr '\n' ' ')" = "python-summary.txt python.tar.xz " ] ||
  fail "the stage left $(ls "$tmp/visit" | tr '\n' ' ') (want python.tar.xz and python-summary.txt)"
summary=$tmp/visit/python-summary.txt
[ "$(tail -n "$(wc -l <"$summary")" "$tmp/stage.out")" = "$(cat "$summary")" ] || fail "the summary is not printed last"
[[ $(head -n 1 "$summary") == "python: passed (in "* ]] || fail "summary: $(head -n 3 "$summary")"
for step in env build-ext run; do
  grep -qE "^  PASS +[0-9]+s  $step " "$summary" || fail "no PASS line for $step: $(cat "$summary")"
done
grep -qE '^  PASS .* run +gpu_visit: 0 of [0-9]+ checks NOT MET' "$summary" || fail "the run's line gives no tally: $(cat "$summary")"
grep -qE '^  SKIPPED +- +ncu +the device is cpu' "$summary" || fail "ncu not said to be skipped: $(cat "$summary")"
grep -q '^device: cpu, ' "$summary" || fail "the summary names no device"
grep -q '^checks: python: passed (0 of ' "$summary" && grep -q '^  met      checked, placed, plausible: numpy/matmul/fp32/' "$summary" ||
  fail "the checks' verdicts are not in the summary: $(cat "$summary")"
mkdir -p "$tmp/unpacked" && tar -xJf "$tmp/visit/python.tar.xz" -C "$tmp/unpacked" || fail "python.tar.xz does not unpack"
out=$tmp/unpacked/python
for f in run/results.json run/report.html agreement.md agreement.json; do [ -s "$out/$f" ] || fail "no python/$f"; done
[ ! -e "$tmp/unpacked/ext" ] || fail "the extension's build went into the evidence"
"$py" - "$out/agreement.json" "$out/run/results.json" "$here/gpu_kernels.py" <<'PY' || fail "agreement.json is not what the rehearsal must give"
import json, sys
sys.path.insert(0, sys.argv[3].rsplit("/", 1)[0])
import gpu_kernels
a = json.load(open(sys.argv[1]))
rows = a["rows"]
def of(check):
    return [r for r in rows if r["check"].startswith(check)]
checked = of("checked, placed, plausible")
assert sorted(r["benchmark"].split("/")[1] for r in checked) == ["matmul", "softmax", "vector_add"], checked
assert all(r["verdict"] == "met" for r in checked), checked
pair = of("within 5% of gemm/openblas/fp32, same run")
assert len(pair) == 1 and pair[0]["verdict"] == "—" and "ms /" in pair[0]["measured"], pair  # shown, judged on a GPU
assert all(r["verdict"] == "—" and r["why"] == "no counters (a CPU run)" for r in of("counted DRAM bytes")), rows
assert len(of("median within 3% of do_bench's")) == 3, rows
assert any(r["check"] == "left out" and r["benchmark"] == "torch and Triton kernels" for r in rows), rows
assert a["exit_code"] == 0 and a["device"], a
# The stage planned from gpu_kernels.PLANNED: the CPU's list is what the run took, and the GPU's
# names the torch and Triton kernels that file declares, no more, no fewer.
ran = [b["name"].rsplit("/", len(b["name"].split("/")) - 3)[0] for b in json.load(open(sys.argv[2]))["benchmarks"]]
assert [n for n in ran if n.startswith("numpy/")] == gpu_kernels.PLANNED["cpu"], ran
import ast
declared = [c.args[3].value for c in ast.walk(ast.parse(open(sys.argv[3]).read()))
            if isinstance(c, ast.Call) and getattr(c.func, "attr", None) == "Benchmark" and len(c.args) > 3]
assert sorted(n for n in declared if not n.startswith("numpy/")) == sorted(gpu_kernels.PLANNED["cuda"]), declared
print(f"gpu_visit rehearsal: {len(rows)} rows, {len(checked)} kernels checked and placed on {a['device']}")
PY
grep -q '^| checked, placed, plausible | `numpy/matmul/fp32/' "$out/agreement.md" || fail "agreement.md has no matmul row"

# What came back goes into a baseline's python/ (here a baseline of this run's own results: the CPU).
mkdir -p "$tmp/baseline"
xz -c "$out/run/results.json" >"$tmp/baseline/results.json.xz"
bash "$src/scripts/visit-baseline.sh" "$tmp/visit" --out "$tmp/baseline" >"$tmp/vb.out" 2>&1 ||
  fail "visit-baseline.sh of the python stage: $(cat "$tmp/vb.out")"
for f in python/results.json.xz python/agreement.md python/agreement.json python/report.html; do
  [ -s "$tmp/baseline/$f" ] || fail "visit-baseline: no $f"
done
[ ! -e "$tmp/baseline/python/results.json" ] || fail "visit-baseline: python/results.json left plain beside its xz"
grep -q '^## The Python kernels$' "$tmp/baseline/PROVENANCE.md" && grep -q '^python: passed' "$tmp/baseline/PROVENANCE.md" &&
  grep -q '^  met      checked, placed, plausible: numpy/softmax/' "$tmp/baseline/PROVENANCE.md" ||
  fail "visit-baseline: no Python section with the checks in PROVENANCE.md"

# A python stage whose run wrote nothing (its extension did not build) is left out: the baseline's
# python/ from the visit before stays.
mkdir -p "$tmp/broken/python" "$tmp/visit-broken"
head -n 2 "$summary" | sed '1s/^python: passed/python: FAILED: 1 step(s) failed or ran out of time/' >"$tmp/broken/summary.txt"
tar -cJf "$tmp/visit-broken/python.tar.xz" -C "$tmp/broken" . && cp "$tmp/broken/summary.txt" "$tmp/visit-broken/python-summary.txt"
before=$(md5sum "$tmp/baseline/python/agreement.json")
bash "$src/scripts/visit-baseline.sh" "$tmp/visit-broken" --out "$tmp/baseline" >"$tmp/vb2.out" 2>&1
grep -q 'the python stage left out: its run wrote no results' "$tmp/vb2.out" &&
  [ "$(md5sum "$tmp/baseline/python/agreement.json")" = "$before" ] ||
  fail "a python stage without a run replaced the baseline's python/: $(cat "$tmp/vb2.out")"

# The crosscheck, replayed: a kernel trace in each benchmark of a copy of the run, and ncu's CSV
# with each kernel's time set from the run's own median: the matmul 2% over (met), the softmax 10%
# over (NOT MET), OpenBLAS's row 1% under (met), the vector add not profiled at all (NOT MET).
cp -r "$out" "$tmp/xc"
plant() {  # plant CSV SOFTMAX_FACTOR WITH_VECTOR_ADD
  "$py" - "$tmp/xc/run/results.json" "$1" "$2" "$3" <<'PY'
import json, sys
path, csv, softmax, with_add = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
r = json.load(open(path))
factor = {"numpy/matmul": 1.02, "numpy/softmax": softmax, "gemm/openblas": 0.99, "numpy/vector_add": 1.0}
lines = ['==PROF== Connected to process 7 (python3)', 'roofbench: what the program prints, among the CSV',
         '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
i = 0
for b in r["benchmarks"]:
    key = "/".join(b["name"].split("/")[:2])
    if key not in factor:
        continue
    m = b["measurement"]["stats"]["median_s"]
    kernel = "planted_" + key.replace("/", "_")
    b["counters"] = {"set": "planted (a replay: no GPU)", "metrics": [], "passes": 0, "values": {}, "error": None,
                     "trace": {"span_s": [m], "busy_s": [m], "kernels": [kernel]}}
    if key == "numpy/vector_add" and not with_add:
        continue
    lines.append(f'"{i}","{kernel}","gpu__time_duration.sum","nsecond","{m * factor[key] * 1e9:.0f}"')
    i += 1
json.dump(r, open(path, "w"))
open(csv, "w").write("\n".join(lines) + "\n==PROF== Disconnected from process 7\n")
PY
}
plant "$tmp/ncu.csv" 1.10 0 || fail "planting the trace"
"$py" "$here/gpu_visit.py" "$tmp/xc" --crosscheck "$tmp/ncu.csv" >"$tmp/xc.out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/xc.out"; fail "--crosscheck with two kernels off exited $rc, not 1"; }
# (A kernel whose median is under gpu_visit.LONG_S is shown, not judged: "—". The 256³ matmuls
# take 0.1-0.3 ms on a 2-core VM, and under 50 us only past some 670 GFLOP/s, on a large server.)
"$py" - "$tmp/xc/agreement.json" 4 "$tmp/xc/run/results.json" "$here" <<'PY' || fail "the crosscheck's rows are not what the planted numbers give"
import json, sys
sys.path.insert(0, sys.argv[4])
from gpu_visit import LONG_S
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["check"] == "kernel time within 5% of Nsight Compute's"]
assert len(rows) == int(sys.argv[2]), rows
median = {"/".join(b["name"].split("/")[:2]): b["measurement"]["stats"]["median_s"]
          for b in json.load(open(sys.argv[3]))["benchmarks"]}
def judged(key, verdict):  # the verdict the planted numbers give, or "—" for a kernel too brief to judge
    return verdict if median[key] >= LONG_S else "—"
v = {"/".join(r["benchmark"].split("/")[:2]): r for r in rows}
assert v["numpy/matmul"]["verdict"] == judged("numpy/matmul", "met") and "(+2.0%)" in v["numpy/matmul"]["measured"], v["numpy/matmul"]
assert v["gemm/openblas"]["verdict"] == judged("gemm/openblas", "met") and "(-1.0%)" in v["gemm/openblas"]["measured"], v["gemm/openblas"]
assert v["numpy/softmax"]["verdict"] == "NOT MET" and "(+10.0%)" in v["numpy/softmax"]["measured"], v["numpy/softmax"]
add = v["numpy/vector_add"]
assert add["verdict"] == "NOT MET" and "profiled no whole run" in add["why"], add
PY
grep -q '^python: FAILED (2 of ' "$tmp/xc/summary.txt" || fail "summary.txt: $(head -n 1 "$tmp/xc/summary.txt")"
grep -q 'planted_numpy_matmul' "$tmp/xc/crosscheck.md" && grep -q '`numpy/vector_add/.*`: no crosscheck' "$tmp/xc/crosscheck.md" ||
  fail "crosscheck.md: $(cat "$tmp/xc/crosscheck.md")"
# Again with every kernel profiled and within 5%: exit 0, the earlier crosscheck's rows replaced.
cp -r "$out/run/results.json" "$tmp/xc/run/results.json"
plant "$tmp/ncu2.csv" 1.01 1 || fail "planting the trace again"
"$py" "$here/gpu_visit.py" "$tmp/xc" --crosscheck "$tmp/ncu2.csv" >"$tmp/xc2.out" 2>&1 ||
  { rc=$?; cat "$tmp/xc2.out"; fail "--crosscheck with every kernel within 5% exited $rc"; }
"$py" - "$tmp/xc/agreement.json" "$tmp/xc/run/results.json" "$here" <<'PY' || fail "a second crosscheck did not replace the first one's rows"
import json, sys
sys.path.insert(0, sys.argv[3])
from gpu_visit import LONG_S
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["check"] == "kernel time within 5% of Nsight Compute's"]
median = {b["name"]: b["measurement"]["stats"]["median_s"] for b in json.load(open(sys.argv[2]))["benchmarks"]}
assert len(rows) == 4 and all(r["verdict"] == ("met" if median[r["benchmark"]] >= LONG_S else "—") for r in rows), rows
assert any(r["verdict"] == "met" for r in rows), rows  # (the softmax and the vector add are milliseconds)
PY
grep -q '^python: passed (0 of ' "$tmp/xc/summary.txt" || fail "summary.txt after the second crosscheck: $(head -n 1 "$tmp/xc/summary.txt")"

# Its plan: the 420 s default limit of a visit's later calls, the extension's build planned as a
# visit's archive needs it, and on a GPU the six torch and Triton kernels with cuBLAS's row.
plan=$(PYTHON=$py bash "$src/scripts/gpu-check.sh" python "$build" /dev/null --device cpu --plan --quick 2>/dev/null)
grep -q '^gpu-check python: estimate [0-9]* s of the 420 s limit' <<<"$plan" &&
  grep -qE '^  build-ext +60 s \(from an archive' <<<"$plan" || fail "python --plan on the CPU: $plan"
plan=$(PYTHON=$py bash "$src/scripts/gpu-check.sh" python "$build" /dev/null --device cuda:0 --plan 2>/dev/null)
grep -qE '^  run +[0-9]+ s \(6 kernels, the ceilings and \^gemm/cublas/bf16/M:8192/N:8192/K:8192' <<<"$plan" &&
  grep -qE '^  ncu ' <<<"$plan" && grep -qE '^  crosscheck ' <<<"$plan" || fail "python --plan for a GPU: $plan"
# Over its limit it does not start, and says so.
PYTHON=$py bash "$src/scripts/gpu-check.sh" python "$build" "$tmp/refused" --device cpu --quick --limit 20 >/dev/null 2>&1
[ $? -eq 2 ] && [[ $(head -n 1 "$tmp/refused/python-summary.txt") == "python: REFUSED: the estimate"* ]] &&
  ! grep -qE '^\./(python/|run\.log|build-ext\.log)' <<<"$(tar -tJf "$tmp/refused/python.tar.xz")" ||
  fail "a python stage over its limit was not refused, or ran a step: $(cat "$tmp/refused/python-summary.txt")"

# Bad input: exit 2, nothing run, nothing written.
"$py" "$here/gpu_visit.py" "$tmp/bad" --device tpu:0 >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q 'cuda:N or cpu' "$tmp/bad.err" && [ ! -e "$tmp/bad" ] || fail "--device tpu:0 was not refused: $(cat "$tmp/bad.err")"
"$py" "$here/gpu_visit.py" "$tmp/bad" --crosscheck "$tmp/ncu.csv" >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q 'run gpu_visit.py .* first' "$tmp/bad.err" && [ ! -e "$tmp/bad" ] ||
  fail "--crosscheck without a run was not refused: $(cat "$tmp/bad.err")"
bash "$src/scripts/gpu-check.sh" python "$tmp/roofbench.tar.xz" "$tmp/bad" --device cpu -- --filter x >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q 'takes no run options after --' "$tmp/bad.err" && [ ! -e "$tmp/bad" ] ||
  fail "run options for the python stage were not refused: $(cat "$tmp/bad.err")"
echo "PASS (the python stage in $took s)"
