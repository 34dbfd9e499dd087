#pragma once
// Verify, warm up, then take timed samples, each after a cache flush (cold) by default.
#include <cstdint>
#include <string>

#include "bench/device.h"
#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

struct MeasureOptions {
  bool cold_cache = true;
  int warmup_runs = 2;   // at least this many untimed runs first
  int min_samples = 10;  // never stop before this many samples
  int max_samples = 1000;
  double min_time_s = 0.5;   // stop once the timed samples add up to this...
  double max_wall_s = 10.0;  // ...or once this much wall time passed (flushes included)
  std::uint64_t seed = 20261121;

  static MeasureOptions full() { return {}; }
  static MeasureOptions quick() {
    MeasureOptions o;
    o.warmup_runs = 1;
    o.min_samples = 5;
    o.max_samples = 200;
    o.min_time_s = 0.05;
    o.max_wall_s = 1.5;
    return o;
  }
  nlohmann::json to_json() const;
};

// prepare(seed) → run → synchronize → verify. Throws whatever the instance throws.
Verification prepare_and_verify(Device& dev, Instance& inst, std::uint64_t seed);

// Warm-up and timed samples of an already verified instance.
Measurement measure(Device& dev, Instance& inst, const MeasureOptions& opt);

// A fresh BenchmarkResult carrying the variant's declarations for `params`.
BenchmarkResult declare(const Variant& v, const Params& params);

// The whole sequence for one benchmark: make, verify and (only if verified) measure.
// Exceptions from the kernel become an error on the result; nothing is thrown.
BenchmarkResult run_benchmark(Device& dev, const Variant& v, const Params& params, const MeasureOptions& opt);

}  // namespace roofbench
