#pragma once
// Hardware counters, collected in a pass of their own after a benchmark is timed: the harness
// sees only this interface; roofline/cupti/profiler.cpp implements it with CUPTI's Range
// Profiler on CUDA devices.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/device.h"
#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

class CounterCollector {
 public:
  virtual ~CounterCollector() = default;
  // The metrics a benchmark gets: the user's list (--metrics), else its default set.
  virtual std::vector<std::string> metrics_for(const BenchmarkResult& b) = 0;
  // Replay passes a metric list needs on this device; 0 when CUPTI will not configure a default
  // set here (each benchmark's counters then say why). Throws InputError for a --metrics list
  // CUPTI will not schedule.
  virtual int passes_for(const std::vector<std::string>& metrics) = 0;
  // Counters of one run of `inst`, into b.counters, with the collector's own warnings (a kernel
  // trace that failed, or that disagrees with b's event timing) in b.warnings. Before every
  // replay pass the inputs are made afresh from `seed` (Instance::prepare) and, when `cold`, the
  // caches are flushed, so every pass sees the same work the timed samples did. Never throws: a
  // failure is the counters' `error`.
  virtual void collect(Device& dev, Instance& inst, BenchmarkResult& b, std::uint64_t seed, bool cold) = 0;
  // results.json "counters": the chip, the metric source, and whether counters stayed readable.
  virtual nlohmann::json status() const = 0;
};

struct CounterRequest {
  bool enabled = false;               // --counters or --metrics
  std::vector<std::string> metrics;   // --metrics; empty: each benchmark's default set
};

// A collector for `dev`, or nullptr with *status saying why not (no CUDA device, no permission,
// unsupported GPU, another profiler attached). A collector reads counters, or only traces the
// kernels when counters are off but CUPTI's Activity API works (no permission to read counters
// is the common case): then *status has "available": false with the reason, each benchmark's
// counters an error and a trace. Throws InputError for --metrics names the GPU's chip does not
// have (before anything is measured).
std::unique_ptr<CounterCollector> open_counters(Device& dev, const CounterRequest& req, nlohmann::json* status);

}  // namespace roofbench
