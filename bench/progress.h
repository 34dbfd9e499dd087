#pragma once
// What a run tells the person watching it, benchmark by benchmark, as events; the harness emits
// them and a printer (reports/progress.h) turns them into lines. The harness prints nothing itself.
#include <cstddef>
#include <string>

#include "bench/results.h"

namespace roofbench {

class Progress {
 public:
  virtual ~Progress() = default;
  // Benchmark `name` starts: the `done`-th of `total`; repetition 1, 2, ... (--benchmark_repetitions).
  virtual void started(const std::string& name, std::size_t done, std::size_t total, int repetition) = 0;
  virtual void measured(const BenchmarkResult& r) = 0;  // verified and timed
  virtual void counted(const BenchmarkResult& r) = 0;   // its counter pass is done (r.counters)
  virtual void failed(const BenchmarkResult& r) = 0;    // r.error says why; it carries no number
  virtual void stopped(const std::string& why) = 0;     // a stop request ended the benchmark
};

// Prints nothing: for callers that only want the results.
class NoProgress final : public Progress {
 public:
  void started(const std::string&, std::size_t, std::size_t, int) override {}
  void measured(const BenchmarkResult&) override {}
  void counted(const BenchmarkResult&) override {}
  void failed(const BenchmarkResult&) override {}
  void stopped(const std::string&) override {}
};

}  // namespace roofbench
