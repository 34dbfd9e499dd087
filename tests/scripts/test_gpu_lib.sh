#!/usr/bin/env bash
# The parts of scripts/gpu-lib.sh that only a GPU machine exercises (the dress rehearsal runs on
# the CPU, where every GPU test skips and no ncu or compute-sanitizer runs), fed the outputs those
# tools really print: gtest's tally ("[  PASSED  ] 5 tests.", the word padded to the bracket),
# compute-sanitizer's "========= ERROR SUMMARY: N errors", Nsight Compute's "==ERROR==" lines,
# a GPU test binary that found no GPU, tools in their usual homes, and the library path that
# Nsight Compute must see without the archive's libnvperf_*.
# Usage: test_gpu_lib.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$here/scripts/gpu-lib.sh"
ev_begin "$tmp/out" lib 120
trap 'rm -rf "$tmp" "$EV_WORK"' EXIT

# ---------------------------------------------------------------- the one line worth reading
# A GPU test binary's end (gtest 1.12, as on Debian 12 and as the archive carries it).
cat >"$tmp/gtest.log" <<'EOF'
[==========] 147 tests from 6 test suites ran. (41234 ms total)
[  PASSED  ] 140 tests.
[  SKIPPED ] 6 tests, listed below:
[  SKIPPED ] CudaDevice.AFaultLosesTheDevice
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Registry/CudaVariant.MatchesItsReferenceAtEveryTestSize/gemm_wgmma_bf16

 1 FAILED TEST
EOF
got=$(ev_detail "$tmp/gtest.log")
[ "$got" = "[  PASSED  ] 140 tests. [  SKIPPED ] 6 tests [  FAILED  ] 1 test" ] ||
  fail "gtest's tally is not the detail: '$got'"

# compute-sanitizer over the same binary: its error count comes before the tests' tally.
cat >"$tmp/memcheck.log" <<'EOF'
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at relu_kernel+0x1b0
[  PASSED  ] 87 tests.
========= Error: process didn't terminate successfully
========= ERROR SUMMARY: 3 errors
EOF
got=$(ev_detail "$tmp/memcheck.log")
[ "$got" = "========= ERROR SUMMARY: 3 errors" ] || fail "a sanitizer's errors are not the detail: '$got'"
sed -i -e 's/3 errors/0 errors/' -e '/Invalid __global__/d' -e '/terminate successfully/d' "$tmp/memcheck.log"
got=$(ev_detail "$tmp/memcheck.log")
[ "$got" = "[  PASSED  ] 87 tests." ] || fail "a clean sanitizer run does not show its tally: '$got'"

# Nsight Compute refusing the counters, in its words (on stdout, among the CSV).
printf '%s\n' '==PROF== Connected to process 4242 (/tmp/x/roofbench)' \
  '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters' \
  '"ID","Process ID","Kernel Name"' 'roofbench: 2 benchmarks measured, 0 failed, 0 ceilings' >"$tmp/ncu.log"
got=$(ev_detail "$tmp/ncu.log")
[[ $got == "==ERROR== ERR_NVGPUCTRPERM"* ]] || fail "ncu's refusal is not the detail: '$got'"

# ---------------------------------------------------------------- steps on a GPU machine
# A GPU test binary that saw no GPU skips every test and exits 0: on a GPU machine that checked
# nothing, and the step fails; elsewhere (the rehearsal) it passes.
skipping=$tmp/skipping
printf '%s\n' '#!/bin/sh' "printf '%s\\n' '[  SKIPPED ] 3 tests, listed below:' 'test.cpp:12: Skipped' 'no CUDA GPU visible'" \
  >"$skipping" && chmod +x "$skipping"
EV_EXPECT_GPU=1
ev_step gpu-tests 30 "$skipping"
[ "$EV_FAILED" -eq 1 ] || fail "a GPU step whose tests all skipped was not counted as failed"
[[ ${EV_LINES[-1]} == "  FAIL "*"no CUDA GPU visible: the tests skipped, nothing was checked"* ]] ||
  fail "its summary line: '${EV_LINES[-1]}'"
