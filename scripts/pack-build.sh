#!/usr/bin/env bash
# Packs a build into one self-contained archive: roofbench, the test binaries, and every shared
# library they need except glibc's, the NVIDIA driver's and the toolkit's cuBLAS (libcublasLt
# alone is over 500 MB; the GPU machine's toolkit has it), in lib/ (the binaries look there
# first). Unpacked on a machine that has the driver and the toolkit but none of the Debian
# packages, it runs (with the toolkit's lib64 on LD_LIBRARY_PATH if ldd does not find cuBLAS):
#   tar -xJf roofbench.tar.xz -C /tmp
#   /tmp/roofbench/bin/roofbench run --device cuda:0 --out DIR
#   for t in /tmp/roofbench/bin/test_*; do ROOFBENCH_BIN=/tmp/roofbench/bin/roofbench "$t"; done
# Usage: scripts/pack-build.sh [BUILD_DIR] [OUT.tar.xz]
set -euo pipefail
build=${1:-build/release}
out=${2:-roofbench.tar.xz}
[ -x "$build/roofbench" ] || { echo "pack-build: no $build/roofbench; build first" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/roofbench/bin" "$stage/roofbench/lib"
bins=("$build/roofbench")
for t in "$build"/tests/test_*; do
  # test_sass reads the SASS in this build tree's object files (and needs cuobjdump): it checks
  # the build, not the GPU, and has nothing to read on another machine.
  [ "$(basename "$t")" = test_sass ] && continue
  [ -f "$t" ] && [ -x "$t" ] && bins+=("$t")
done
cp "${bins[@]}" "$stage/roofbench/bin/"
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libcuda.so.*|libnvidia-*|libcublas*) ;;
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
mkdir -p "$(dirname "$out")"
tar -cJf "$out" -C "$stage" roofbench
echo "pack-build: $out ($(du -h "$out" | cut -f1)): $(ls "$stage/roofbench/bin" | wc -l) binaries, $(ls "$stage/roofbench/lib" | tr '\n' ' ')"
