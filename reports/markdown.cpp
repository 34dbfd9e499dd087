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
    const CeilingReference ref = ceiling_reference(c);
    s += fmt::format("| {} | {} | {} | {} |\n", md_cell(ceiling_label(c)), ceiling_value(c),
                     ref.value.empty() ? "—" : md_cell(ref.value), ref.ratio.empty() ? "—" : ref.ratio);
  }
  s += "\n";

  s += "| benchmark | median | IQR | FLOP/s | bytes/s | FLOP/B | % of roof | bound | status |\n";
  s += "|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& b : r.benchmarks) {
    const BenchmarkCells c = benchmark_cells(b, "—");
    s += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(b.name), c.median, c.rel_iqr,
                     c.flop_rate, c.byte_rate, c.intensity, c.roof_pct, c.bound, md_cell(status_text(b)));
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
