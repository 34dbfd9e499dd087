#!/usr/bin/env bash
# Makes the committed baseline of a GPU from what a GPU visit brought back (run here, after the
# visit): the `smoke` and `tests` stages' summaries (the GPU tests' tallies), the `numbers`
# stage's merged run (baseline/: results.json, gbench.json, the reports, console.log,
# PROVENANCE.md), from the `repeat` stage the verdicts of its two quick runs (agreement.md,
# agreement.json) and compute-sanitizer's logs (sanitizer.log), and from the `tests` stage's
# archive Nsight Compute's numbers beside roofbench's (appended to PROVENANCE.md). Every file is the suite's or the
# scripts' own output; nothing is edited.
#   scripts/visit-baseline.sh VISIT_DIR [--out DIR]
# VISIT_DIR holds numbers.tar.xz (and tests.tar.xz, repeat.tar.xz when they ran); DIR defaults to
# reports/baselines/<gpu>, <gpu> from the GPU's name in results.json ("NVIDIA H100 80GB HBM3" ->
# h100, "NVIDIA H200" -> h200). Then run scripts/update-readme.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/env.sh"
[ $# -ge 1 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
visit=$1
shift
out=""
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    *) echo "visit-baseline: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -f "$visit/numbers.tar.xz" ] || { echo "visit-baseline: no $visit/numbers.tar.xz (the numbers stage's archive)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/numbers" "$tmp/repeat"
tar -xJf "$visit/numbers.tar.xz" -C "$tmp/numbers"
[ -f "$tmp/numbers/baseline/results.json" ] || { echo "visit-baseline: the numbers stage merged no results" >&2; exit 2; }
if [ -z "$out" ]; then
  name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["name"])' "$tmp/numbers/baseline/results.json")
  [[ $name == NVIDIA* ]] || { echo "visit-baseline: '$name' is not a GPU; give --out DIR" >&2; exit 2; }
  out=$here/reports/baselines/$(slug_of_gpu "$name")
fi
mkdir -p "$out"
cp -L "$tmp/numbers/baseline/"* "$out/"  # -L: the run folder shows its files through links
# The GPU tests' tallies (smoke and tests stages): what ran, passed, failed or was left out.
for st in smoke tests; do
  [ -f "$visit/$st-summary.txt" ] || continue
  {
    echo
    echo "## The $st stage"
    echo
    echo '```'
    cat "$visit/$st-summary.txt"
    echo '```'
  } >>"$out/PROVENANCE.md"
done
{
  echo
  echo "## The numbers stage"
  echo
  echo '```'
  cat "$tmp/numbers/summary.txt"
  echo '```'
} >>"$out/PROVENANCE.md"
if [ -f "$visit/repeat.tar.xz" ]; then
  tar -xJf "$visit/repeat.tar.xz" -C "$tmp/repeat"
  for f in agreement.md agreement.json; do [ -f "$tmp/repeat/$f" ] && cp "$tmp/repeat/$f" "$out/"; done
  logs=$(ls "$tmp/repeat"/{memcheck,racecheck,initcheck,synccheck}.log 2>/dev/null || true)
  if [ -n "$logs" ]; then
    for l in $logs; do echo "==== $(basename "$l" .log)"; cat "$l"; done >"$out/sanitizer.log"
  fi
  {
    echo
    echo "## The repeat stage"
    echo
    echo '```'
    cat "$tmp/repeat/summary.txt"
    echo '```'
  } >>"$out/PROVENANCE.md"
fi
# Nsight Compute beside roofbench's counters: the tests stage's crosscheck, when it came back.
if [ -f "$visit/tests.tar.xz" ]; then
  mkdir -p "$tmp/tests"
  tar -xJf "$visit/tests.tar.xz" -C "$tmp/tests"
  if [ -s "$tmp/tests/xcheck/crosscheck.md" ]; then
    {
      echo
      echo "## Nsight Compute beside roofbench"
      echo
      cat "$tmp/tests/xcheck/crosscheck.md"
    } >>"$out/PROVENANCE.md"
  fi
fi
echo "visit-baseline: wrote $out ($(ls "$out" | tr '\n' ' ')); now run scripts/update-readme.sh"
