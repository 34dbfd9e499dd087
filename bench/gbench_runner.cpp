#include "bench/gbench_runner.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <regex>
#include <sstream>

#include "bench/stats.h"
#include "bench/user_regex.h"

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

// What Google Benchmark appends to the name of each benchmark run_jobs registers (Iterations(1),
// UseManualTime()): its filter sees the whole name.
constexpr const char* kGbenchSuffix = "/iterations:1/manual_time";

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

// A repetition adds its samples to the first one's measurement; the measurement's warnings are
// recomputed over all of them, the others (counters, trace) kept.
void add_repetition(BenchmarkResult& into, const Measurement& again, const MeasureOptions& opt) {
  for (const auto& w : measurement_warnings(*into.measurement, opt))
    into.warnings.erase(std::remove(into.warnings.begin(), into.warnings.end(), w), into.warnings.end());
  merge_measurements(*into.measurement, again);
  for (auto& w : measurement_warnings(*into.measurement, opt)) into.warnings.push_back(std::move(w));
}

// What the body of every job of one run_jobs shares.
struct JobsRun {
  Device& dev;
  const MeasureOptions& opt;
  Progress& progress;
  CounterCollector* counters;
  const JobFinished& finished;
  std::size_t total;                    // the jobs Google Benchmark's filter keeps
  std::shared_ptr<std::size_t> done;    // jobs started so far
  std::shared_ptr<LostDevice> lost;
};

// One job, as Google Benchmark runs it (once, or once per repetition): measured by the harness
// (run_benchmark), its counters in a pass of their own after the samples, a repetition's samples
// added to the first's; a failure gets no number, and the device is checked after it.
void run_job(const JobsRun& run, const Job& job, std::size_t i, JobResult* out, int* runs, benchmark::State& state) {
  BenchmarkResult* res = &out->result;
  if (stop_signal()) {  // the run was stopped: this job stays out of the results, as not run
    state.SkipWithError("not run: the run was stopped");
    return;
  }
  if ((*runs)++ == 0) ++*run.done;
  const bool first = *runs == 1;
  if (!first && !res->error.empty()) {  // a failed benchmark stays failed; no repetition measures it
    state.SkipWithError(res->error.c_str());
    return;
  }
  run.progress.started(res->name, *run.done, run.total, *runs);
  // A failure gets no number: its error is recorded and reported, and the device is checked.
  auto fail = [&](std::string why) {
    res->error = std::move(why);
    res->measurement.reset();
    state.SkipWithError(res->error.c_str());
    run.progress.failed(*res);
    run.lost->check(run.dev, res->name);
  };
  // Right after the timed samples, while the instance lives: the progress line, then the
  // counters in a pass of their own (nothing above was timed under the profiler).
  const AfterMeasure after = [&](Instance& inst, BenchmarkResult& r) {
    run.progress.measured(r);
    if (run.counters && job.tag.empty() && first && job.variant->launches_kernels) {
      // Profiled in the cache state it was timed in (a warm variant: warm whatever the run says).
      run.counters->collect(run.dev, inst, r, run.opt.seed,
                            r.measurement ? r.measurement->cold_cache : run.opt.cold_cache);
      run.progress.counted(r);
      if (!r.counters->error.empty()) run.lost->check(run.dev, res->name);  // a kernel fault under the profiler
    }
  };

  if (!run.lost->why.empty()) {
    fail(run.lost->why);
  } else {
    for (auto _ : state) {
      BenchmarkResult one;
      try {
        MeasureOptions held = run.opt;
        held.hold_s = job.hold_s;
        // One energy pass a benchmark: its first measurement's, not a ceiling's later passes (again,
        // brief, end: each would cost the pass again, 1.1 s on a GPU) nor a repetition's.
        if (!job.tag.empty() || !first) held.energy_pass_s = 0;
        one = run_benchmark(run.dev, *job.variant, job.params, held, after);
      } catch (const Interrupted& e) {
        state.SkipWithError(e.what());
        run.progress.stopped(e.what());
        *runs = 0;  // left out of the results, as not run
        --*run.done;
        return;
      }
      one.name = res->name;
      if (!one.measured()) {
        res->verification = one.verification;
        res->recheck = one.recheck;
        fail(one.error.empty() ? "failed" : one.error);
        break;  // Google Benchmark's rule after SkipWithError inside the loop
      }
      state.SetIterationTime(one.measurement->stats.median);
      if (!res->measurement) {
        *res = std::move(one);
        continue;
      }
      add_repetition(*res, *one.measurement, run.opt);
    }
  }
  if (res->measured()) {
    state.counters["FLOP/s"] = benchmark::Counter(res->flops, benchmark::Counter::kIsRate);
    state.counters["bytes/s"] = benchmark::Counter(res->bytes, benchmark::Counter::kIsRate);
    state.SetLabel(res->timing_only ? std::string("UNVERIFIED (timing only)")
                                    : fmt::format("verified {} values", res->verification.checked));
  }
  if (run.finished) run.finished(i, *out);
}

}  // namespace

std::size_t check_gbench_args(const std::vector<std::string>& gbench_args, const std::vector<Job>& jobs) {
  initialize_gbench(gbench_args);
  const std::string f = find_flag(gbench_args, "--benchmark_filter");
  if (f.empty() || f == "." || f == "all") return jobs.size();
  // Google Benchmark reads a leading '-' as "all but these", and matches the names it runs, which
  // carry the suffixes of how each is registered (below: one iteration, manual time).
  const bool negated = f[0] == '-';
  const std::regex re = user_regex("--benchmark_filter", negated ? f.substr(1) : f);
  std::size_t kept = 0;
  for (const auto& j : jobs) kept += std::regex_search(j.name() + kGbenchSuffix, re) != negated ? 1 : 0;
  if (kept == 0 && !jobs.empty())
    throw InputError(fmt::format("--benchmark_filter={} matches none of the {} benchmarks the run plans", f,
                                 jobs.size()));
  return kept;
}

JobsOutput run_jobs(Device& dev, const std::vector<Job>& jobs, const MeasureOptions& opt,
                    const std::vector<std::string>& gbench_args, Progress& progress, CounterCollector* counters,
                    const JobFinished& finished) {
  // The progress total follows Google Benchmark's filter when one was given.
  const std::size_t total = check_gbench_args(gbench_args, jobs);
  benchmark::ClearRegisteredBenchmarks();

  std::vector<JobResult> all;
  all.reserve(jobs.size());  // the bodies hold pointers into it: no reallocation after this
  for (const auto& j : jobs) {
    all.push_back({j, declare(*j.variant, j.params)});
    all.back().result.name = j.name();
  }
  std::vector<int> ran(jobs.size(), 0);  // times each job's body ran (repetitions run it again)

  const JobsRun run{dev,   opt,   progress, counters, finished, total, std::make_shared<std::size_t>(0),
                    std::make_shared<LostDevice>()};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job job = jobs[i];
    JobResult* out = &all[i];
    BenchmarkResult* res = &out->result;
    int* runs = &ran[i];
    auto body = [run, job, i, out, runs](benchmark::State& state) { run_job(run, job, i, out, runs, state); };
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