EV_EXPECT_GPU=0
ev_step rehearsal 30 "$skipping"
[ "$EV_FAILED" -eq 1 ] || fail "off a GPU, tests that skip were counted as failed"
[[ ${EV_LINES[-1]} == "  PASS "* ]] || fail "off a GPU: '${EV_LINES[-1]}'"
# A step given under 5 s (a part after one that ran to the stage's cap) does not run: `timeout 0`
# would mean no limit at all. Skipped, and counted as failed.
ev_step starved 0 sleep 8
rc=$?
[ "$rc" -eq 124 ] && [ "$EV_FAILED" -eq 2 ] || fail "a step given 0 s ran or was not counted (exit $rc)"
[[ ${EV_LINES[-1]} == "  SKIPPED "*"starved"*"no time left"* ]] || fail "a starved step's line: '${EV_LINES[-1]}'"
EV_FAILED=1
# A tool that should be there and is not.
ev_fail ncu "no ncu on this machine"
[ "$EV_FAILED" -eq 2 ] || fail "ev_fail was not counted"
[[ ${EV_LINES[-1]} == "  FAIL "*"ncu"*"no ncu on this machine" ]] || fail "ev_fail's line: '${EV_LINES[-1]}'"

# ---------------------------------------------------------------- finding the tools
# The homes a CUDA image uses: the toolkit's own folders, Nsight Compute installed alone.
root=$tmp/root
mkdir -p "$root/cuda-13.0/nsight-compute-2025.3.1" "$root/cuda-13.0/compute-sanitizer" \
  "$root/nvidia/nsight-compute/2025.3.1"
for t in "$root/cuda-13.0/nsight-compute-2025.3.1/ncu" "$root/cuda-13.0/compute-sanitizer/compute-sanitizer"; do
  printf '#!/bin/sh\n' >"$t" && chmod +x "$t"
done
# PATH: a folder for a tool "on PATH", and the two commands ev_find_tool needs, nothing else.
emptypath=$tmp/emptybin:$tmp/sortbin
mkdir -p "$tmp/emptybin" "$tmp/sortbin"
ln -s "$(command -v sort)" "$tmp/sortbin/sort" && ln -s "$(command -v tail)" "$tmp/sortbin/tail"
got=$(PATH=$emptypath ev_find_tool ncu "$root")
[ "$got" = "$root/cuda-13.0/nsight-compute-2025.3.1/ncu" ] || fail "ncu in the toolkit's folder: '$got'"
got=$(PATH=$emptypath ev_find_tool compute-sanitizer "$root")
[ "$got" = "$root/cuda-13.0/compute-sanitizer/compute-sanitizer" ] || fail "compute-sanitizer: '$got'"
rm "$root/cuda-13.0/nsight-compute-2025.3.1/ncu"
printf '#!/bin/sh\n' >"$root/nvidia/nsight-compute/2025.3.1/ncu" && chmod +x "$root/nvidia/nsight-compute/2025.3.1/ncu"
got=$(PATH=$emptypath ev_find_tool ncu "$root")
[ "$got" = "$root/nvidia/nsight-compute/2025.3.1/ncu" ] || fail "ncu installed alone: '$got'"
printf '#!/bin/sh\n' >"$tmp/emptybin/ncu" && chmod +x "$tmp/emptybin/ncu"
got=$(PATH=$emptypath ev_find_tool ncu "$root")
[ "$got" = "$tmp/emptybin/ncu" ] || fail "ncu on PATH does not come first: '$got'"
# Two versions installed alone: the newer, by version order (2025.10 after 2025.9).
mkdir -p "$root/nvidia/nsight-compute/2025.9.0" "$root/nvidia/nsight-compute/2025.10.0"
for v in 2025.9.0 2025.10.0; do
  printf '#!/bin/sh\n' >"$root/nvidia/nsight-compute/$v/ncu" && chmod +x "$root/nvidia/nsight-compute/$v/ncu"
done
got=$(PATH=$tmp/sortbin ev_find_tool ncu "$root")
[ "$got" = "$root/nvidia/nsight-compute/2025.10.0/ncu" ] || fail "not the newest of three versions: '$got'"
got=$(PATH=$emptypath ev_find_tool nosuchtool "$root")
[ -z "$got" ] || fail "a missing tool was found: '$got'"

