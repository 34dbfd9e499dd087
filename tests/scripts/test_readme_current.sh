#!/usr/bin/env bash
# The generated sections of the README and the docs are what scripts/update-readme.sh makes of
# this tree now: the baselines' tables (docs/baselines.md) and their list (README) from the
# committed baselines' summary.md, the CUDA rows of the kernel catalogue (docs/kernels.md) from
# `roofbench list` (the CPU rows name this machine's SIMD and core count, so they are not compared
# here), the GPU visit's estimates (docs/gpu-visit.md) from scripts/gpu-check.sh --plan, and the regression
# check's figures (README) from reports/ab/*/bench-ab.md. A kernel added,
# a baseline re-run or a stage changed without regenerating them fails here, as does a baseline
# that fails the evidence check (roofbench evidence) without its mark in the README.
# Usage: test_readme_current.sh ROOFBENCH_BIN HAVE_CUDA(0|1)
set -uo pipefail
bin=$(realpath "$1") have_cuda=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A copy of what the script reads and writes, so that the tree under test is left alone.
mkdir -p "$tmp/scripts" "$tmp/reports/baselines" "$tmp/docs"
cp "$here/scripts/update-readme.sh" "$here/scripts/gpu-check.sh" "$here/scripts/gpu-lib.sh" \
  "$here/scripts/unpack-build.sh" "$here/scripts/env.sh" "$tmp/scripts/"
cp "$here/README.md" "$tmp/README.md"
# The python stage plans from the kernels' list (gpu-check.sh reads it beside the scripts).
mkdir -p "$tmp/tests/python" && cp "$here/tests/python/gpu_kernels.py" "$tmp/tests/python/"
cp "$here/docs/kernels.md" "$here/docs/baselines.md" "$here/docs/gpu-visit.md" "$tmp/docs/"
for summary in "$here"/reports/baselines/*/summary.md; do
  [ -f "$summary" ] || continue
  d=$(basename "$(dirname "$summary")")
  mkdir -p "$tmp/reports/baselines/$d" && cp "$summary" "$tmp/reports/baselines/$d/"
  # What the evidence check reads, and the note a failing one may link to.
  for f in results.json results.json.xz results.json.gz; do  # as committed: results.json.xz
    [ -f "$here/reports/baselines/$d/$f" ] && ln -s "$here/reports/baselines/$d/$f" "$tmp/reports/baselines/$d/$f"
  done
  [ -f "$here/reports/baselines/$d/EVIDENCE.md" ] && cp "$here/reports/baselines/$d/EVIDENCE.md" "$tmp/reports/baselines/$d/"
done
for md in "$here"/reports/ab/*/bench-ab.md; do
  [ -f "$md" ] || continue
  d=$(basename "$(dirname "$md")")
  mkdir -p "$tmp/reports/ab/$d" && cp "$md" "$tmp/reports/ab/$d/"
done
ROOFBENCH_BIN=$bin bash "$tmp/scripts/update-readme.sh" >/dev/null || fail "update-readme.sh exited $?"

section() {  # section(marker, file): the lines between <!-- marker:begin --> and <!-- marker:end -->
  awk -v m="$1" '$0 == "<!-- " m ":end -->" { on = 0 } on { print } $0 == "<!-- " m ":begin -->" { on = 1 }' "$2"
}
current() {  # current(doc, marker, what): the section is there and is what the script made of it
  [ -n "$(section "$2" "$here/$1")" ] || fail "$1 has no $3"
  diff -u <(section "$2" "$here/$1") <(section "$2" "$tmp/$1") ||
    fail "$1's $3 is not what scripts/update-readme.sh makes of this tree: run it"
  echo "$1, $3: current"
}
current docs/baselines.md results "baselines' tables"
current README.md baselines "list of baselines"
current README.md ab "regression check's figures"

if [ "$have_cuda" = 1 ]; then
  cuda_rows() { section catalogue "$1" | grep '^cuda '; }
  [ -n "$(cuda_rows "$tmp/docs/kernels.md")" ] || fail "roofbench list printed no CUDA rows in a CUDA build"
  diff -u <(cuda_rows "$here/docs/kernels.md") <(cuda_rows "$tmp/docs/kernels.md") ||
    fail "docs/kernels.md's catalogue of CUDA kernels is not what roofbench list prints: run scripts/update-readme.sh"
  echo "docs/kernels.md, catalogue (CUDA rows): current"
  current docs/gpu-visit.md visit "GPU-visit estimates"
else
  echo "catalogue: not compared (a build without CUDA lists no CUDA kernels)"
fi

# The README stays a front door, and every relative link in it and in docs/ leads somewhere.
lines=$(wc -l <"$here/README.md")
[ "$lines" -le 160 ] || fail "README.md has $lines lines: keep it a front door (at most ~150) and move depth to docs/"
for doc in "$here/README.md" "$here"/docs/*.md; do
  base=$(dirname "$doc")
  while read -r target; do
    path=${target%%#*}
    [ -z "$path" ] && continue
    [ -e "$base/$path" ] || fail "${doc#"$here"/} links to $target, which does not exist"
  done < <(sed 's/`[^`]*`//g' "$doc" | grep -o '](\([^)]*\))' | sed 's/^](\(.*\))$/\1/' | grep -v '^[a-z]*://' |
    grep -v '^mailto:')  # (code spans dropped first: `[](const Params& p)` is a lambda, not a link)
done
echo "README.md: $lines lines; every relative link in it and in docs/ resolves"
