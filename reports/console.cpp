#include <fmt/format.h>

#include <algorithm>

#include "reports/format.h"
#include "reports/tables.h"
#include "reports/report.h"

namespace roofbench {

std::string render_console(const Results& r) {
  std::string s;
  s += fmt::format("\n{}\n{}\n\n", device_line(r), provenance_line(r));
  s += fmt::format("{:<22} {:>14} {:>24} {:>28} {:>8}\n", "ceiling", "measured", "start / end", "reference", "ratio");
  for (const auto& c : r.ceilings) {
    const CeilingReference ref = ceiling_reference(c);
    s += fmt::format("{:<22} {:>14} {:>24} {:>28} {:>8}\n", ceiling_label(c), ceiling_value(c), ceiling_passes(c),
                     ref.value, ref.ratio);
  }
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
  for (const auto& [what, warning] : all_warnings(r)) s += fmt::format("warning: {}: {}\n", what, warning);
  return s;
}

}  // namespace roofbench
