#include "roofline/ceilings.h"

#include <algorithm>

#include <fmt/format.h>

#include "bench/cpu_info.h"
#include "roofline/datasheets.h"
#include "roofline/gpu_peaks.h"

namespace roofbench {

// The roof is the better of the two passes: a roof is what the machine can do, and a machine
// that was slower in one pass (a busy neighbour, a warmer chip) could still do the other.
namespace {
// The work of one run of the ceiling's benchmark, in the ceiling's unit.
double ceiling_work(const Variant& v, const BenchmarkResult& b) {
  if (v.ceiling->kind == CeilingKind::bandwidth) return b.bytes;
  if (v.ceiling->kind == CeilingKind::transcendental) {
    const auto it = b.transcendentals.find(v.ceiling->function);
    return it == b.transcendentals.end() ? 0 : it->second;
  }
  if (v.ceiling->kind == CeilingKind::launch) {
    const auto it = b.launches.find(v.ceiling->function);
    return it == b.launches.end() ? 0 : it->second;
  }
  return b.flops;
}
}  // namespace

void add_again_pass(Ceiling& c, const Variant& v, const BenchmarkResult& again, const char* why) {
  const double rate = ceiling_work(v, again) / again.measurement->stats.median;
  // One such pass is kept: a file's own, where it was the faster (the roof is the best pass).
  const bool kept = !c.value_again || rate > *c.value_again;
  if (kept) {
    if (c.measurement_again)  // the file's own pass goes, and its warnings with it
      c.warnings.erase(std::remove_if(c.warnings.begin(), c.warnings.end(),
                                      [](const std::string& w) { return w.rfind("again: ", 0) == 0; }),
                       c.warnings.end());
    c.measurement_again = *again.measurement;
    c.value_again = rate;
    c.value = std::max(c.value, rate);
  }
  c.method += fmt::format("; {} ({:.4g} {}{})", why, rate, c.value_unit,
                          kept ? "" : ", below the pass it had been measured again at before, which is kept");
  if (kept)  // the warnings of the pass kept, not of one measured and set aside
    for (const auto& w : again.warnings) c.warnings.push_back("again: " + w);
}

void add_brief_pass(Ceiling& c, const Variant& v, const BenchmarkResult& brief) {
  const double rate = ceiling_work(v, brief) / brief.measurement->stats.median;
  const std::string benchmark = v.name(brief.params);  // the size it ran at, without its tag
  const bool kept = !c.value_brief || rate > *c.value_brief;  // a file's own, where it was the faster
  if (kept) {
    if (c.measurement_brief)
      c.warnings.erase(std::remove_if(c.warnings.begin(), c.warnings.end(),
                                      [](const std::string& w) { return w.rfind("brief: ", 0) == 0; }),
                       c.warnings.end());
    c.measurement_brief = *brief.measurement;
    c.value_brief = rate;
    c.benchmark_brief = benchmark;
    c.value = std::max(c.value, rate);
    for (const auto& w : brief.warnings) c.warnings.push_back("brief: " + w);
  }
  c.method += fmt::format(
      "; measured once more in samples as brief as the kernel's that came out above it ({}, a median of {:.3g} s: "
      "{:.4g} {}{})",
      params_to_string(brief.params), brief.measurement->stats.median, rate, c.value_unit,
      kept ? "" : ", below the brief pass it had been measured at before, which is kept");
}

Ceiling make_ceiling(const Variant& v, const BenchmarkResult& b, const BenchmarkResult* end,
                     const nlohmann::json& device, const BenchmarkResult* again, const BenchmarkResult* sustained,
                     const BenchmarkResult* brief) {
  const double work = ceiling_work(v, b);
  auto rate = [&](const Measurement& m) { return work / m.stats.median; };
  const bool cuda = device.value("kind", std::string()) == "cuda";
  Ceiling c;
  c.name = v.ceiling->name;
  c.kind = v.ceiling->kind;
  c.method = v.ceiling->method + "; " + b.work +
             (end ? "; the best of a pass at the start and one at the end of the run" : "");
  c.benchmark = b.name;
  c.measurement = *b.measurement;
  c.value_start = rate(c.measurement);
  c.value = c.value_start;
  c.warnings = b.warnings;
  if (!v.ceiling->reference_for.empty()) c.reference_for = v.ceiling->reference_for;
  if (end) {
    c.measurement_end = *end->measurement;
    c.value_end = rate(*c.measurement_end);
    c.value = std::max(c.value, *c.value_end);
    for (const auto& w : end->warnings) c.warnings.push_back("end pass: " + w);
  }
  if (sustained) {
    c.measurement_sustained = *sustained->measurement;
    c.value_sustained = rate(*c.measurement_sustained);
    c.value = std::max(c.value, *c.value_sustained);
    c.method += fmt::format("; measured again held {:.3g} s under load first (sustained)", c.measurement_sustained->held_s);
    for (const auto& w : sustained->warnings) c.warnings.push_back("sustained: " + w);
  }
  if (c.kind == CeilingKind::bandwidth) {
    c.level = v.ceiling->level;
    c.level_roof = v.ceiling->level_roof;
    c.value_unit = "B/s";
  } else if (c.kind == CeilingKind::transcendental) {
    c.precision = v.precision;
    c.unit = v.unit;
    c.function = v.ceiling->function;
    c.value_unit = "op/s";
  } else if (c.kind == CeilingKind::launch) {
    c.unit = v.unit;
    c.function = v.ceiling->function;
    c.value_unit = "launch/s";
  } else {
    c.precision = v.precision;
    c.unit = v.unit;
    c.value_unit = "FLOP/s";
  }
  if (again) add_again_pass(c, v, *again, "measured once more after a kernel came out above it");
  if (brief) add_brief_pass(c, v, *brief);
  if (cuda) c.datasheet = datasheet_value(device.value("name", std::string()), c);
  // Theoretical peaks at the clock measured around the samples of the pass that gave the value
  // (the mean of the readings before and after).
  const Measurement& m = c.roof_pass();
  const std::optional<double> measured_hz =
      m.clock_before_hz && m.clock_after_hz ? std::optional<double>(0.5 * (*m.clock_before_hz + *m.clock_after_hz))
                                            : m.clock_before_hz;
  if (cuda && measured_hz) c.theoretical = gpu_theoretical(device, c, *measured_hz);
  if (!cuda && c.kind == CeilingKind::compute && c.precision &&
      (*c.precision == Precision::fp32 || *c.precision == Precision::fp64)) {
    // /proc/cpuinfo's nominal clock only when no reading was possible.
    const CpuInfo& cpu = cpu_info();
    const double hz = measured_hz.value_or(cpu.nominal_hz);
    if (hz > 0) {
      const bool fp64 = *c.precision == Precision::fp64;
      c.theoretical = ReferenceValue{theoretical_fma_peak(cpu, fp64, hz), theoretical_fma_derivation(cpu, fp64, hz)};
    }
  }
  return c;
}

}  // namespace roofbench
