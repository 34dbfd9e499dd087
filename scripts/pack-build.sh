#!/usr/bin/env bash
# Packs a build into one self-contained archive for a GPU machine that has the NVIDIA driver and
# the CUDA toolkit but none of the Debian packages: roofbench, the test binaries that hold GPU
# tests (gpu-tests.txt, written by CMake, names them; the host tests stay here, where CI runs
# them and where the source tree some of them read is), and every shared library they need
# except glibc's (its parts from a newer glibc do not load beside an older one), the driver's and
# the toolkit's cuBLAS (libcublasLt alone is over 500 MB; the GPU machine's toolkit has it), in
# lib/ (the binaries look there first). And the example project's benchmark binary
# (examples/fused_op: the build's target example_fused_op_bench, where the build has it), whose
# CUDA kernel the tests stage runs.
#   scripts/gpu-check.sh STAGE roofbench.tar.xz OUT   runs it there, a stage at a time (docs/gpu-visit.md)
# Usage: scripts/pack-build.sh [BUILD_DIR] [OUT.tar.xz]
set -euo pipefail
build=${1:-build/release}
out=${2:-roofbench.tar.xz}
[ -x "$build/roofbench" ] || { echo "pack-build: no $build/roofbench; build first" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/roofbench/bin" "$stage/roofbench/lib"
bins=("$build/roofbench")
: >"$stage/roofbench/gpu-tests.txt"
if [ -f "$build/gpu-tests.txt" ]; then
  while read -r t; do
    [ -n "$t" ] || continue
    [ -x "$build/tests/$t" ] || { echo "pack-build: $build/tests/$t is listed in gpu-tests.txt but not built" >&2; exit 2; }
    bins+=("$build/tests/$t")
    echo "$t" >>"$stage/roofbench/gpu-tests.txt"
  done <"$build/gpu-tests.txt"
fi
if grep -q '^build examples/fused_op_bench:' "$build/build.ninja" 2>/dev/null; then
  [ -x "$build/examples/fused_op_bench" ] || { echo "pack-build: no $build/examples/fused_op_bench; build first" >&2; exit 2; }
  bins+=("$build/examples/fused_op_bench")
fi
cp "${bins[@]}" "$stage/roofbench/bin/"
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*|libresolv.so.*|libmvec.so.*|libanl.so.*) ;;
    ld-linux*|libcuda.so.*|libnvidia-*|libcublas*) ;;
    *) cp -L "$lib" "$stage/roofbench/lib/" ;;
  esac
done
# CUPTI loads its metric tables (libnvperf_host) and target code (libnvperf_target) at run time,
# from beside itself: they travel with it.
# (awk reads to the end: exiting early would kill ldd with SIGPIPE, and pipefail would end the script.)
cupti=$(for b in "${bins[@]}"; do ldd "$b"; done | awk '/libcupti\.so/ && !found {print $3; found = 1}')
if [ -n "$cupti" ]; then
  for extra in libnvperf_host.so libnvperf_target.so; do
    [ -f "$(dirname "$cupti")/$extra" ] && cp -L "$(dirname "$cupti")/$extra" "$stage/roofbench/lib/"
  done
fi
# What python/prebuilt builds the Python extension with on a machine without Debian's packages
# (scripts/build-python-ext.sh): the header-only nlohmann/json the internal headers include, and
# the definitions the library was built with.
mkdir -p "$stage/roofbench/python/include"
json_hpp=$( (echo '#include <nlohmann/json.hpp>' | ${CXX:-c++} -E -M -x c++ - 2>/dev/null || true) |
  tr ' \\' '\n\n' | awk '/\/nlohmann\/json\.hpp$/ && !found { print; found = 1 }')
[ -n "$json_hpp" ] || { echo "pack-build: no nlohmann/json.hpp on the compiler's include path" >&2; exit 2; }
[ -f "$build/build.ninja" ] || { echo "pack-build: no $build/build.ninja to read the build's definitions from" >&2; exit 2; }
cp -rL "$(dirname "$json_hpp")" "$stage/roofbench/python/include/"
: >"$stage/roofbench/python/defines.txt"
for d in ROOFBENCH_HAVE_CUDA ROOFBENCH_HAVE_SM90A; do
  if grep -q -- "-D$d=1" "$build/build.ninja"; then echo "$d=1" >>"$stage/roofbench/python/defines.txt"; fi
done
mkdir -p "$(dirname "$out")"
XZ_OPT=${XZ_OPT:--3 -T0} tar -cJf "$out" -C "$stage" roofbench  # -3: 2.4x faster than -6, 15% larger
echo "pack-build: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/roofbench/bin" | wc -l) binaries ($(tr '\n' ' ' <"$stage/roofbench/gpu-tests.txt")and roofbench), $(ls "$stage/roofbench/lib" | tr '\n' ' ')"
