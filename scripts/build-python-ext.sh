#!/usr/bin/env bash
# Builds roofbench's Python extension for the python3 on PATH (or PYTHON) against a packed build
# (scripts/pack-build.sh's archive, unpacked: its roofbench/ folder) and this source tree, with
# python/prebuilt: on a machine with a compiler, CMake, ninja and nanobind but none of Debian's
# packages, such as a visit's GPU machine, whose Python (3.12) is not the one here.
#   build-python-ext.sh PACKED_DIR OUT_DIR
# Then PYTHONPATH=OUT_DIR python3 -c 'import roofbench' loads it; it prints that line last.
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
# After torch where there is one: a process that loaded an older libstdc++ first (torch, numpy)
# must still load libroofbench, which the archive's libraries were built beside.
PYTHONPATH=$out "$python" -c '
try:
    import torch
except ImportError:
    pass
import numpy, roofbench' ||
  { echo "build-python-ext: the built package does not import (after torch, where there is one)" >&2; exit 1; }
echo "build-python-ext: $("$python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'): PYTHONPATH=$out $python -c 'import roofbench'"
