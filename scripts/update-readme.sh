#!/usr/bin/env bash
# Regenerates the generated sections of the README and the docs: the kernel catalogue in
# docs/kernels.md (from `roofbench list`, i.e. the registry), the baselines' tables in
# docs/baselines.md and their list in the README (from the committed baselines' summary.md, written
# by the suite), and the GPU visit's commands with each stage's estimate in docs/gpu-visit.md
# (scripts/gpu-check.sh --plan), and the regression check's figures in the README (from each
# reports/ab/<machine>/bench-ab.md, written by scripts/bench-ab.sh). A baseline that fails the
# suite's own evidence check (`roofbench evidence`: an implausible kernel, a lesson off its model,
# a share of the roof fallen since the previous run of its class) is marked in the list with its
# first reasons, and a link to its folder's EVIDENCE.md where one says what is known of it.
# Never edit those sections by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROOFBENCH_BIN:-build/release/roofbench}
[ -x "$bin" ] || { echo "build roofbench first (cmake --preset release && cmake --build --preset release)" >&2; exit 2; }

catalogue=$(mktemp)
results=$(mktemp)
baselines=$(mktemp)
{ echo '```'; "$bin" list; echo '```'; } >"$catalogue"
evidence=$(mktemp)
# Each baseline's results file: results.json.xz as committed (or results.json, results.json.gz).
source scripts/env.sh
files=()
for d in reports/baselines/*/; do f=$(results_file_in "${d%/}") && files+=("$f"); done
"$bin" evidence "${files[@]}" --json "$evidence" >/dev/null || true
[ -s "$evidence" ] || { echo "roofbench evidence wrote no verdicts on reports/baselines" >&2; exit 2; }
verdict() {  # verdict(dir): "" for a baseline that passes, else " — **FAILS ...**: its first reasons"
  python3 - "$evidence" "$1" "$(results_file_in "$1")" <<'PY'
import json, os, sys
files = {f["path"]: f for f in json.load(open(sys.argv[1]))["files"]}
d = sys.argv[2]
f = files.get(sys.argv[3])
if f and not f["ok"]:
    why = "; ".join(f"{x['check']}: `{x['benchmark']}` {x['text']}" for x in f["failures"][:2])
    more = len(f["failures"]) - 2
    if more > 0:
        why += f"; and {more} more"
    note = f" ([what is known]({d}/EVIDENCE.md))" if os.path.isfile(os.path.join(d, "EVIDENCE.md")) else ""
    print(f" — **fails the evidence check** ({len(f['failures'])}): {why}{note}")
PY
}
for summary in reports/baselines/*/summary.md; do
  [ -f "$summary" ] || continue
  dir=$(dirname "$summary")
  title=$(sed -n '1s/^### roofbench: //p' "$summary")
  stamp=$(sed -n '3p' "$summary")
  file=$(basename "$(results_file_in "$dir")")
  echo "- **$title** ($stamp): [tables](docs/baselines.md), [chart]($dir/roofline.svg)," \
    "[report]($dir/report.html), [summary]($dir/summary.md), [$file]($dir/$file)$(verdict "$dir")" \
    >>"$baselines"
  # Links from docs/ lead up one folder.
  { echo "From [\`$dir/$file\`](../$dir/$file) ([chart](../$dir/roofline.svg), [report](../$dir/report.html)):"
    echo
    # docs/baselines.md keeps the short tables (ceilings, the GEMM ladder against the vendor
    # library, the lessons); the counters, the row of every benchmark and the warnings stay in
    # summary.md.
    awk '/^\*\*(Counters|Every benchmark)\*\*/ { exit } { sub(/^### /, "## "); print }' "$summary"
    rows=$(awk '/^\*\*Every benchmark\*\*/ { on = 1; next } on && /^\| `/ { n++ } /^\*\*Warnings\*\*/ { on = 0 }
                END { print n + 0 }' "$summary")
    warnings=$(awk '/^\*\*Warnings\*\*/ { on = 1; next } on && /^- / { n++ } END { print n + 0 }' "$summary")
    rest="the row of each of its $rows benchmarks"
    grep -q '^\*\*Counters\*\* (' "$summary" && rest="$rest, its hardware counters"
    [ "$warnings" -eq 1 ] && rest="$rest and its 1 warning" || rest="$rest and its $warnings warnings"
    echo "The run's full summary, with $rest: [\`$dir/summary.md\`](../$dir/summary.md)."
    echo; } >>"$results"
done

# The GPU visit: each stage's estimate, from the registry and the build's GPU tests (no GPU
# needed), with the GPU machine's 16 cores doing the host's share.
visit=$(mktemp)
trap 'rm -f "$catalogue" "$results" "$baselines" "$visit" "$evidence"' EXIT
[ -s "$baselines" ] || echo "(none committed yet)" >"$baselines"
build=$(dirname "$bin")
if [ -x "$build/tests/test_cuda_kernels" ]; then
  {
    echo "| visit | where | command | estimate |"
    echo "|---|---|---|---|"
    echo "| | here | \`scripts/pack-build.sh build/release .carry/roofbench.tar.xz\` | |"
    v=1
    for st in smoke numbers tests repeat python profile; do
      plan=$(OMP_NUM_THREADS=16 bash scripts/gpu-check.sh "$st" "$build" /dev/null --device cuda:0 --plan 2>/dev/null)
      total=$(sed -n '1s/.*estimate \([0-9]*\) s of the \([0-9]*\) s limit.*/\1 s of \2 s/p' <<<"$plan")
      why=$(sed -n "1s/.*limit (\(.*\)):\$/ (\1)/p" <<<"$plan")
      steps=$(sed -n '2,$p' <<<"$plan" | awk '{printf "%s%s %s s", (NR > 1 ? ", " : ""), $1, $2}')
      limit=""
      case $st in numbers | repeat | python | profile) limit=" --limit L" ;; esac
      [ "$st" = profile ] && v=3  # before the kernel work of issue 51: a later visit, or what a visit has left
      echo "| $v | GPU | \`scripts/gpu-check.sh $st .carry/roofbench.tar.xz \$OUT$limit\` | $total$why: $steps |"
      [ "$st" = numbers ] && v=2
    done
    echo "| | here | \`scripts/visit-baseline.sh VISIT_DIR && scripts/update-readme.sh\` | |"
  } >"$visit"
