#include "reports/tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "bench/power.h"
#include "bench/stats.h"
#include "reports/format.h"
#include "roofline/cupti/metrics.h"

namespace roofbench {

BenchmarkCells benchmark_cells(const BenchmarkResult& b, const std::string& empty) {
  BenchmarkCells c{empty, empty, empty, flop_rate_text(b), byte_rate_text(b), empty, empty, empty, empty, empty, empty};
  if (b.waves) c.waves = fmt::format("{:.2f} ({:.0f}%)", b.waves->waves, 100 * b.waves->efficiency);
  if (b.measurement) {
    const Measurement& m = *b.measurement;
    c.median = duration(m.stats.median);
    c.rel_iqr = fmt::format("{:.1f}%", 100 * m.stats.rel_iqr());
    c.samples = std::to_string(m.stats.n);
    if (m.clock_before_hz && m.clock_after_hz)
      c.clock = fmt::format("{:.2f} → {:.2f} GHz", *m.clock_before_hz / 1e9, *m.clock_after_hz / 1e9);
  }
  if (b.placement) {
    if (b.placement->intensity) c.intensity = intensity(*b.placement->intensity);
    if (b.placement->attainable_flop_per_s) c.attainable = si(*b.placement->attainable_flop_per_s, "FLOP/s");
    c.roof_pct = fmt::format("{:.1f}%", b.placement->roof_pct);
    c.bound = b.placement->bound;
  }
  return c;
}


LadderTable gemm_ladder(const Results& r) {
  LadderTable t;
  // GEMMs with M, N and K: anything else in the family (a hand-made file, a future shape) is left out.
  auto is_gemm = [](const BenchmarkResult& b) {
    if (b.family != "gemm") return false;
    int found = 0;
    for (const auto& [k, v] : b.params) found += (k == "M" || k == "N" || k == "K") && v > 0;
    return found == 3;
  };
  const BenchmarkResult* reference = nullptr;
  for (const auto& b : r.benchmarks)
    if (is_gemm(b) && b.vendor_reference) reference = &b;
  if (!reference) return t;
  t.reference = reference->variant;
  auto size_label = [](const Params& p) {
    const std::int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
    return M == N && N == K ? fmt::format("{}³", M) : fmt::format("{}×{}×{}", M, N, K);
  };
  auto find = [&](const std::string& variant, Precision prec, const Params& p) -> const BenchmarkResult* {
    for (const auto& b : r.benchmarks)
      if (is_gemm(b) && b.variant == variant && b.precision == prec && b.params == p && b.measured())
        return &b;
    return nullptr;
  };
  // Sizes in order of work, so the columns read small to large.
  std::vector<Params> sizes;
  for (const auto& b : r.benchmarks)
    if (is_gemm(b) && std::find(sizes.begin(), sizes.end(), b.params) == sizes.end()) sizes.push_back(b.params);
  std::stable_sort(sizes.begin(), sizes.end(), [](const Params& a, const Params& b) {
    auto work = [](const Params& p) { return static_cast<double>(param(p, "M")) * param(p, "N") * param(p, "K"); };
    return work(a) < work(b);
  });
  bool any_reference = false;
  for (const auto& p : sizes) t.sizes.push_back(size_label(p));
  for (const auto& b : r.benchmarks) {
    if (!is_gemm(b)) continue;
    const std::string prec = to_string(b.precision);
    const bool seen = std::any_of(t.rows.begin(), t.rows.end(),
                                  [&](const LadderTable::Row& row) { return row.variant == b.variant && row.precision == prec; });
    if (seen) continue;
    LadderTable::Row row{b.variant, prec,
                         b.math ? fmt::format("{} ({} math)", to_string(b.unit), to_string(*b.math)) : to_string(b.unit),
                         {}};
    for (const auto& p : sizes) {
      const BenchmarkResult* k = find(b.variant, b.precision, p);
      const BenchmarkResult* ref = find(t.reference, b.precision, p);
      std::string cell;
      if (k && k->measurement) {
        const double rate = k->flops / k->measurement->stats.median;
        cell = si(rate, "FLOP/s");
        if (ref && ref->measurement) {
          any_reference = true;
          cell += fmt::format(" ({:.2f}×)", rate / (ref->flops / ref->measurement->stats.median));
        }
      }
      row.cells.push_back(cell);
    }
    t.rows.push_back(std::move(row));
  }
  if (!any_reference) return LadderTable{};
  return t;
}


std::vector<LessonRow> lessons(const Results& r) {
  std::vector<LessonRow> rows;
  for (const auto& b : r.benchmarks) {
    if (b.compared_with.empty() || !b.measured() || !b.measurement) continue;
    if (const BenchmarkResult* form = compared_form(r.benchmarks, b); form && form->measured() && form->measurement) {
      const BenchmarkResult& a = *form;
      const double t = b.measurement->stats.median, ta = a.measurement->stats.median;
      // Forms that declare launches: the time per launch beside the time ("1.52 ms, 1.52 us per launch").
      auto timed = [](const BenchmarkResult& x, double median) {
        double n = 0;
        for (const auto& [path, count] : x.launches) n += count;
        return n > 1 ? duration(median) + ", " + duration(median / n) + " per launch" : duration(median);
      };
      LessonRow row{b.name, a.name, timed(b, t), timed(a, ta), fmt::format("{:.2f}×", ta / t), si(b.bytes, "B"),
                    si(a.bytes, "B"), b.placement ? fmt::format("{:.1f}%", b.placement->roof_pct) : "—"};
      // A pipelined form's roof % is its overlap efficiency: the pipeline's model time over its time.
      // Beside it, against its passes as they ran in the serial form (Placement::overlap_measured).
      if (b.placement && b.pipeline_chunks > 0)
        row.roof_pct += fmt::format(" (overlap efficiency {:.2f}{})", b.placement->roof_pct / 100,
                                    b.placement->overlap_measured
                                        ? fmt::format("; {:.2f} against its passes as measured",
                                                      *b.placement->overlap_measured)
                                        : "");
      if (b.placement && a.placement && b.placement->model_time_s > 0 && a.placement->model_time_s > 0) {
        row.predicted = fmt::format("{:.2f}×", a.placement->model_time_s / b.placement->model_time_s);
        row.bounds = b.placement->bound + " ← " + a.placement->bound;
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}


std::vector<CounterRow> counter_rows(const Results& r) {
  std::vector<CounterRow> rows;
  for (const auto& b : r.benchmarks) {
    if (!b.counters) continue;
    const Counters& c = *b.counters;
    CounterRow row;
    row.name = b.name;
    if (c.passes) row.passes = std::to_string(c.passes);
    row.error = c.error;
    if (c.flops) {
      row.flops = si(*c.flops, "");
      row.flops_ratio = ratio_text(*c.flops, b.flops);
    }
    if (auto it = c.bytes.find(Level::dram); it != c.bytes.end()) {
      row.dram = si(it->second, "B");
      if (b.level == Level::dram) row.dram_ratio = ratio_text(it->second, b.bytes);
    }
    if (auto it = c.bytes.find(Level::l2); it != c.bytes.end()) row.l2 = si(it->second, "B");
    if (auto it = c.bytes.find(Level::l1); it != c.bytes.end()) row.l1 = si(it->second, "B");
    for (const auto& [level, ai] : c.intensity())
      (level == Level::l1 ? row.ai_l1 : level == Level::l2 ? row.ai_l2 : row.ai_dram) = intensity(ai);
    if (c.threads_per_instruction) row.threads_per_instruction = fmt::format("{:.1f}", *c.threads_per_instruction);
    if (c.branch_uniformity) row.branch_uniformity = fmt::format("{:.1f}%", 100 * *c.branch_uniformity);
    if (b.measurement)
      if (const auto t = cupti::trace_check(c, *b.measurement)) {
        // A chain traced as the host launched it holds the launch gaps in its span (25-55 us a
        // kernel on an H200 with the Activity API on): then the kernels' own time is the measure,
        // and the events (held: the kernels back to back) are set beside it.
        const bool gaps = t->gaps_s() > std::max(cupti::kTraceFloorS, cupti::kTraceTolerance * t->span_s);
        const double ref = gaps ? t->busy_s : t->span_s, diff = t->events_s - ref;
        row.trace =
            gaps ? fmt::format("{} busy, a {} span (events {}{})", duration(t->busy_s), duration(t->span_s),
                               diff < 0 ? "−" : "+", duration(std::abs(diff)))
                 : fmt::format("{} (events {}{})", duration(t->span_s), diff < 0 ? "−" : "+", duration(std::abs(diff)));
        // Copies or several streams: how much of the span ran at once (the overlap lesson's evidence).
        if (c.trace->copies > 0 || c.trace->streams > 1)
          row.trace += fmt::format("; {} copies, {} stream{}, {} at once", c.trace->copies, c.trace->streams,
                                   c.trace->streams == 1 ? "" : "s",
                                   c.trace->overlap_s.empty() ? "—" : duration(summarize(c.trace->overlap_s).median));
      }
    rows.push_back(std::move(row));
  }
  return rows;
}


namespace {
// A run's joules, and where they come from when not from the samples' own windows.
std::string joules_text(const EnergySummary& e) {
  return si(e.joules_per_run, "J") + (e.from == "samples" ? "" : " (" + e.from + ")");
}
}  // namespace

EnergyTable energy_table(const Results& r) {
  EnergyTable t;
  t.source = r.device.value("power", std::string());
  if (t.source.rfind("unavailable: ", 0) == 0) {
    t.unavailable = t.source.substr(13);
    return t;
  }
  // Work per joule: a rate over the mean power of the samples it was measured in.
  double best_flop = 0, best_bytes = 0;
  std::string why_not;
  // Each ceiling's burst pass, and its sustained one where it has one (the energy read across its
  // hold: bench/power.h), each at its own rate.
  auto ceiling_row = [&](const Ceiling& c, const Measurement& m, double value, const std::string& name) {
    const auto e = energy_summary(m, &why_not);
    if (!e || !(value > 0)) return;
    EnergyRow row{name, joules_text(*e), si(e->mean_power_w, "W")};
    const double per_j = value / e->mean_power_w;
    if (c.kind == CeilingKind::compute) {
      row.flop_per_j = si(per_j, "FLOP/J");
      if (per_j > best_flop) best_flop = per_j, t.best_flop_ceiling = name;
    } else if (c.kind == CeilingKind::bandwidth) {
      row.bytes_per_j = si(per_j, "B/J");
      if (per_j > best_bytes) best_bytes = per_j, t.best_bytes_ceiling = name;
    }
    t.ceilings.push_back(std::move(row));
  };
  for (const Ceiling& c : r.ceilings) {
    ceiling_row(c, c.measurement, c.value, c.name);
    if (c.measurement_sustained && c.value_sustained)
      ceiling_row(c, *c.measurement_sustained, *c.value_sustained, c.name + " (sustained)");
  }
  if (best_flop > 0) t.best_flop_per_j = si(best_flop, "FLOP/J");
  if (best_bytes > 0) t.best_bytes_per_j = si(best_bytes, "B/J");
  for (const BenchmarkResult& b : r.benchmarks) {
    if (!b.measurement) continue;
    const auto e = energy_summary(*b.measurement, &why_not);
    if (!e) continue;
    const Measurement& m = *b.measurement;
    EnergyRow row{b.name, joules_text(*e), si(e->mean_power_w, "W")};
    if (!m.sample_temperature_c.empty())
      row.temperature = fmt::format("{:.0f} °C", *std::max_element(m.sample_temperature_c.begin(), m.sample_temperature_c.end()));
    if (b.flops > 0) {
      const double per_j = b.flops / e->joules_per_run;
      row.flop_per_j = si(per_j, "FLOP/J");
      if (best_flop > 0) row.flop_share = fmt::format("{:.0f}%", 100 * per_j / best_flop);
    }
    if (b.bytes > 0) {
      const double per_j = b.bytes / e->joules_per_run;
      row.bytes_per_j = si(per_j, "B/J");
      if (best_bytes > 0) row.bytes_share = fmt::format("{:.0f}%", 100 * per_j / best_bytes);
    }
    t.benchmarks.push_back(std::move(row));
  }
  if (t.ceilings.empty() && t.benchmarks.empty())
    t.unavailable = why_not.empty() ? std::string("no sample carried an energy reading") : why_not;
  return t;
}

std::vector<std::pair<std::string, std::string>> all_warnings(const Results& r) {
  std::vector<std::pair<std::string, std::string>> out;
  if (r.partial) out.emplace_back("run", partial_text(*r.partial));
  for (const auto& c : r.ceilings)
    for (const auto& w : c.warnings) out.emplace_back("ceiling " + c.name, w);
  for (const auto& b : r.benchmarks)
    for (const auto& w : b.warnings) out.emplace_back(b.name, w);
  for (const auto& n : r.not_run) out.emplace_back(n.benchmark, "not run: " + n.why);
  return out;
}


}  // namespace roofbench