# ---------------------------------------------------------------- Nsight Compute's library path
# The archive's lib/ out, wherever unpack-build.sh left it (the toolkit's cuBLAS may come first).
lib=/tmp/stage.X/roofbench/lib
got=$(ev_path_without "$lib" "/usr/local/cuda/lib64:$lib:/opt/x")
[ "$got" = "/usr/local/cuda/lib64:/opt/x" ] || fail "lib/ in the middle: '$got'"
got=$(ev_path_without "$lib" "$lib")
[ -z "$got" ] || fail "lib/ alone: '$got'"
got=$(ev_path_without "$lib" "$lib:/a::$lib-other:$lib")
[ "$got" = "/a:$lib-other" ] || fail "repeated, empty and look-alike entries: '$got'"
got=$(cd "$tmp" && ev_path_without "$lib" "/usr/lib/*:$lib")
[ "$got" = "/usr/lib/*" ] || fail "an entry that looks like a pattern was expanded: '$got'"

# ---------------------------------------------------------------- the library path of a step
# The archive's libraries through links, those SKIP names left out, then LD_LIBRARY_PATH without
# the archive's lib/. libstdc++ (the Python steps: newer-stdcxx) is the machine's where it is at
# least as new as the archive's, by the newest GLIBCXX_3.4.N each holds; an ldconfig on PATH plays
# the machine's cache, and small files play the libraries (their version strings are what counts).
arch=$tmp/arch/roofbench/lib sys=$tmp/sys
mkdir -p "$arch" "$sys" "$tmp/fakebin"
for f in libroofbench.so.0.1 libnvperf_host.so libgcc_s.so.1; do echo "$f" >"$arch/$f"; done
printf 'GLIBCXX_3.4.29\0GLIBCXX_3.4.30\0' >"$arch/libstdc++.so.6.0.30"
ln -s libstdc++.so.6.0.30 "$arch/libstdc++.so.6"
echo libgcc >"$sys/libgcc_s.so.1"
{
  echo '#!/bin/sh'
  echo "echo \"3 libs found in cache '/etc/ld.so.cache'\""
  echo "printf '\\tlibstdc++.so.6 (libc6) => /lib32/libstdc++.so.6\\n'"
  echo "printf '\\tlibstdc++.so.6 (libc6,x86-64) => $sys/libstdc++.so.6\\n'"
  echo "printf '\\tlibgcc_s.so.1 (libc6,x86-64) => $sys/libgcc_s.so.1\\n'"
} >"$tmp/fakebin/ldconfig"
chmod +x "$tmp/fakebin/ldconfig"
with_machine() {  # with_machine N CMD...: the machine's libstdc++ provides up to GLIBCXX_3.4.N
  printf 'GLIBCXX_3.4.9\0GLIBCXX_3.4.%s\0GLIBCXX_3.4.2\0' "$1" >"$sys/libstdc++.so.6"
  shift
  PATH=$tmp/fakebin:$PATH "$@"
}
got=$(LD_LIBRARY_PATH="/usr/local/cuda/lib64:$arch" ev_linked_library_path "$arch" "$tmp/l1" '^libnvperf_')
[ "$got" = "$tmp/l1:/usr/local/cuda/lib64" ] || fail "ncu's path: '$got'"
[ ! -e "$tmp/l1/libnvperf_host.so" ] && [ "$(readlink "$tmp/l1/libroofbench.so.0.1")" = "$arch/libroofbench.so.0.1" ] &&
  [ "$(readlink "$tmp/l1/libstdc++.so.6")" = "$arch/libstdc++.so.6" ] || fail "ncu's links: $(ls -l "$tmp/l1")"
[ "$(with_machine 32 ev_machine_stdcxx "$arch")" = "$sys/libstdc++.so.6" ] || fail "a newer machine libstdc++ was not taken"
[ "$(with_machine 30 ev_machine_stdcxx "$arch")" = "$sys/libstdc++.so.6" ] || fail "an equal machine libstdc++ was not taken"
[ -z "$(with_machine 28 ev_machine_stdcxx "$arch")" ] || fail "an older machine libstdc++ was taken (3.4.28 against 3.4.30)"
with_machine 32 ev_linked_library_path "$arch" "$tmp/l2" '^$' newer-stdcxx >/dev/null
[ "$(readlink "$tmp/l2/libstdc++.so.6")" = "$sys/libstdc++.so.6" ] && [ "$(readlink "$tmp/l2/libgcc_s.so.1")" = "$sys/libgcc_s.so.1" ] &&
  [ ! -e "$tmp/l2/libstdc++.so.6.0.30" ] && [ -e "$tmp/l2/libnvperf_host.so" ] || fail "newer-stdcxx, machine newer: $(ls -l "$tmp/l2")"
