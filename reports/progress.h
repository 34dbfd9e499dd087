#pragma once
// The run's progress as console lines: "[3/40] gemm/naive/fp32/M:1024/N:1024/K:1024 … 1.20 ms ±0.4%
// IQR, 35 samples, 1.79 TFLOP/s, … (verified, 2048 checked)", a counter line and a kernel-trace
// line under a benchmark with counters, "FAILED: why" for a failure.
#include <ostream>

#include "bench/progress.h"

namespace roofbench {

class ConsoleProgress final : public Progress {
 public:
  explicit ConsoleProgress(std::ostream& out) : out_(out) {}
  void started(const std::string& name, std::size_t done, std::size_t total, int repetition) override;
  void measured(const BenchmarkResult& r) override;
  void counted(const BenchmarkResult& r) override;
  void failed(const BenchmarkResult& r) override;
  void stopped(const std::string& why) override;

 private:
  std::ostream& out_;
};

}  // namespace roofbench
