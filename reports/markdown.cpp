#include <fmt/format.h>

#include "reports/format.h"
#include "reports/tables.h"
#include "reports/report.h"

namespace roofbench {

std::string render_markdown_ladder(const Results& r) {
  const LadderTable t = gemm_ladder(r);
  if (t.rows.empty()) return "";
  std::string s = fmt::format("**GEMM ladder** (FLOP/s, and the ratio to {} at the same precision and size)\n\n",
                              md_code(t.reference));
  s += "| variant | precision | unit |";
  for (const auto& size : t.sizes) s += " " + md_cell(size) + " |";
  s += "\n|---|---|---|";
  for (std::size_t i = 0; i < t.sizes.size(); ++i) s += "---:|";
  s += "\n";
  for (const auto& row : t.rows) {
    s += fmt::format("| {} | {} | {} |", md_cell(row.variant), md_cell(row.precision), md_cell(row.unit));
    for (const auto& cell : row.cells) s += " " + (cell.empty() ? std::string("—") : md_cell(cell)) + " |";
    s += "\n";
  }
  return s + "\n";
}

// Energy: one line saying why there is none, or each benchmark's joules a run and work per joule
// against the best ceiling's.
std::string render_markdown_energy(const Results& r) {
  const EnergyTable t = energy_table(r);
  if (!t.unavailable.empty()) return "\n**Energy**: unavailable: " + md_cell(t.unavailable) + "\n";
  std::string s = fmt::format(
      "\n**Energy** ({}; the mean power over the samples' windows, or where they are briefer than 10 updates of the "
      "counter over a back-to-back run (hold) or (pass), times the median time; the best ceilings: {}{}, {}{})\n\n",
      md_cell(t.source), t.best_flop_per_j, t.best_flop_ceiling.empty() ? "" : " by " + md_code(t.best_flop_ceiling),
      t.best_bytes_per_j, t.best_bytes_ceiling.empty() ? "" : " by " + md_code(t.best_bytes_ceiling));
  s += "| benchmark | J a run | mean power | hottest | FLOP/J | of the best | B/J | of the best |\n";
  s += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto* rows : {&t.ceilings, &t.benchmarks})
    for (const EnergyRow& e : *rows)
      s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", md_code(e.name), e.joules, e.watts,
                       e.temperature, e.flop_per_j, e.flop_share, e.bytes_per_j, e.bytes_share);
  return s;
}

std::string render_markdown_counters(const Results& r) {
  std::string s;
  if (!r.counters.is_null() && !r.counters.value("available", false))
    s += fmt::format("**Counters**: none ({})\n\n", md_cell(r.counters.value("reason", std::string("unavailable"))));
  const auto rows = counter_rows(r);
  if (rows.empty()) return s;
  s += "**Counters** (CUPTI, a separate pass after the timed samples; measured beside declared; FLOP/B at each "
       "level: measured FLOPs over the bytes counted there)\n\n";
  s += "| benchmark | passes | FLOPs | ÷ declared | HBM bytes | ÷ declared | L2 bytes | L1 bytes | FLOP/B L1 "
       "| FLOP/B L2 | FLOP/B HBM | threads/inst | uniform branches | kernel time (trace) |\n";
  s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& c : rows) {
    if (!c.error.empty()) {
      s += fmt::format("| {} | {} | {} | | | | | | | | | | | {} |\n", md_code(c.name), c.passes, md_cell(c.error),
                       md_cell(c.trace));
      continue;
    }
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_code(c.name),
                     c.passes, c.flops, c.flops_ratio, c.dram, c.dram_ratio, c.l2, c.l1, c.ai_l1, c.ai_l2, c.ai_dram,
                     c.threads_per_instruction, c.branch_uniformity, md_cell(c.trace));
  }
  return s + "\n";
}

std::string render_markdown(const Results& r) {
  std::string s;
  s += fmt::format("### roofbench: {}\n\n", md_cell(device_line(r)));
  s += fmt::format("{}\n\n", md_cell(provenance_line(r)));
  if (const std::string h = host_time_line(r); !h.empty()) s += fmt::format("{}\n\n", md_cell(h));

  s += "| ceiling | measured | start / end of run | reference | measured / reference |\n";
  s += "|---|---:|---:|---:|---:|\n";
  for (const auto& c : r.ceilings) {
    const CeilingReference ref = ceiling_reference(c);
    const std::string passes = ceiling_passes(c);
    s += fmt::format("| {} | {} | {} | {} | {} |\n", md_cell(ceiling_label(c)), md_cell(ceiling_value(c)),
                     passes.empty() ? "—" : md_cell(passes), ref.value.empty() ? "—" : md_cell(ref.value),
                     ref.ratio.empty() ? "—" : ref.ratio);
  }
  s += "\n";
  if (const auto held = sustained_lines(r); !held.empty()) {
    s += "**Burst and sustained roofs** (each kernel is placed against the one of the clock it ran at):";
    for (std::size_t i = 0; i < held.size(); ++i) s += (i ? "; " : " ") + md_cell(held[i]);
    s += "\n\n";
  }
  if (const auto vendor = vendor_reference_lines(r); !vendor.empty()) {
    s += "**Against the vendor's own routines**, measured in the same run:";
    for (std::size_t i = 0; i < vendor.size(); ++i) s += (i ? "; " : " ") + md_cell(vendor[i]);
    s += "\n\n";
  }

  s += render_markdown_ladder(r);

  if (const auto rows = lessons(r); !rows.empty()) {
    s += "**Lessons** (each kernel against the form it improves on, at the same size; bytes as declared; "
         "predicted: the speedup the model expects from this run's roofs, and what binds each form)\n\n";
    s += "| benchmark | against | time | against | speedup | predicted | bound | bytes | against | % of roof |\n";
    s += "|---|---|---:|---:|---:|---:|---|---:|---:|---:|\n";
    for (const auto& l : rows)
      s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_code(l.name), md_code(l.against),
                       l.time, l.against_time, l.speedup, l.predicted, md_cell(l.bounds), l.bytes, l.against_bytes,
                       l.roof_pct);
    s += "\n";
  }

  s += render_markdown_counters(r);

  s += "**Every benchmark**\n\n";
  s += "| benchmark | median | IQR | FLOP/s | bytes/s | FLOP/B | % of roof | bound | waves (efficiency) | status |\n";
  s += "|---|---:|---:|---:|---:|---:|---:|---|---:|---|\n";
  for (const auto& b : r.benchmarks) {
    const BenchmarkCells c = benchmark_cells(b, "—");
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_code(b.name), c.median, c.rel_iqr,
                     c.flop_rate, c.byte_rate, c.intensity, c.roof_pct, md_cell(c.bound), md_cell(c.waves),
                     md_cell(status_text(b)));
  }
  if (const auto spread = spread_of(r)) s += "\n**Spread**: " + md_cell(spread_text(*spread)) + "\n";
  s += render_markdown_energy(r);
  const auto warnings = all_warnings(r);
  if (!warnings.empty()) s += "\n**Warnings**\n\n";
  for (const auto& [what, warning] : warnings) s += fmt::format("- {}: {}\n", md_code(what), md_cell(warning));
  return s;
}

}  // namespace roofbench
