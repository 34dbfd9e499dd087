#include "reports/progress.h"

#include <fmt/format.h>

#include "bench/power.h"
#include "bench/stats.h"
#include "reports/format.h"

namespace roofbench {

void ConsoleProgress::started(const std::string& name, std::size_t done, std::size_t total, int repetition) {
  const std::string rep = repetition > 1 ? fmt::format(" (repetition {})", repetition) : "";
  out_ << fmt::format("[{}/{}] {}{} … ", done, total, name, rep) << std::flush;
}

// The end of a measured benchmark's line: median, spread, rates and how sampling ended.
void ConsoleProgress::measured(const BenchmarkResult& r) {
  const Measurement& m = *r.measurement;
  const SampleStats& s = m.stats;
  std::string line = fmt::format("{} ±{:.1f}% IQR, {} samples", duration(s.median), 100 * s.rel_iqr(), s.n);
  if (r.flops > 0) line += ", " + si(r.flops / s.median, "FLOP/s");
  if (r.bytes > 0) line += ", " + si(r.bytes / s.median, "B/s");
  std::string notes;
  if (m.stop_reason == "time_budget") notes += ", out of time budget";
  if (m.stop_reason == "noise_floor") notes += ", above the noise target for sure";
  if (m.stop_reason == "max_samples") notes += ", at the sample limit";
  if (!m.throttled.empty()) notes += fmt::format(", {} throttled", m.throttled.size());
  if (const auto e = energy_summary(m)) notes += fmt::format(", {} a run at {}", si(e->joules_per_run, "J"), si(e->mean_power_w, "W"));
  const std::string checked =
      r.timing_only ? std::string("UNVERIFIED, timing only") : fmt::format("verified, {} checked", r.verification.checked);
  out_ << line << " (" << checked << notes << ")\n" << std::flush;
}

// A line for the counters (or why there are none), one for the kernel trace, and the trace's
// disagreement with the event timing when the profiler found one.
void ConsoleProgress::counted(const BenchmarkResult& r) {
  if (!r.counters) return;
  const Counters& c = *r.counters;
  if (!c.error.empty())
    out_ << "    counters: " << c.error << "\n";
  else
    out_ << fmt::format("    counters ({} pass{}): {}\n", c.passes, c.passes == 1 ? "" : "es",
                        counter_line(c, r.flops, r.bytes));
  if (c.trace && c.trace->ok())
    out_ << fmt::format(
        "    kernel trace: {} from the first kernel's start to the last one's end ({} kernel{} a run, median of {})\n",
        duration(summarize(c.trace->span_s).median), c.trace->kernels.size(), c.trace->kernels.size() == 1 ? "" : "s",
        c.trace->span_s.size());
  for (const auto& w : r.warnings)
    if (w.rfind("timing:", 0) == 0 || w.rfind("trace:", 0) == 0) out_ << "    " << w << "\n";
  out_ << std::flush;
}

void ConsoleProgress::failed(const BenchmarkResult& r) {
  out_ << "FAILED: " << r.error << "\n" << std::flush;
}

void ConsoleProgress::stopped(const std::string& why) {
  out_ << why << "\n" << std::flush;
}

}  // namespace roofbench
