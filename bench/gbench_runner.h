#pragma once
// Runs benchmarks under Google Benchmark: each one is registered with manual time, verified
// before its loop, and one gbench iteration is one whole adaptive measurement (warm-up plus
// samples) whose median becomes the iteration time. So Google Benchmark's own flags keep
// working (--benchmark_filter, --benchmark_repetitions, --benchmark_out) and its JSON carries
// the rates as counters, while results.json keeps every raw sample.
#include <iosfwd>
#include <string>
#include <vector>

#include "bench/counters.h"
#include "bench/device.h"
#include "bench/harness.h"

namespace roofbench {

struct Job {
  const Variant* variant = nullptr;
  Params params;
  std::string tag;  // appended to the name when one benchmark runs twice: "pass:end"
  std::string name() const { return variant->name(params) + (tag.empty() ? "" : "/" + tag); }
};

struct JobResult {
  Job job;
  BenchmarkResult result;
};

struct JobsOutput {
  std::vector<JobResult> results;  // the jobs that ran (Google Benchmark's filter may skip some)
  std::string gbench_json;         // Google Benchmark's JSON reporter output
};

// `gbench_args` are --benchmark_* flags passed through to Google Benchmark; an unknown one is an
// InputError. Progress lines go to `progress`. With `counters`, every job without a tag gets a
// counter pass after its timed samples (repetitions and end-of-run passes do not repeat it).
JobsOutput run_jobs(Device& dev, const std::vector<Job>& jobs, const MeasureOptions& opt,
                    const std::vector<std::string>& gbench_args, std::ostream& progress,
                    CounterCollector* counters = nullptr);

}  // namespace roofbench
