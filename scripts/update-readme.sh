#!/usr/bin/env bash
# Regenerates the README's generated sections: the kernel catalogue (from `roofbench list`, i.e.
# the registry) and the results tables (from the committed baselines' summary.md, written by the
# suite). Never edit those sections by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROOFBENCH_BIN:-build/release/roofbench}
[ -x "$bin" ] || { echo "build roofbench first (cmake --preset release && cmake --build --preset release)" >&2; exit 2; }

catalogue=$(mktemp)
results=$(mktemp)
trap 'rm -f "$catalogue" "$results"' EXIT
{ echo '```'; "$bin" list; echo '```'; } >"$catalogue"
for summary in reports/baselines/*/summary.md; do
  [ -f "$summary" ] || continue
  dir=$(dirname "$summary")
  { echo "From [\`$dir/results.json\`]($dir/results.json) ([chart]($dir/roofline.svg), [report]($dir/report.html)):"
    echo
    # The README keeps the short tables (ceilings, the GEMM ladder against the vendor library,
    # the lessons); the counters, the row of every benchmark and the warnings stay in summary.md.
    awk '/^\*\*(Counters|Every benchmark)\*\*/ { exit } { sub(/^### /, "#### "); print }' "$summary"
    rows=$(awk '/^\*\*Every benchmark\*\*/ { on = 1; next } on && /^\| `/ { n++ } /^\*\*Warnings\*\*/ { on = 0 }
                END { print n + 0 }' "$summary")
    warnings=$(awk '/^\*\*Warnings\*\*/ { on = 1; next } on && /^- / { n++ } END { print n + 0 }' "$summary")
    rest="the row of each of its $rows benchmarks"
    grep -q '^\*\*Counters\*\* (' "$summary" && rest="$rest, its hardware counters"
    [ "$warnings" -eq 1 ] && rest="$rest and its 1 warning" || rest="$rest and its $warnings warnings"
    echo "The run's full summary, with $rest: [\`$dir/summary.md\`]($dir/summary.md)."
    echo; } >>"$results"
done

replace() {  # replace(marker, file): swap the lines between <!-- marker:begin --> and <!-- marker:end -->
  awk -v m="$1" -v f="$2" '
    $0 == "<!-- " m ":begin -->" { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == "<!-- " m ":end -->" { skip = 0 }
    !skip { print }' README.md >README.md.new && mv README.md.new README.md
}
replace catalogue "$catalogue"
replace results "$results"
echo "README.md regenerated"
