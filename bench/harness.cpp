#include "bench/harness.h"

#include <chrono>

namespace roofbench {

nlohmann::json MeasureOptions::to_json() const {
  return {{"cold_cache", cold_cache},
          {"warmup_runs", warmup_runs},
          {"min_samples", min_samples},
          {"max_samples", max_samples},
          {"min_time_s", min_time_s},
          {"max_wall_s", max_wall_s},
          {"seed", seed}};
}

Verification prepare_and_verify(Device& dev, Instance& inst, std::uint64_t seed) {
  inst.prepare(seed);
  inst.run();
  dev.synchronize();
  return inst.verify();
}

Measurement measure(Device& dev, Instance& inst, const MeasureOptions& opt) {
  using clock = std::chrono::steady_clock;
  Measurement m;
  m.timer = dev.timer();
  m.cold_cache = opt.cold_cache;
  for (int i = 0; i < opt.warmup_runs; ++i) {
    if (opt.cold_cache) dev.flush_cache();
    dev.time_run(inst);
  }
  m.warmup_runs = opt.warmup_runs;
  m.clock_before_hz = dev.clock_hz();

  const auto t0 = clock::now();
  double timed = 0;
  for (;;) {
    if (opt.cold_cache) dev.flush_cache();
    const double t = dev.time_run(inst);
    m.samples_s.push_back(t);
    timed += t;
    const int n = static_cast<int>(m.samples_s.size());
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    if (n >= opt.max_samples) {
      m.stop_reason = "max_samples";
      break;
    }
    if (n >= opt.min_samples && timed >= opt.min_time_s) {
      m.stop_reason = "min_time";
      break;
    }
    if (n >= opt.min_samples && wall >= opt.max_wall_s) {
      m.stop_reason = "wall_budget";
      break;
    }
  }
  m.clock_after_hz = dev.clock_hz();
  m.stats = summarize(m.samples_s);
  return m;
}

BenchmarkResult declare(const Variant& v, const Params& params) {
  BenchmarkResult r;
  r.name = v.name(params);
  r.family = v.family;
  r.variant = v.variant;
  r.precision = v.precision;
  r.backend = v.backend;
  r.unit = v.unit;
  r.math = v.math;
  r.level = v.level;
  r.params = params;
  r.flops = v.flops(params);
  r.bytes = v.bytes(params);
  r.work = v.work;
  return r;
}

BenchmarkResult run_benchmark(Device& dev, const Variant& v, const Params& params, const MeasureOptions& opt) {
  BenchmarkResult r = declare(v, params);
  try {
    auto inst = v.make(params);
    r.waves = inst->waves();
    r.verification = prepare_and_verify(dev, *inst, opt.seed);
    if (!r.verification.ok) {
      r.error = "verification failed: " + r.verification.detail;
      return r;
    }
    r.measurement = measure(dev, *inst, opt);
  } catch (const std::exception& e) {
    r.measurement.reset();
    r.error = e.what();
  }
  return r;
}

}  // namespace roofbench
