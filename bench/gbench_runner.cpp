#include "bench/gbench_runner.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <regex>
#include <sstream>

#include "bench/stats.h"
#include "reports/format.h"
#include "roofline/cupti/metrics.h"

namespace roofbench {

namespace {

// Silent display reporter that feeds Google Benchmark's own JSON reporter; the progress lines
// come from the benchmark bodies, which know the verification outcome.
class JsonCapture final : public benchmark::BenchmarkReporter {
 public:
  JsonCapture() {
    json_.SetOutputStream(&out_);
    json_.SetErrorStream(&err_);
  }
  bool ReportContext(const Context& c) override { return json_.ReportContext(c); }
  void ReportRuns(const std::vector<Run>& runs) override { json_.ReportRuns(runs); }
  void Finalize() override { json_.Finalize(); }
  std::string json() const { return out_.str(); }

 private:
  benchmark::JSONReporter json_;
  std::ostringstream out_, err_;
};

void initialize_gbench(const std::vector<std::string>& args) {
  // Google Benchmark's flags are process-wide: restate the defaults first so that a flag given
  // to an earlier run in this process (a filter, an output file) does not leak into this one.
  // Google Benchmark keeps argv[0] (the "executable" of its JSON context) after this call, so it
  // points at a string that lives as long as the process.
  static char argv0[] = "roofbench";
  std::vector<std::string> storage = {"--benchmark_filter=.", "--benchmark_repetitions=1", "--benchmark_out="};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv = {argv0};
  for (auto& s : storage) argv.push_back(s.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (argc > 1) throw InputError(fmt::format("unknown Google Benchmark flag '{}'", argv[1]));
}

std::string find_flag(const std::vector<std::string>& args, const std::string& flag) {
  for (const auto& a : args)
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  return "";
}

// Set when a failure left the device unusable (a CUDA kernel fault poisons the context for the
// rest of the process): every later benchmark then fails with this one line instead of the
// same CUDA error, so the report names the benchmark that caused it.
struct LostDevice {
  std::string why;  // empty while the device is usable
  void check(Device& dev, const std::string& failed) {
    if (!why.empty()) return;
    if (std::string error = dev.lost(); !error.empty())
      why = fmt::format(
          "not run: the device was lost when {} failed ({}), and nothing after that can run in this process; run "
          "again without it (--skip)",
          failed, error);
  }
};

// The end of a measured benchmark's progress line: median, spread, rates and how sampling ended.
std::string measured_line(const BenchmarkResult& res) {
  const Measurement& m = *res.measurement;
  const SampleStats& s = m.stats;
  std::string line = fmt::format("{} ±{:.1f}% IQR, {} samples", duration(s.median), 100 * s.rel_iqr(), s.n);
  if (res.flops > 0) line += ", " + si(res.flops / s.median, "FLOP/s");
  if (res.bytes > 0) line += ", " + si(res.bytes / s.median, "B/s");
  std::string notes;
  if (m.stop_reason == "time_budget") notes += ", out of time budget";
  if (m.stop_reason == "max_samples") notes += ", at the sample limit";
  if (!m.throttled.empty()) notes += fmt::format(", {} throttled", m.throttled.size());
  return line + fmt::format(" (verified, {} checked{})\n", res.verification.checked, notes);
}

// The counter pass of one measured benchmark: its counters and kernel trace into `res`, a line
// each on the console, and the trace's disagreement with the event timing as a warning.
void collect_counters(CounterCollector& counters, Device& dev, Instance& inst, BenchmarkResult& res,
                      const MeasureOptions& opt, std::ostream& progress) {
  res.counters = counters.collect(dev, inst, res, opt.seed, opt.cold_cache);
  const Counters& c = *res.counters;
  if (!c.error.empty())
    progress << "    counters: " << c.error << "\n";
  else
    progress << fmt::format("    counters ({} pass{}): {}\n", c.passes, c.passes == 1 ? "" : "es",
                            counter_line(c, res.flops, res.bytes));
  // The Activity API's kernel records against the event timing.
  if (c.trace && !c.trace->error.empty()) res.warnings.push_back("trace: " + c.trace->error);
  if (c.trace && c.trace->ok())
    progress << fmt::format(
        "    kernel trace: {} from the first kernel's start to the last one's end ({} kernel{} a run, median of {})\n",
        duration(summarize(c.trace->span_s).median), c.trace->kernels.size(), c.trace->kernels.size() == 1 ? "" : "s",
        c.trace->span_s.size());
  if (res.measurement)
    if (const auto t = cupti::trace_check(c, *res.measurement)) {
      if (std::string w = cupti::trace_warning(*t); !w.empty()) {
        progress << "    " << w << "\n";
        res.warnings.push_back(std::move(w));
      }
    }
  progress << std::flush;
}

}  // namespace

JobsOutput run_jobs(Device& dev, const std::vector<Job>& jobs, const MeasureOptions& opt,
                    const std::vector<std::string>& gbench_args, std::ostream& progress, CounterCollector* counters,
                    const JobFinished& finished) {
  initialize_gbench(gbench_args);
  benchmark::ClearRegisteredBenchmarks();

  std::vector<JobResult> all;
  all.reserve(jobs.size());  // the bodies hold pointers into it: no reallocation after this
  for (const auto& j : jobs) {
    all.push_back({j, declare(*j.variant, j.params)});
    all.back().result.name = j.name();
  }
  std::vector<int> ran(jobs.size(), 0);  // times each job's body ran (repetitions run it again)

  // The progress total follows Google Benchmark's filter when one was given.
  std::size_t total = jobs.size();
  if (const std::string f = find_flag(gbench_args, "--benchmark_filter"); !f.empty() && f != "." && f != "all") {
    try {
      const std::regex re(f);
      total = 0;
      for (const auto& j : jobs) total += std::regex_search(j.name(), re) ? 1 : 0;
    } catch (const std::regex_error&) {
      throw InputError(fmt::format("--benchmark_filter '{}' is not a valid regular expression", f));
    }
  }
  auto done = std::make_shared<std::size_t>(0);
  auto lost = std::make_shared<LostDevice>();

  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job job = jobs[i];
    JobResult* out = &all[i];
    BenchmarkResult* res = &out->result;
    int* runs = &ran[i];
    auto body = [&dev, &opt, &progress, &finished, counters, job, i, out, res, runs, done, total,
                 lost](benchmark::State& state) {
      if (stop_signal()) {  // the run was stopped: this job stays out of the results, as not run
        state.SkipWithError("not run: the run was stopped");
        return;
      }
      if ((*runs)++ == 0) ++*done;
      const bool first = *runs == 1;
      if (!first && !res->error.empty()) {  // a failed benchmark stays failed; no repetition measures it
        state.SkipWithError(res->error.c_str());
        return;
      }
      const std::string rep = first ? "" : fmt::format(" (repetition {})", *runs);
      progress << fmt::format("[{}/{}] {}{} … ", *done, total, res->name, rep) << std::flush;
      // A failure gets no number: its error is recorded and printed, and the device is checked.
      auto fail = [&](std::string why) {
        res->error = std::move(why);
        res->measurement.reset();
        state.SkipWithError(res->error.c_str());
        progress << "FAILED: " << res->error << "\n" << std::flush;
        lost->check(dev, res->name);
      };
      // Right after the timed samples, while the instance lives: the progress line, then the
      // counters in a pass of their own (nothing above was timed under the profiler).
      const AfterMeasure after = [&](Instance& inst, BenchmarkResult& r) {
        progress << measured_line(r) << std::flush;
        if (counters && job.tag.empty() && first && job.variant->launches_kernels) {
          collect_counters(*counters, dev, inst, r, opt, progress);
          if (!r.counters->error.empty()) lost->check(dev, res->name);  // a kernel fault under the profiler
        }
      };

      if (!lost->why.empty()) {
        fail(lost->why);
      } else {
        for (auto _ : state) {
          BenchmarkResult one;
          try {
            one = run_benchmark(dev, *job.variant, job.params, opt, after);
          } catch (const Interrupted& e) {
            state.SkipWithError(e.what());
            progress << e.what() << "\n" << std::flush;
            *runs = 0;  // left out of the results, as not run
            --*done;
            return;
          }
          one.name = res->name;
          if (!one.verified()) {
            res->verification = one.verification;
            fail(one.error.empty() ? "failed" : one.error);
            break;  // Google Benchmark's rule after SkipWithError inside the loop
          }
          state.SetIterationTime(one.measurement->stats.median);
          if (!res->measurement) {
            *res = std::move(one);
            continue;
          }
          // A repetition adds its samples to the first one's measurement; the measurement's
          // warnings are recomputed over all of them, the others (counters, trace) kept.
          for (const auto& w : measurement_warnings(*res->measurement, opt))
            res->warnings.erase(std::remove(res->warnings.begin(), res->warnings.end(), w), res->warnings.end());
          merge_measurements(*res->measurement, *one.measurement);
          for (auto& w : measurement_warnings(*res->measurement, opt)) res->warnings.push_back(std::move(w));
        }
      }
      if (res->verified()) {
        state.counters["FLOP/s"] = benchmark::Counter(res->flops, benchmark::Counter::kIsRate);
        state.counters["bytes/s"] = benchmark::Counter(res->bytes, benchmark::Counter::kIsRate);
        state.SetLabel(fmt::format("verified {} elements", res->verification.checked));
      }
      if (finished) finished(i, *out);
    };
    benchmark::RegisterBenchmark(res->name.c_str(), body)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }

  JsonCapture capture;
  benchmark::RunSpecifiedBenchmarks(&capture);
  benchmark::ClearRegisteredBenchmarks();
  JobsOutput out;
  out.gbench_json = capture.json();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (ran[i]) out.results.push_back(std::move(all[i]));
  return out;
}

}  // namespace roofbench
