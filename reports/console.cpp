#include <fmt/format.h>

#include <algorithm>

#include "reports/format.h"
#include "reports/report.h"

namespace roofbench {

std::string render_console(const Results& r) {
  std::string s;
  s += fmt::format("\n{}\n{}\n\n", device_line(r), provenance_line(r));
  s += fmt::format("{:<22} {:>14} {:>16} {:>8}\n", "ceiling", "measured", "reference", "ratio");
  for (const auto& c : r.ceilings) {
    std::string ref = "", ratio = "";
    const auto& rv = c.datasheet ? c.datasheet : c.theoretical;
    if (rv) {
      ref = si(rv->value, c.value_unit) + (c.datasheet ? "" : "*");
      ratio = fmt::format("{:.1f}%", 100 * c.value / rv->value);
    }
    s += fmt::format("{:<22} {:>14} {:>16} {:>8}\n", ceiling_label(c), ceiling_value(c), ref, ratio);
  }
  s += "(reference: datasheet; * theoretical peak of this machine)\n\n";

  std::size_t w = 9;
  for (const auto& b : r.benchmarks) w = std::max(w, b.name.size());
  s += fmt::format("{:<{}} {:>10} {:>6} {:>14} {:>12} {:>7} {:>7} {:>7}  {}\n", "benchmark", w, "median", "IQR",
                   "FLOP/s", "bytes/s", "FLOP/B", "roof", "bound", "status");
  for (const auto& b : r.benchmarks) {
    std::string med = "—", iqr = "", inten = "", roof = "", bound = "";
    if (b.measurement) {
      med = duration(b.measurement->stats.median);
      iqr = fmt::format("{:.1f}%", 100 * b.measurement->stats.rel_iqr());
    }
    if (b.placement) {
      if (b.placement->intensity) inten = intensity(*b.placement->intensity);
      roof = fmt::format("{:.0f}%", b.placement->roof_pct);
      bound = b.placement->bound;
    }
    s += fmt::format("{:<{}} {:>10} {:>6} {:>14} {:>12} {:>7} {:>7} {:>7}  {}\n", b.name, w, med, iqr,
                     flop_rate_text(b), byte_rate_text(b), inten, roof, bound, status_text(b));
  }
  for (const auto& b : r.benchmarks)
    for (const auto& warn : b.warnings) s += fmt::format("warning: {}: {}\n", b.name, warn);
  return s;
}

}  // namespace roofbench
