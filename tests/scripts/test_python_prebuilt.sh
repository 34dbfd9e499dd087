#!/usr/bin/env bash
# The Python extension built as a visit's GPU machine must build it: for the Python at hand,
# against the archive scripts/pack-build.sh makes (unpacked) and this source tree alone, by
# scripts/build-python-ext.sh (python/prebuilt). What shows it used the archive and nothing of
# Debian's: nlohmann/json's headers read from the archive's copy, libroofbench loaded from its
# lib/. Then a NumPy callable goes through it end to end on the CPU: checked, timed, placed, with
# a results file roofbench reads.
# Usage: [PYTHON=python3] test_python_prebuilt.sh BUILD_DIR
set -uo pipefail
build=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

XZ_OPT='-0 -T0' bash "$src/scripts/pack-build.sh" "$build" "$tmp/roofbench.tar.xz" >/dev/null ||
  fail "pack-build.sh exited $?"
mkdir -p "$tmp/unpacked" && tar -xJf "$tmp/roofbench.tar.xz" -C "$tmp/unpacked" || fail "the archive does not unpack"
packed=$tmp/unpacked/roofbench
[ -f "$packed/python/include/nlohmann/json.hpp" ] || fail "the archive carries no nlohmann/json.hpp"

# Refused, with a line that says why, for a folder that is no archive.
bash "$src/scripts/build-python-ext.sh" "$tmp" "$tmp/nothing" >/dev/null 2>"$tmp/refused.err"
[ $? -eq 2 ] && grep -q "not an unpacked scripts/pack-build.sh archive" "$tmp/refused.err" ||
  fail "a folder that is no archive was not refused: $(cat "$tmp/refused.err")"

bash "$src/scripts/build-python-ext.sh" "$packed" "$tmp/ext" >"$tmp/build.out" 2>&1 ||
  { rc=$?; cat "$tmp/build.out"; fail "build-python-ext.sh exited $rc"; }
last=$(tail -n1 "$tmp/build.out")
[[ "$last" =~ ^build-python-ext:\ Python\ 3\.[0-9]+:\ PYTHONPATH=$tmp/ext\  ]] ||
  fail "its last line does not say how to import it: $last"
# Its entry point alone is exported (python/exports.map), here and in the build tree's extension: on
# the GPU machine another compiler builds it, and an exported C++ symbol would be what libroofbench
# calls. Each import order was tried and said.
for so in "$tmp"/ext/roofbench/_roofbench*.so "$build"/python/roofbench/_roofbench*.so; do
  [ -f "$so" ] || fail "no extension at $so"
  exports=$(nm -D --defined-only "$so" | awk '{print $NF}' | tr '\n' ' ')
  [ "$exports" = "PyInit__roofbench " ] || fail "$so exports more than its entry point: ${exports:0:300}"
done
grep -q '^import roofbench after numpy: ok$' "$tmp/build.out" || fail "the import after NumPy was not tried and said: $(cat "$tmp/build.out")"
# An extension that imports alone but not after NumPy (a NumPy that breaks it, planted on its path)
# is exit 3, said, with how to import it: usable first in a process (gpu_visit.py), not exit 1.
mkdir -p "$tmp/ext/numpy" && echo 'raise ImportError("a planted NumPy that breaks what imports after it")' \
  >"$tmp/ext/numpy/__init__.py"
bash "$src/scripts/build-python-ext.sh" "$packed" "$tmp/ext" >"$tmp/order.out" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q '^import roofbench: ok$' "$tmp/order.out" && grep -q '^import roofbench after numpy: FAILED' "$tmp/order.out" &&
  grep -q 'imports alone but not in every order' "$tmp/order.out" ||
  fail "an extension that imports only first was not exit 3 with why (exit $rc): $(cat "$tmp/order.out")"
rm -rf "$tmp/ext/numpy"
json_headers=$(cd "$tmp/ext" && ninja -t deps | grep '/nlohmann/' || true)
[ -n "$json_headers" ] || fail "the extension's dependencies name no nlohmann header"
outside=$(grep -v "^ *$packed/python/include/nlohmann/" <<<"$json_headers" || true)
[ -z "$outside" ] || fail "nlohmann headers read from outside the archive: $(head -3 <<<"$outside")"
# Nor any header of the Debian -dev packages roofbench builds with (a GPU machine has none of them).
debian=$(cd "$tmp/ext" && ninja -t deps |
  grep -E '^ +/usr/include/(fmt|benchmark|CLI|boost|gtest|x86_64-linux-gnu/openblas[^/]*|openblas)/|/usr/include/(sleef|lzma|zlib|cblas)\.h' || true)
[ -z "$debian" ] || fail "the extension reads headers of Debian packages the GPU machine lacks: $(head -3 <<<"$debian")"

PYTHONPATH=$tmp/ext "${PYTHON:-python3}" - "$packed" "$build/roofbench" "$tmp/run" 2>"$tmp/run.err" <<'PY' ||
  { tail -n 30 "$tmp/run.err"; fail "the NumPy run through the built extension"; }
import json, os, subprocess, sys
import numpy as np
import roofbench as rb
packed, roofbench_bin, out = sys.argv[1:4]
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libroofbench.so" in l]
assert maps and all(m.startswith(packed + "/lib/") for m in maps), f"libroofbench loaded from {set(maps)}"
assert rb.__file__.startswith(os.environ["PYTHONPATH"]), rb.__file__
N = 1 << 20
def inputs(seed):
    return (np.random.default_rng(seed).uniform(-1, 1, N).astype(np.float32),)
def ref(x):
    return np.maximum(x.astype(np.float64), 0).astype(np.float32)
def relu(x):
    return np.maximum(x, 0)
# The lean ceilings of a quick CPU run (a DRAM roof, L1, FP32 FMA), as the other tests take them.
run = rb.run([rb.Benchmark(relu, inputs, ref, "numpy/relu/fp32", flops=N, bytes=8 * N, params={"n": N})],
             device="cpu", quick=True, out=out, quiet_stdout=True,
             options=["--skip", "ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_|launch_)"])
r = run["numpy/relu/fp32"]
assert r.verified and r.roof_pct and r.roof_pct > 0 and r.bound, vars(r)
subprocess.run([roofbench_bin, "report", os.path.join(out, "results.json"), "--out", out + "-report"], check=True,
               capture_output=True)
print(f"python-prebuilt: numpy/relu/fp32 verified, {r.roof_pct:.0f}% of its roof ({r.bound}), through the extension "
      "built against the archive")
PY
echo "python-prebuilt: $(tail -n1 "$tmp/build.out")"
