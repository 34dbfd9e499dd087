// y = gelu(x + bias) on the CPU in FP32: two passes through memory against one (the fusion lesson
// on a chain that real networks run). Run only this: roofbench run --device cpu --filter 'fusion/bias_gelu'
#include <algorithm>
#include <cmath>
#include <memory>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/vmath.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
// Unfused: t = x + bias is written out whole, then read back for the GELU.
class CpuBiasGelu final : public Instance {
 public:
  CpuBiasGelu(const Params& p, bool fused)
      : n_(param(p, "n")), fused_(fused), x_(n_), y_(n_), t_(fused ? 0 : n_), bias_(kBiasLength),
        vm_(vmath::ops(vmath::stores_for(sizeof(float) * static_cast<std::size_t>(n_) * (fused ? 2 : 3)))) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_, seed, -3.0, 3.0);
    fill_uniform(bias_.data(), kBiasLength, seed + 1, -1.0, 1.0);
    // y, and the unfused form's t: a bias pass that wrote only part of t must not pass on what an
    // earlier instance left in the same memory.
    for (HostBuffer<float>* b : {&y_, &t_}) b->poison();
  }

  void run() override {
    const float* __restrict__ x = x_.data();
    const float* __restrict__ b = bias_.data();
    float* __restrict__ y = y_.data();
    const std::int64_t n = n_;
    const vmath::Ops& vm = vm_;
    // One bias row of kBiasLength at a time, so that x, the bias and y line up element for element.
    const std::int64_t rows = (n + kBiasLength - 1) / kBiasLength;
    if (fused_) {
#pragma omp parallel for schedule(static)
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t at = r * kBiasLength;
        vm.bias_gelu(x + at, b, y + at, std::min<std::int64_t>(kBiasLength, n - at));
      }
      return;
    }
    float* __restrict__ t = t_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t at = r * kBiasLength;
      vm.add(x + at, b, t + at, std::min<std::int64_t>(kBiasLength, n - at));
    }
    vmath::split(n, [&](std::int64_t at, std::int64_t len) { vm.gelu(t + at, y + at, len); });
  }

  Verification verify() override { return check_bias_gelu(x_.data(), bias_.data(), y_.data(), n_); }

 private:
  std::int64_t n_;
  bool fused_;
  HostBuffer<float> x_, y_, t_, bias_;
  const vmath::Ops& vm_;  // the loops for this CPU, streaming stores when the arrays pass the LLC
};

// ---------------------------------------------------------------- registration
Variant make(bool fused) {
  Variant v = bias_gelu_variant<float>(fused);
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = fused ? "gelu(x + bias) in one loop" : "x + bias, then gelu, as two loops with t through memory";
  v.sizes = vector_sizes({1 << 26});  // one size past every cache teaches the lesson
  v.quick_sizes = vector_sizes({1 << 22});
  v.make = [fused](const Params& p) { return std::make_unique<CpuBiasGelu>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
}  // namespace roofbench::elementwise
