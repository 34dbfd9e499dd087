#!/usr/bin/env bash
# tests/python/gpu_visit.py, the GPU visit's Python step, rehearsed on the CPU (NumPy stand-ins,
# small sizes, few ceilings): it exits 0, writes its run and agreement.md/.json, and every row is
# what the rehearsal must give: each kernel checked and placed, the matmul beside OpenBLAS's row
# of the same run, do_bench and the counted bytes said to need a GPU, the torch and Triton kernels
# said to be left out. Usage: test_gpu_visit.sh PYTHON (PYTHONPATH: the build's python/)
set -uo pipefail
py=${1:-python3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$py" "$here/gpu_visit.py" "$tmp/out" --device cpu --small --budget 0.1 \
  --skip 'ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_|launch_)' >"$tmp/stdout" 2>"$tmp/stderr" ||
  { tail -20 "$tmp/stderr"; cat "$tmp/stdout"; fail "gpu_visit.py exited $?"; }
for f in run/results.json run/report.html agreement.md agreement.json; do [ -s "$tmp/out/$f" ] || fail "no $f"; done
"$py" - "$tmp/out/agreement.json" <<'PY' || fail "agreement.json is not what the rehearsal must give"
import json, sys
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
print(f"gpu_visit rehearsal: {len(rows)} rows, {len(checked)} kernels checked and placed on {a['device']}")
PY
grep -q '^| checked, placed, plausible | `numpy/matmul/fp32/' "$tmp/out/agreement.md" || fail "agreement.md has no matmul row"
[[ $(head -n 1 "$tmp/out/summary.txt") == "python: passed (0 of "* ]] || fail "summary.txt: $(head -n 2 "$tmp/out/summary.txt")"
# What comes back from a visit (the folder packed, its summary beside it) goes into a baseline's
# python/ through scripts/visit-baseline.sh (here a baseline of this run's own results: the CPU).
mkdir -p "$tmp/visit" "$tmp/baseline"
tar -cJf "$tmp/visit/python.tar.xz" -C "$tmp/out" . && cp "$tmp/out/summary.txt" "$tmp/visit/python-summary.txt"
xz -c "$tmp/out/run/results.json" >"$tmp/baseline/results.json.xz"
bash "$here/../../scripts/visit-baseline.sh" "$tmp/visit" --out "$tmp/baseline" >"$tmp/vb.out" 2>&1 ||
  fail "visit-baseline.sh of the python stage: $(cat "$tmp/vb.out")"
for f in python/results.json.xz python/agreement.md python/agreement.json python/report.html; do
  [ -s "$tmp/baseline/$f" ] || fail "visit-baseline: no $f"
done
[ ! -e "$tmp/baseline/python/results.json" ] || fail "visit-baseline: python/results.json left plain beside its xz"
grep -q '^## The Python kernels$' "$tmp/baseline/PROVENANCE.md" && grep -q '^python: passed' "$tmp/baseline/PROVENANCE.md" ||
  fail "visit-baseline: no Python section in PROVENANCE.md"
# Bad input: exit 2, nothing run.
"$py" "$here/gpu_visit.py" "$tmp/bad" --device tpu:0 >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q 'cuda:N or cpu' "$tmp/bad.err" && [ ! -e "$tmp/bad" ] || fail "--device tpu:0 was not refused: $(cat "$tmp/bad.err")"
echo "PASS"
