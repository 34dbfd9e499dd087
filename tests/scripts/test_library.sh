#!/usr/bin/env bash
# roofbench as a library another project builds against, the way docs/your-kernels.md says: the
# example project (examples/fused_op) is configured, built and run as a separate project against
#   installed  the build installed into a scratch prefix (find_package); every public header also
#              compiles alone there, with nothing but the prefix on the include path;
#   deb        the Debian package `cpack -G DEB` makes, unpacked into a scratch root (dpkg -x): its
#              Depends, its files, and the example built against it, listing its kernels;
#   fetch      roofbench's source through FetchContent (hence add_subdirectory), on a machine
#              whose CUDA toolkit is hidden: the CPU backend alone, no CUDA library linked.
# Each run of the example holds the user's kernels, verified and placed against ceilings measured
# in the same run, and none of roofbench's families (--no-builtin). The DRAM, math and launch
# ceilings its kernels are not placed on are left out (lean): each DRAM ceiling of a quick run on a
# 260 MiB L3 moves 512 MiB arrays and flushes before every sample, and the 17 ceilings were nearly
# all of a 91 s run. The caches stay: the gate's warm run below may be refused only above them.
lean=(--skip 'ceiling/(dram_(read|write|copy|memcpy|triad)|fp64|math_|launch_)')
# Usage: test_library.sh BUILD_DIR installed|deb|fetch
set -uo pipefail
build=$(realpath "$1") mode=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
have_cuda=0
grep -q 'ROOFBENCH_HAVE_CUDA=1' "$build/build.ninja" 2>/dev/null && have_cuda=1

# configure_example(BUILD_DIR cmake-args...): the example as a project of its own.
configure_example() {
  local dir=$1
  shift
  cmake -S "$src/examples/fused_op" -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 ||
    { tail -30 "$dir.configure.log"; fail "the example did not configure ($*)"; }
  cmake --build "$dir" >"$dir.build.log" 2>&1 || { tail -30 "$dir.build.log"; fail "the example did not build"; }
  # roofbench/parallel.h warns a file compiled without OpenMP (its checks would run on one thread).
  if grep -q "compiled without OpenMP" "$dir.build.log"; then
    grep -B2 -A2 "compiled without OpenMP" "$dir.build.log" | head -20
    fail "a file of the example was compiled without OpenMP"
  fi
}

# check_run(RESULTS_DIR EXPECTED_BACKENDS): the user's kernels are there, verified and placed against
# ceilings of the same run, and nothing of roofbench's own families is.
check_run() {
  python3 - "$1/results.json" <<'PY' || fail "the example's results.json is not what a user's run must be"
import json, sys
r = json.load(open(sys.argv[1]))
names = [b["name"] for b in r["benchmarks"]]
mine = [b for b in r["benchmarks"] if b["family"] == "myops"]
assert mine, f"no benchmark of the example in {names}"
others = [n for n in names if not n.startswith("myops/")]
assert not others, f"--no-builtin run holds roofbench's own kernels: {others}"
assert r["settings"]["builtin"] is False, "settings.builtin is not false"
measured = {c["name"] for c in r["ceilings"]}
assert measured, "no ceilings were measured"
for b in mine:
    assert b["verified"] is True and b["timing_only"] is False, f"{b['name']} is not verified"
    p = b["placement"]
    assert p is not None, f"{b['name']} is not placed"
    for roof in (p["bandwidth_ceiling"], p["compute_ceiling"]):
        assert roof in measured, f"{b['name']} is placed against {roof}, not a ceiling of this run ({sorted(measured)})"
    assert 0 < p["roof_pct"] < 200, f"{b['name']} at {p['roof_pct']}% of its roof"
variants = {b["variant"] for b in mine}
assert variants == {"axpb_relu_fused", "axpb_relu_unfused"}, variants
print(f"results: {len(mine)} of the user's benchmarks, verified and placed against {len(measured)} ceilings "
      "of the same run, none of roofbench's families")
PY
}

