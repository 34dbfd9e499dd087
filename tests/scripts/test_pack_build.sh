#!/usr/bin/env bash
# The archive a GPU session carries: scripts/pack-build.sh packs this build, and
# scripts/unpack-build.sh (what gpu-check.sh and sanitize.sh use on the GPU machine) unpacks it
# with every library found; the unpacked roofbench runs. Usage: test_pack_build.sh BUILD_DIR
set -uo pipefail
build=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "${stage:-}"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$here/scripts/pack-build.sh" "$build" "$tmp/roofbench.tar.xz" || fail "pack-build.sh exited $?"
[ -s "$tmp/roofbench.tar.xz" ] || fail "no archive written"

source "$here/scripts/unpack-build.sh"
unpack_build "$tmp/roofbench.tar.xz" || fail "unpack_build returned $?: $libs_report"
[ -x "$bin/roofbench" ] || fail "no bin/roofbench in the archive"
[ ! -e "$bin/test_sass" ] || fail "test_sass reads this build tree and should stay out of the archive"
for t in "$build"/tests/test_*; do
  [ -f "$t" ] && [ -x "$t" ] || continue  # CTest's test_*_include.cmake files
  name=$(basename "$t")
  [ "$name" = test_sass ] || [ -x "$bin/$name" ] || fail "$name is not in the archive"
done
if [ -x "$build/tests/test_cuda_kernels" ]; then
  for lib in libcupti.so.13 libnvperf_host.so libnvperf_target.so; do
    [ -e "$stage/roofbench/lib/$lib" ] || fail "CUDA build without $lib in the archive's lib/"
  done
fi
# (unpack_build has already failed on any library not found.) Those the archive carries come from its lib/.
grep -q "libfmt.*=> $stage/roofbench/lib/" <<<"$libs_report" || fail "libfmt is not loaded from the archive"
out=$("$bin/roofbench" list 2>&1) || fail "the unpacked roofbench list exited $?: $out"
grep -q 'gemm/naive/fp32' <<<"$out" || fail "the unpacked roofbench lists no gemm/naive/fp32: $out"
echo "pack-build archive: $(du -h "$tmp/roofbench.tar.xz" | cut -f1), $(ls "$bin" | wc -l) binaries, unpacked and run"
