#!/usr/bin/env bash
# `pip install .` of the Python package, as docs/python.md says, into a folder of its own: the
# scikit-build-core build is pointed at this build tree (the same CMake tree and options, so
# nothing is compiled again) and installs the component `python`. The installed package must then
# import from that folder alone (its extension beside libroofbench, found through $ORIGIN) and
# score a kernel.
# Usage: test_pip_install.sh PYTHON SOURCE_DIR BUILD_DIR ROOFBENCH_BIN
set -uo pipefail
py=$1 src=$2 build=$3 bin=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The build tree's own options, so that scikit-build-core's configure changes nothing in it.
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
"$py" -m pip install --no-build-isolation --no-deps --target "$tmp/site" "$src" \
  -C build-dir="$build" -C cmake.build-type="$(cache CMAKE_BUILD_TYPE)" \
  -C cmake.define.ROOFBENCH_TESTS="$(cache ROOFBENCH_TESTS)" -C cmake.define.ROOFBENCH_INSTALL="$(cache ROOFBENCH_INSTALL)" \
  -C cmake.define.ROOFBENCH_CUDA="$(cache ROOFBENCH_CUDA)" >"$tmp/pip.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { tail -40 "$tmp/pip.log"; fail "pip install exited $rc"; }
[ -f "$tmp/site/roofbench/__init__.py" ] || fail "no roofbench/__init__.py in the install: $(ls -R "$tmp/site" | head -30)"
ls "$tmp/site"/roofbench/_roofbench*.so >/dev/null 2>&1 || fail "no extension in the install"
ls "$tmp/site"/roofbench/libroofbench.so* >/dev/null 2>&1 || fail "no libroofbench beside the extension"

# Imported from the install alone: not the build tree's package, and its libroofbench the one beside it.
cd "$tmp" || exit 1
PYTHONPATH="$tmp/site" "$py" - "$tmp/site" <<'PY' || fail "the installed package does not import from its folder"
import os, sys
import roofbench, roofbench._roofbench as ext
site = os.path.realpath(sys.argv[1])
assert os.path.realpath(roofbench.__file__).startswith(site), roofbench.__file__
maps = open("/proc/self/maps").read()
libs = {l.split()[-1] for l in maps.splitlines() if "libroofbench.so" in l}
assert libs and all(os.path.realpath(l).startswith(site) for l in libs), libs
print("imported", roofbench.__file__, "with", sorted(libs))
PY

# And it scores a kernel, on ceilings measured here by the CLI.
"$bin" ceilings --device cpu --quick --skip 'ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_)' \
  --out "$tmp/ceilings" >"$tmp/ceilings.log" 2>&1 || { tail -20 "$tmp/ceilings.log"; fail "roofbench ceilings exited $?"; }
planted=$src/tests/python/planted.py
PYTHONPATH="$tmp/site" "$py" -m roofbench score "$planted::honest" --reference "$planted::reference" --device cpu \
  --quick --ceilings-from "$tmp/ceilings" >"$tmp/score.out" 2>"$tmp/score.err" ||
  { tail -20 "$tmp/score.err"; fail "score of the honest kernel exited $?"; }
"$py" -c 'import json, sys; l = json.loads(open(sys.argv[1]).read()); assert l["ok"], l; print(l)' "$tmp/score.out" ||
  fail "the score line: $(cat "$tmp/score.out")"
echo "pip install . into a folder: the package imports from there and scores a kernel"