# check_list(BINARY HAVE_CUDA): `list --no-builtin` shows the user's kernels (CUDA ones when built).
check_list() {
  local out
  out=$("$1" list --no-builtin) || fail "list --no-builtin exited $?"
  grep -q '^cpu   myops/axpb_relu_fused/fp32' <<<"$out" || fail "list --no-builtin lacks the CPU kernel: $out"
  if [ "$2" = 1 ]; then
    grep -q '^cuda  myops/axpb_relu_fused/fp32' <<<"$out" || fail "list --no-builtin lacks the CUDA kernel: $out"
  fi
  grep -q '^[a-z]* *gemm/' <<<"$out" && fail "list --no-builtin lists roofbench's GEMMs"
  # Captured first: grep -q leaving early would fail the pipe (pipefail) while list still writes.
  out=$("$1" list) || fail "list exited $?"
  grep -q 'gemm/naive' <<<"$out" || fail "list without --no-builtin lacks roofbench's own families"
  echo "list: the user's kernels$([ "$2" = 1 ] && echo ", CPU and CUDA"), and roofbench's only without --no-builtin"
}

case $mode in
installed)
  prefix=$tmp/prefix
  step "install the build into a scratch prefix"
  cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "install"; }
  for f in bin/roofbench include/roofbench/roofbench.h include/roofbench/main.h include/roofbench/version.h \
    lib/cmake/roofbench/roofbenchConfig.cmake lib/cmake/roofbench/roofbenchConfigVersion.cmake; do
    [ -e "$prefix/$f" ] || fail "the install lacks $f"
  done
  ls "$prefix"/lib/libroofbench.so* >/dev/null 2>&1 || fail "the install lacks libroofbench.so"
  "$prefix/bin/roofbench" list >/dev/null || fail "the installed CLI does not run"

  step "every public header compiles alone, with only the prefix on the include path"
  n=0
  for h in "$prefix"/include/roofbench/*.h "$prefix"/include/roofbench/*.cuh; do
    [ -e "$h" ] || continue
    name=roofbench/$(basename "$h")
    if [[ $h == *.cuh || $name == roofbench/cuda.h ]]; then
      [ "$have_cuda" = 1 ] || continue
      printf '#include <%s>\n' "$name" >"$tmp/one.cu"
      nvcc -std=c++17 -I"$prefix/include" -c "$tmp/one.cu" -o "$tmp/one.o" 2>"$tmp/one.log" ||
        { cat "$tmp/one.log"; fail "$name does not compile alone (nvcc)"; }
    else
      printf '#include <%s>\n' "$name" | g++ -std=c++17 -fopenmp -Wall -Wextra -Werror -fsyntax-only \
        -I"$prefix/include" -x c++ - 2>"$tmp/one.log" || { cat "$tmp/one.log"; fail "$name does not compile alone"; }
    fi
    n=$((n + 1))
  done
  [ "$n" -ge 10 ] || fail "only $n public headers compiled"
  echo "headers: $n compile alone"

  step "the example, built against the installed package with find_package"
  configure_example "$tmp/example" -DCMAKE_PREFIX_PATH="$prefix"
  bin=$tmp/example/fused_op_bench
  # (ldd's output captured first: grep -q leaving at its first match would make ldd's next write
  # fail, and under pipefail the pipe with it; under load that happened in CI.)
  libs=$(ldd "$bin") || fail "ldd $bin exited $?"
  grep -q "$prefix/lib/libroofbench.so" <<<"$libs" || { echo "$libs"; fail "the example does not load the installed libroofbench"; }
  check_list "$bin" "$have_cuda"
  if [ "$have_cuda" = 1 ]; then
    # Its CUDA file verifies on every core: roofbench::roofbench gave nvcc's host compiler -fopenmp,
    # so check_all's loop there is an OpenMP region (GOMP_parallel), not a serial loop.
    cuobj=$(find "$tmp/example" -name 'fused_op_cuda.cu.o' | head -1)
    [ -n "$cuobj" ] || fail "no object of the example's CUDA file under $tmp/example"
    syms=$(nm "$cuobj") || fail "nm $cuobj exited $?"  # (captured first: see ldd above)
    grep -q 'GOMP_parallel' <<<"$syms" || fail "the example's CUDA file has no OpenMP region: its check runs on one thread"
    echo "the example's CUDA file checks in an OpenMP region"
  fi
  step "the example runs on the CPU with --quick --no-builtin"
  "$bin" run --device cpu --quick --no-builtin "${lean[@]}" --out "$tmp/results" >"$tmp/run.log" 2>&1 ||
    { rc=$?; tail -30 "$tmp/run.log"; fail "the example's run exited $rc"; }
  check_run "$tmp/results"

  step "the CI gate: the example's binary compares a run with a baseline"
  # The gate's run, as docs/your-kernels.md §7 has it on a shared runner: the user's kernels alone
  # (the ceilings from the run above), with samples enough for the rank test. Beside other tests
  # on 2 cores a sample can take 8x the median; the 10-20 samples of a quick run then called a 1.5x
  # slowdown UNSURE (q = 0.02-0.09, in CI and in 2 of 3 runs here beside a roofbench run). 60-120
  # samples called it SLOWER in 6 of 6 such runs (q < 1e-8). --warm: the flush of a 260 MiB L3
  # takes 0.2 s a sample, the kernels 1-3 ms.
  "$bin" run --device cpu --quick --no-builtin --ceilings-from "$tmp/results" --min-samples 60 --budget 10 --warm \
    --out "$tmp/gate" >"$tmp/gate.log" 2>&1 || { rc=$?; tail -30 "$tmp/gate.log"; fail "the gate's run exited $rc"; }
  python3 - "$tmp/gate/results.json" <<'PY' || fail "the gate's run did not take the samples it was asked for"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["settings"]["min_samples"] == 60, r["settings"]
m = {b["variant"]: b["measurement"] for b in r["benchmarks"]}
assert set(m) == {"axpb_relu_fused", "axpb_relu_unfused"}, list(m)
for v, x in m.items():
    assert len(x["samples_s"]) >= 60 or x["stop_reason"] == "time_budget", (v, len(x["samples_s"]), x["stop_reason"])
print("gate run: " + ", ".join(f"{v} {len(x['samples_s'])} samples ({x['stop_reason']})" for v, x in m.items()))
PY
  "$bin" compare "$tmp/gate" "$tmp/gate" --json "$tmp/same.json" >"$tmp/compare.log" 2>&1 ||
    { rc=$?; cat "$tmp/compare.log"; fail "compare of a run with itself exited $rc (expected 0)"; }
  # A regression, made by hand in a scratch copy: every sample of the fused kernel 1.5x longer.
  python3 - "$tmp/gate/results.json" "$tmp/slower" <<'PY' || fail "could not make the slower copy"
import json, os, sys
r = json.load(open(sys.argv[1]))
for b in r["benchmarks"]:
    if b["variant"] == "axpb_relu_fused":
        b["measurement"]["samples_s"] = [s * 1.5 for s in b["measurement"]["samples_s"]]
os.makedirs(sys.argv[2])
json.dump(r, open(os.path.join(sys.argv[2], "results.json"), "w"))
PY
  "$bin" compare "$tmp/gate" "$tmp/slower" --json "$tmp/slower.json" --markdown "$tmp/compare.md" \
    >"$tmp/compare.log" 2>&1
  rc=$?
  [ "$rc" = 1 ] || { cat "$tmp/compare.log"; fail "compare with a 1.5x slower kernel exited $rc (expected 1)"; }
  python3 - "$tmp/same.json" "$tmp/slower.json" <<'PY' || fail "compare's verdicts are not what the gate needs"
import json, sys
same, slower = (json.load(open(f)) for f in sys.argv[1:3])
def verdicts(c):
    return {b["name"].split("/")[1]: (b["verdict"], b["reason"]) for b in c["benchmarks"]}
# Against itself nothing may be SLOWER, FASTER or FAILED (UNSURE when a quick run took few samples).
v = verdicts(same)
assert len(v) == 2 and all(verdict in ("SAME", "UNSURE") for verdict, _ in v.values()), f"a run against itself: {v}"
v = verdicts(slower)
assert v["axpb_relu_fused"][0] == "SLOWER", v
assert v["axpb_relu_unfused"][0] in ("SAME", "UNSURE"), v
print(f"compare: {v}")
PY
  grep -q 'SLOWER' "$tmp/compare.md" || fail "compare --markdown does not show the regression"
  ;;

deb)
  step "cpack -G DEB"
  (cd "$build" && cpack -G DEB -B "$tmp/package" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
  deb=$(ls "$tmp"/package/*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "cpack made no .deb"
  info=$(dpkg-deb -I "$deb")
  depends=$(sed -n 's/^ Depends: //p' <<<"$info")
  for lib in libbenchmark libfmt libopenblas libgomp1 libsleef; do
    grep -q "$lib" <<<"$depends" || fail "the package's Depends lacks $lib: '$depends'"
  done
  contents=$(dpkg-deb -c "$deb")
  for f in ./usr/bin/roofbench ./usr/include/roofbench/variant.h ./usr/lib/cmake/roofbench/roofbenchConfig.cmake ./usr/lib/libroofbench.so; do
    grep -qE " $f( -> .*)?$" <<<"$contents" || fail "the package lacks $f"
  done
  grep -q 'test_' <<<"$contents" && fail "the package carries test binaries"
  echo "package: $(basename "$deb"), Depends: $depends"

  step "dpkg -x into a scratch root; the example built against it"
  dpkg -x "$deb" "$tmp/root" || fail "dpkg -x"
  "$tmp/root/usr/bin/roofbench" --version >/dev/null || fail "the packaged CLI does not run from the scratch root"
  configure_example "$tmp/example" -DCMAKE_PREFIX_PATH="$tmp/root/usr"
  bin=$tmp/example/fused_op_bench
  libs=$(ldd "$bin") || fail "ldd $bin exited $?"
  grep -q "$tmp/root/usr/lib/.*libroofbench.so" <<<"$libs" || { echo "$libs"; fail "the example does not load the packaged libroofbench"; }
  check_list "$bin" "$have_cuda"
  # (Its run is the installed mode's: the same library, the same example.)
  ;;

fetch)
  step "FetchContent of this source tree (add_subdirectory inside), the CUDA toolkit out of sight"
  # No nvcc on PATH, no CUDA_HOME: CMake finds no CUDA compiler and roofbench builds its CPU
  # backend; the example has no CUDA kernel to build either.
  env -u CUDA_HOME -u CUDACXX -u LIBRARY_PATH PATH=/usr/bin:/bin \
    bash -c "$(declare -f configure_example fail); src='$src'; configure_example '$tmp/example' \
      -DROOFBENCH_FROM=fetch -DROOFBENCH_SOURCE=unused -DFETCHCONTENT_SOURCE_DIR_ROOFBENCH='$src' \
      -DCMAKE_CXX_FLAGS_RELEASE='-O0 -DNDEBUG' -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16" || exit 1
  # (-O0 and a unity build, the variant files apart (CMakeLists.txt): this test builds all of
  # roofbench's CPU side once more, the longest part of CI (87 s at -O0 on two cores, 50 s so). It
  # checks that the build works and runs, not how fast; the release build compiles each file
  # alone. So its run verifies and times the example's kernel with no ceiling to place it on:
  # roofs measured from -O0 code would prove nothing, and placement against ceilings of the same
  # run is the installed mode's check.)
  grep -q 'roofbench: CUDA backend OFF' "$tmp/example.configure.log" || fail "roofbench found a CUDA compiler"
  bin=$tmp/example/fused_op_bench
  ldd "$bin" | grep -iE 'cuda|cupti|cublas' && fail "a CPU-only build links CUDA libraries"
  check_list "$bin" 0
  out=$("$bin" list) || fail "list exited $?"
  grep -q '^cuda ' <<<"$out" && fail "a CPU-only build lists CUDA kernels"
  "$bin" run --device cpu --quick --no-builtin --warm --filter '^myops/axpb_relu_fused/' --skip '^ceiling/' \
    --out "$tmp/results" >"$tmp/run.log" 2>&1 || { rc=$?; tail -30 "$tmp/run.log"; fail "the example's run exited $rc"; }
  python3 - "$tmp/results/results.json" <<'PY' || fail "the CPU-only example's run is not what it must be"
import json, sys
r = json.load(open(sys.argv[1]))
assert [b["name"].split("/")[1] for b in r["benchmarks"]] == ["axpb_relu_fused"], [b["name"] for b in r["benchmarks"]]
b = r["benchmarks"][0]
assert b["verified"] is True and b["measurement"]["samples_s"], b
assert r["device"]["kind"] == "cpu", r["device"]
print(f"results: {b['name']} verified and timed in a build without CUDA ({len(b['measurement']['samples_s'])} samples)")
PY
  ;;

*) fail "mode is installed, deb or fetch, not '$mode'" ;;
esac
echo "PASS: $mode"
