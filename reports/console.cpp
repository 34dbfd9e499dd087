#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "reports/format.h"
#include "reports/tables.h"
#include "reports/report.h"

namespace roofbench {

namespace {

// A warning's kind: the word before its first colon ("noise: stopped at ..."), the end pass's
// warnings counted with the start pass's.
std::string kind_of(std::string w) {
  if (w.rfind("end pass: ", 0) == 0) w.erase(0, 10);
  const auto colon = w.find(':');
  return colon == std::string::npos ? "other" : w.substr(0, colon);
}

// What each kind means, in a line; a kind not listed shows its first warning instead.
const std::map<std::string, std::string>& kind_meanings() {
  static const std::map<std::string, std::string> m = {
      {"noise",
       "sampling stopped with an IQR above the noise target: at the time budget, the sample limit, or once the target "
       "was surely out of reach"},
      {"clock", "samples ran below 90% of the clock after the warm-up (throttled)"},
      {"roofline",
       "a ceiling that moved more than 10% from the start to the end of the run, or a kernel above or "
       "off its roof"},
      {"timing", "the CUDA events and CUPTI's kernel trace disagree"},
      {"trace", "no kernel trace"},
      {"not run", "a benchmark left out of the run (another architecture, --skip)"},
      {"merge", "a ceiling measured in two parts of a merged run"},
      {"PARTIAL", "the run did not finish"},
      {"unverified", "declared timing only by its author: no reference checked its output"},
      {"implausible", "above its roof by more than the run's noise: refused (each is printed below)"}};
  return m;
}

}  // namespace

std::string render_console(const Results& r, bool verbose) {
  std::string s;
  s += fmt::format("\n{}\n{}\n\n", device_line(r), provenance_line(r));
  s += fmt::format("{:<22} {:>14} {:>34} {:>28} {:>8}\n", "ceiling", "measured", "start / end, sustained", "reference",
                   "ratio");
  for (const auto& c : r.ceilings) {
    const CeilingReference ref = ceiling_reference(c);
    s += fmt::format("{:<22} {:>14} {:>34} {:>28} {:>8}\n", ceiling_label(c), ceiling_value(c), ceiling_passes(c),
                     ref.value, ref.ratio);
  }
  for (const auto& line : vendor_reference_lines(r)) s += "against the vendor's own: " + line + "\n";
  for (const auto& line : sustained_lines(r)) s += "sustained: " + line + "\n";
  s += "\n";

  std::size_t w = 9;
  for (const auto& b : r.benchmarks) w = std::max(w, b.name.size());
  s += fmt::format("{:<{}} {:>10} {:>6} {:>14} {:>12} {:>7} {:>7} {:>7}  {}\n", "benchmark", w, "median", "IQR",
                   "FLOP/s", "bytes/s", "FLOP/B", "roof", "bound", "status");
  for (const auto& b : r.benchmarks) {
    const BenchmarkCells c = benchmark_cells(b, "");
    s += fmt::format("{:<{}} {:>10} {:>6} {:>14} {:>12} {:>7} {:>7} {:>7}  {}\n", b.name, w,
                     c.median.empty() ? "—" : c.median, c.rel_iqr, c.flop_rate, c.byte_rate, c.intensity, c.roof_pct,
                     c.bound, status_text(b));
  }
  const auto warnings = all_warnings(r);
  if (verbose || warnings.empty()) {
    for (const auto& [what, warning] : warnings) s += fmt::format("warning: {}: {}\n", what, warning);
    return s;
  }
  // Folded: a line per kind; every warning is in summary.md and report.html.
  std::map<std::string, std::pair<int, std::string>> kinds;  // kind -> count, its first warning
  for (const auto& [what, warning] : warnings) {
    auto& k = kinds[kind_of(warning)];
    if (k.first++ == 0) k.second = what + ": " + warning;
  }
  s += fmt::format("\n{} warning{} (each in summary.md and report.html; all of them here with --verbose):\n",
                   warnings.size(), warnings.size() == 1 ? "" : "s");
  for (const auto& [kind, count_first] : kinds) {
    const auto it = kind_meanings().find(kind);
    s += fmt::format("  {:>4} {:<9} {}\n", count_first.first, kind,
                     it != kind_meanings().end() ? it->second : count_first.second);
  }
  // A refused number is never folded away: each in full.
  for (const auto& [what, warning] : warnings)
    if (kind_of(warning) == "implausible") s += fmt::format("IMPLAUSIBLE {}: {}\n", what, warning);
  return s;
}

}  // namespace roofbench