with_machine 28 ev_linked_library_path "$arch" "$tmp/l3" '^$' newer-stdcxx >/dev/null
[ "$(readlink "$tmp/l3/libstdc++.so.6")" = "$arch/libstdc++.so.6" ] && [ "$(readlink "$tmp/l3/libgcc_s.so.1")" = "$arch/libgcc_s.so.1" ] ||
  fail "newer-stdcxx, archive newer: $(ls -l "$tmp/l3")"
rm "$arch/libstdc++.so.6"  # set aside by unpack-build.sh (an older glibc): the machine's, as it is
[ -z "$(with_machine 32 ev_machine_stdcxx "$arch")" ] || fail "an archive without libstdc++ was compared"
# ---------------------------------------------------------------- a rung under Nsight Compute
# ev_ncu_report, fed by a stand-in for ncu that logs its arguments, exports a report where it is
# told, runs the program it profiles and prints a details page on --import (an old one refuses
# --print-details): the options it is run with, the report and its text, the fallback, and the
# program's exit code passed on with its text written all the same.
mkdir -p "$tmp/ncubin" "$tmp/prof"
cat >"$tmp/ncubin/ncu" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$NCU_LOG"
if [ "$1" = --import ]; then
  if [ "${NCU_OLD:-0}" = 1 ] && [[ " $* " == *" --print-details "* ]]; then
    echo "==ERROR== unrecognised option '--print-details'" >&2
    exit 1
  fi
  echo "  Section: GPU Speed Of Light Throughput ($2)"
  exit 0
fi
while (($#)); do
  case $1 in
    --set | --clock-control | --launch-count) shift 2 ;;
    --export) rep=$2; shift 2 ;;
    --force-overwrite) shift ;;
    *) break ;;
  esac
done
[ "${NCU_NO_REPORT:-0}" = 1 ] || echo report >"$rep.ncu-rep"
"$@"
EOF
chmod +x "$tmp/ncubin/ncu"
export NCU_LOG=$tmp/ncu.log
: >"$NCU_LOG"
ev_ncu_report "$tmp/ncubin/ncu" "$tmp/prof/wmma" 4 touch "$tmp/prof/ran" || fail "ev_ncu_report of a program that exits 0 returned $?"
[ "$(head -n 1 "$NCU_LOG")" = "--set full --clock-control none --launch-count 4 --export $tmp/prof/wmma --force-overwrite touch $tmp/prof/ran" ] ||
  fail "ncu was not run with its full set, the GPU's clocks, 4 launches and an export: $(head -n 1 "$NCU_LOG")"
[ -f "$tmp/prof/ran" ] && [ -f "$tmp/prof/wmma.ncu-rep" ] || fail "the program did not run under ncu, or no report"
grep -qx -- "--import $tmp/prof/wmma.ncu-rep --page details --print-details all" "$NCU_LOG" ||
  fail "the report was not printed with every section's body: $(cat "$NCU_LOG")"
grep -q 'GPU Speed Of Light Throughput' "$tmp/prof/wmma.txt" || fail "no text of the report: $(cat "$tmp/prof/wmma.txt")"
# An ncu without --print-details: its default details page.
NCU_OLD=1 ev_ncu_report "$tmp/ncubin/ncu" "$tmp/prof/old" 4 true || fail "the fallback page failed"
grep -q 'GPU Speed Of Light' "$tmp/prof/old.txt" && ! grep -q ERROR "$tmp/prof/old.txt" ||
  fail "the fallback did not write the default page: $(cat "$tmp/prof/old.txt")"
# A program that exits 1 (a kernel refused): its exit code passed on, its report printed.
ev_ncu_report "$tmp/ncubin/ncu" "$tmp/prof/one" 4 false
rc=$?
[ $rc -eq 1 ] && grep -q 'GPU Speed Of Light' "$tmp/prof/one.txt" || fail "a program's exit 1: returned $rc, text: $(cat "$tmp/prof/one.txt")"
# No report written: a failure, saying so.
NCU_NO_REPORT=1 ev_ncu_report "$tmp/ncubin/ncu" "$tmp/prof/none" 4 true 2>"$tmp/none.err" && fail "no report passed"
grep -q 'ncu wrote no' "$tmp/none.err" || fail "no report, and nothing said: $(cat "$tmp/none.err")"

echo "gpu-lib: all checks passed"
