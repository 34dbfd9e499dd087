#!/usr/bin/env bash
# Builds roofbench's Python extension for the python3 on PATH (or PYTHON) against a packed build
# (scripts/pack-build.sh's archive, unpacked: its roofbench/ folder) and this source tree, with
# python/prebuilt: on a machine with a compiler, CMake, ninja and nanobind but none of Debian's
# packages, such as a visit's GPU machine, whose Python (3.12) is not the one here.
#   build-python-ext.sh PACKED_DIR OUT_DIR
# Then PYTHONPATH=OUT_DIR python3 -c 'import roofbench' loads it; it prints that line last.
# Exit: 0 built, and imports in every order; 3 built, and imports alone (first in its process)
# but not after NumPy or torch: usable by a script that imports it first, as
# tests/python/gpu_visit.py does (the second H200 visit's extension crashed only after them);
# 1 it did not build or does not import at all; 2 bad arguments.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
packed=$(realpath "$1") out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
# An absolute path: CMake's FindPython takes Python_EXECUTABLE only so (a bare name is searched anew).
python=$(command -v "${PYTHON:-python3}") || { echo "build-python-ext: no ${PYTHON:-python3} on PATH" >&2; exit 2; }
compgen -G "$packed/lib/libroofbench.so*" >/dev/null ||
  { echo "build-python-ext: $packed has no lib/libroofbench.so*: not an unpacked scripts/pack-build.sh archive" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src/python/prebuilt" -B "$out" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DROOFBENCH_PACKED="$packed" -DPython_EXECUTABLE="$python" >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log" >&2; echo "build-python-ext: configure failed" >&2; exit 1; }
cmake --build "$out" >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log" >&2; echo "build-python-ext: build failed" >&2; exit 1; }
ext=$(compgen -G "$out/roofbench/_roofbench*.so" | head -n 1)
# What a failure on another machine needs first: the compiler that built it (not the one that built
# libroofbench) and what the extension exports (python/exports.map: its entry point alone).
{
  echo "compiler: $("${CXX:-c++}" --version 2>/dev/null | head -n 1)"
  echo "exports: $(nm -D --defined-only "$ext" 2>/dev/null | awk '{print $NF}' | tr '\n' ' ')"
} | tee "$out/diagnose.log"
# (awk reads nm's output to the end: a reader that stopped early would end nm with SIGPIPE.)
if command -v nm >/dev/null; then
  exported=$(nm -D --defined-only "$ext" | awk '$NF != "PyInit__roofbench" {print $NF}') ||
    { echo "build-python-ext: nm could not read $ext" >&2; exit 1; }
  [ -z "$exported" ] ||
    { echo "build-python-ext: the extension exports more than PyInit__roofbench: $(head -n 5 <<<"$exported" | tr '\n' ' ')" >&2; exit 1; }
else
  echo "build-python-ext: no nm on PATH: the extension's exports are not checked" | tee -a "$out/diagnose.log"
fi
# Imported alone, after NumPy, and after torch where there is one, each in a process of its own: a
# process that loaded another libstdc++ first (torch, NumPy) must still load libroofbench, which
# the archive's libraries were built beside. Each order's outcome is said.
bad=0 alone_ok=0
for first in "" numpy torch; do
  if [ "$first" = torch ] && ! "$python" -c 'import torch' 2>/dev/null; then continue; fi
  rc=0
  PYTHONPATH=$out "$python" -c "${first:+import $first; }import roofbench" >"$out/import-${first:-alone}.log" 2>&1 || rc=$?
  echo "import roofbench${first:+ after $first}: $([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")" | tee -a "$out/diagnose.log"
  if [ $rc -ne 0 ]; then bad=1; tail -n 5 "$out/import-${first:-alone}.log" >&2; fi
  [ -n "$first" ] || [ $rc -ne 0 ] || alone_ok=1
done
[ $alone_ok -eq 1 ] || { echo "build-python-ext: the built package does not import, even alone" >&2; exit 1; }
if [ $bad -ne 0 ]; then
  echo "build-python-ext: the built package imports alone but not in every order (after NumPy or torch): import it first" >&2
  echo "build-python-ext: $("$python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'): PYTHONPATH=$out $python -c 'import roofbench' (first, before NumPy and torch)"
  exit 3
fi
echo "build-python-ext: $("$python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'): PYTHONPATH=$out $python -c 'import roofbench'"
