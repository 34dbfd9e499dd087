#pragma once
// Runs benchmarks under Google Benchmark: each one is registered with manual time, verified
// before its loop, and one gbench iteration is one whole adaptive measurement (warm-up plus
// samples) whose median becomes the iteration time. So Google Benchmark's own flags keep
// working (--benchmark_filter, --benchmark_repetitions, --benchmark_out) and its JSON carries
// the rates as counters, while results.json keeps every raw sample.
#include <functional>
#include <string>
#include <vector>

#include "bench/counters.h"
#include "bench/device.h"
#include "bench/harness.h"
#include "bench/plan.h"
#include "bench/progress.h"

namespace roofbench {

struct JobResult {
  Job job;
  BenchmarkResult result;
};

struct JobsOutput {
  std::vector<JobResult> results;  // the jobs that ran (Google Benchmark's filter may skip some)
  std::string gbench_json;         // Google Benchmark's JSON reporter output
};

// Called after each job's body, passed or failed, with the job's index in `jobs` and its result
// so far (a run writes its partial results file from it).
using JobFinished = std::function<void(std::size_t index, const JobResult&)>;

// `gbench_args` are --benchmark_* flags passed through to Google Benchmark; an unknown one is an
// InputError. What happens goes to `progress` as events. With `counters`, every job without a tag gets a
// counter pass after its timed samples (repetitions and end-of-run passes do not repeat it).
// Each job goes through run_benchmark (bench/harness.h), the sequence the tests check. Once a
// stop is requested (request_stop) the job being measured and every later one are left out of
// the output, as not run.
// The --benchmark_* flags as run_jobs will take them: an unknown flag, or a --benchmark_filter
// that leaves none of `jobs`, is an InputError. Returns how many jobs the filter keeps. A run
// checks this before it opens its output folder or measures anything.
std::size_t check_gbench_args(const std::vector<std::string>& gbench_args, const std::vector<Job>& jobs);

JobsOutput run_jobs(Device& dev, const std::vector<Job>& jobs, const MeasureOptions& opt,
                    const std::vector<std::string>& gbench_args, Progress& progress,
                    CounterCollector* counters = nullptr, const JobFinished& finished = {});

}  // namespace roofbench
