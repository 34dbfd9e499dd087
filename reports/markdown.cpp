#include <fmt/format.h>

#include "reports/format.h"
#include "reports/report.h"

namespace roofbench {

std::string render_markdown(const Results& r) {
  std::string s;
  s += fmt::format("### roofbench: {}\n\n", md_cell(device_line(r)));
  s += fmt::format("{}\n\n", md_cell(provenance_line(r)));

  s += "| ceiling | measured | reference | measured / reference |\n";
  s += "|---|---:|---:|---:|\n";
  for (const auto& c : r.ceilings) {
    std::string ref = "—", ratio = "—";
    if (const auto& rv = c.datasheet ? c.datasheet : c.theoretical) {
      ref = si(rv->value, c.value_unit) + (c.datasheet ? " (datasheet)" : " (theoretical)");
      ratio = fmt::format("{:.1f}%", 100 * c.value / rv->value);
    }
    s += fmt::format("| {} | {} | {} | {} |\n", md_cell(ceiling_label(c)), ceiling_value(c), md_cell(ref), ratio);
  }
  s += "\n";

  s += "| benchmark | median | IQR | FLOP/s | bytes/s | FLOP/B | % of roof | bound | status |\n";
  s += "|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& b : r.benchmarks) {
    std::string med = "—", iqr = "—", inten = "—", roof = "—", bound = "—";
    if (b.measurement) {
      med = duration(b.measurement->stats.median);
      iqr = fmt::format("{:.1f}%", 100 * b.measurement->stats.rel_iqr());
    }
    if (b.placement) {
      if (b.placement->intensity) inten = intensity(*b.placement->intensity);
      roof = fmt::format("{:.1f}%", b.placement->roof_pct);
      bound = b.placement->bound;
    }
    s += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(b.name), med, iqr,
                     flop_rate_text(b), byte_rate_text(b), inten, roof, bound, md_cell(status_text(b)));
  }
  bool any_warning = false;
  for (const auto& b : r.benchmarks)
    for (const auto& w : b.warnings) {
      if (!any_warning) s += "\n**Warnings**\n\n";
      any_warning = true;
      s += fmt::format("- `{}`: {}\n", md_cell(b.name), md_cell(w));
    }
  return s;
}

}  // namespace roofbench