else
  echo "(a build without CUDA plans no GPU visit: build with nvcc to see the estimates)" >"$visit"
fi

replace() {  # replace(doc, marker, file): swap the lines between <!-- marker:begin --> and <!-- marker:end -->
  grep -qx "<!-- $2:begin -->" "$1" || { echo "$1 has no <!-- $2:begin --> marker" >&2; exit 2; }
  awk -v m="$2" -v f="$3" '
    $0 == "<!-- " m ":begin -->" { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == "<!-- " m ":end -->" { skip = 0 }
    !skip { print }' "$1" >"$1.new" && mv "$1.new" "$1"
}
# The regression check's own figures: false alarms and detection of `ab` against two runs +
# compare, from each committed scripts/bench-ab.sh result (reports/ab/<machine>/bench-ab.md).
ab=$(mktemp)
for md in reports/ab/*/bench-ab.md; do
  [ -f "$md" ] || continue
  dir=$(dirname "$md")
  echo "On $(sed -n '3s/\. Written by.*//p' "$md") ([bench-ab.md]($md), [bench-ab.json]($dir/bench-ab.json)):" >>"$ab"
  echo >>"$ab"
  awk '/^\| path \|/ { on = 1 } on && /^\|/ { print; next } on { exit }' "$md" >>"$ab"
done
[ -s "$ab" ] || echo "(not measured yet: scripts/bench-ab.sh)" >"$ab"
replace README.md ab "$ab"
rm -f "$ab"
replace docs/kernels.md catalogue "$catalogue"
replace docs/baselines.md results "$results"
replace README.md baselines "$baselines"
replace docs/gpu-visit.md visit "$visit"
echo "README.md, docs/kernels.md, docs/baselines.md and docs/gpu-visit.md regenerated"
