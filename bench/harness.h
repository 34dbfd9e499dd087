#pragma once
// Verify, warm up, then take timed samples, each after a cache flush (cold) by default.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/device.h"
#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

// When to stop sampling. Sampling stops as soon as the samples are precise enough: their
// relative IQR (IQR / median) is at most `target_rel_iqr`, with at least `min_samples` samples
// adding up to `min_time_s`. A noisy benchmark stops instead when its budget of wall time runs
// out (never before kMinSamples samples) or at `max_samples`. Each result records why it stopped.
struct MeasureOptions {
  bool cold_cache = true;
  int warmup_runs = 2;           // untimed runs first (clocks ramp up, code and TLBs warm)
  int min_samples = 20;          // enough for a rank test to see a 5% change (see roofbench compare)
  int max_samples = 2000;
  double target_rel_iqr = 0.01;  // stop once IQR / median <= this...
  double min_time_s = 0.1;       // ...and the timed samples add up to this
  double max_time_s = 5.0;       // the budget per benchmark: wall time, flushes and clock readings included
  double throttle_fraction = 0.9;  // a sample whose clock reads below this x the reference is flagged
  std::uint64_t seed = 20261121;

  static constexpr int kMinSamples = 5;  // the budget never stops a benchmark with fewer

  static MeasureOptions full() { return {}; }
  static MeasureOptions quick() {
    MeasureOptions o;
    o.warmup_runs = 1;
    o.min_samples = 10;
    o.max_samples = 500;
    o.min_time_s = 0.02;
    o.max_time_s = 1.0;
    return o;
  }
  nlohmann::json to_json() const;
};

// prepare(seed) → run → synchronize → verify. Throws whatever the instance throws.
Verification prepare_and_verify(Device& dev, Instance& inst, std::uint64_t seed);

// Warm-up and timed samples of an already verified instance.
Measurement measure(Device& dev, Instance& inst, const MeasureOptions& opt);

// Repetitions (--benchmark_repetitions) add samples to one measurement: the statistics cover all
// of them, and the per-sample clocks stay aligned with the samples or go when one had none.
void merge_measurements(Measurement& into, const Measurement& m);

// What a reader of the numbers should know about how they were taken: throttled samples, and a
// benchmark that ran out of budget before reaching the noise target.
std::vector<std::string> measurement_warnings(const Measurement& m, const MeasureOptions& opt);

// A fresh BenchmarkResult carrying the variant's declarations for `params`.
BenchmarkResult declare(const Variant& v, const Params& params);

// The whole sequence for one benchmark: make, verify and (only if verified) measure.
// Exceptions from the kernel become an error on the result; nothing is thrown.
BenchmarkResult run_benchmark(Device& dev, const Variant& v, const Params& params, const MeasureOptions& opt);

}  // namespace roofbench
