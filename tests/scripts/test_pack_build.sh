#!/usr/bin/env bash
# The archive a GPU session carries: scripts/pack-build.sh packs roofbench and the binaries that
# hold GPU tests (no host test: they run in CI, and some read this source tree), and
# scripts/unpack-build.sh (what the GPU check uses on the GPU machine) unpacks it with every
# library found; the unpacked roofbench runs. Usage: test_pack_build.sh BUILD_DIR
set -uo pipefail
build=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "${stage:-}"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$here/scripts/pack-build.sh" "$build" "$tmp/roofbench.tar.xz" || fail "pack-build.sh exited $?"
[ -s "$tmp/roofbench.tar.xz" ] || fail "no archive written"
# A visit carries at most 64 MiB in all (the archive, the nanobind and the rest): the archive, packed
# as a visit packs it (the other tests pack with xz -0, for time), keeps to 40 MiB of that.
size=$(stat -c %s "$tmp/roofbench.tar.xz")
((size <= 40 * 1024 * 1024)) || fail "the archive is $((size / 1048576)) MiB, over the 40 MiB of the 64 MiB a visit may carry"

source "$here/scripts/unpack-build.sh"
unpack_build "$tmp/roofbench.tar.xz" || fail "unpack_build returned $?: $libs_report"
[ -x "$bin/roofbench" ] || fail "no bin/roofbench in the archive"
manifest=$stage/roofbench/gpu-tests.txt
[ -f "$manifest" ] || fail "no gpu-tests.txt in the archive"
diff <(sort "$manifest") <(sort "$build/gpu-tests.txt") >/dev/null || fail "the archive's gpu-tests.txt is not the build's"
# Exactly roofbench, the GPU test binaries and, where the build has its target (not under the
# sanitizers), the example's benchmark binary: no host test travels.
example=""
grep -q '^build examples/fused_op_bench:' "$build/build.ninja" && example=fused_op_bench
expected=$( (echo roofbench; echo "$example"; cat "$build/gpu-tests.txt") | sed '/^$/d' | sort)
[ "$(ls "$bin" | sort)" = "$expected" ] || fail "bin/ holds $(ls "$bin" | tr '\n' ' ') instead of $(echo $expected)"
if [ -x "$build/tests/test_cuda_kernels" ]; then
  grep -qx test_cuda_kernels "$manifest" || fail "a CUDA build's archive must carry test_cuda_kernels"
  for lib in libcupti.so.13 libnvperf_host.so libnvperf_target.so; do
    [ -e "$stage/roofbench/lib/$lib" ] || fail "CUDA build without $lib in the archive's lib/"
  done
fi
# (unpack_build has already failed on any library not found.) Those the archive carries come from its lib/.
for lib in libfmt libroofbench; do
  grep -q "$lib.*=> $stage/roofbench/lib/" <<<"$libs_report" || fail "$lib is not loaded from the archive"
done
out=$("$bin/roofbench" list 2>&1) || fail "the unpacked roofbench list exited $?: $out"
grep -q 'gemm/naive/fp32' <<<"$out" || fail "the unpacked roofbench lists no gemm/naive/fp32: $out"
if [ -n "$example" ]; then
  out=$("$bin/fused_op_bench" list --no-builtin 2>&1) || fail "the unpacked example's binary exited $?: $out"
  grep -q 'myops/axpb_relu_fused/fp32' <<<"$out" || fail "the unpacked example lists no myops/axpb_relu_fused: $out"
fi
for t in $(cat "$manifest"); do
  "$bin/$t" --gtest_list_tests >/dev/null 2>&1 || fail "the unpacked $t does not start"
done
echo "pack-build archive: $(du -h "$tmp/roofbench.tar.xz" | cut -f1), $(ls "$bin" | wc -l) binaries, unpacked and run"
