// SAXPY on the CPU, y = a·x + y: the memory-bound example kernel (BLAS level 1).
// Run only this: roofbench run --device cpu --filter 'stream/saxpy'
#include "kernels/stream/saxpy.h"

#include <memory>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "roofbench/variant.h"
#include "roofbench/verify.h"

namespace roofbench::stream {
namespace {

// ---------------------------------------------------------------- kernel
// Two FLOPs per twelve bytes: far left of any ridge, so its roof is the DRAM bandwidth. The
// loop is a plain vectorized stream; regular stores (not streaming) as an ordinary kernel would.
class CpuSaxpy final : public Instance {
 public:
  explicit CpuSaxpy(const Params& p) : n_(param(p, "n")), x_(n_), y_(n_), y0_(n_) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_, seed);
    fill_uniform(y0_.data(), n_, seed + 1);
    float* y = y_.data();
    const float* y0 = y0_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) y[i] = y0[i];
  }

  void run() override {
    const float a = kSaxpyAlpha;
    const float* __restrict__ x = x_.data();
    float* __restrict__ y = y_.data();
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) y[i] = a * x[i] + y[i];
  }

  Verification verify() override {
    return check_saxpy(x_.data(), y0_.data(), y_.data(), n_);
  }

 private:
  std::int64_t n_;
  HostBuffer<float> x_, y_, y0_;
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = saxpy_variant();
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = "y = a*x + y over arrays far larger than the last-level cache";
  // 256 MiB and 512 MiB per array: at 64 MiB (2x the reported 32 MiB L3) some of the traffic
  // was still served by caches and SAXPY beat its DRAM roof.
  v.sizes = vector_sizes({1 << 27});  // one size past every cache teaches the lesson
  v.quick_sizes = vector_sizes({1 << 26});
  v.make = [](const Params& p) { return std::make_unique<CpuSaxpy>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::stream
