// y = max(a·x + b, 0) on the CPU, in two passes and fused. Run only this:
//   fused_op_bench run --device cpu --no-builtin --filter 'myops/'
#include <memory>

#include "fused_op.h"

namespace {

class CpuAxpbRelu final : public roofbench::Instance {
 public:
  CpuAxpbRelu(const roofbench::Params& p, bool fused)
      : n_(roofbench::param(p, "n")), fused_(fused), x_(n_), t_(fused ? 0 : n_), y_(n_) {}

  void prepare(std::uint64_t seed) override {
    roofbench::fill_uniform(x_.data(), n_, seed);
    std::fill(y_.data(), y_.data() + n_, roofbench::poison_f32());  // an element never written fails
  }

  void run() override {
    const std::int64_t n = n_;
    const float* x = x_.data();
    float* y = y_.data();
    if (fused_) {
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) {
        const float t = fused_op::kA * x[i] + fused_op::kB;
        y[i] = t > 0.0f ? t : 0.0f;  // not std::max: GCC 12 does not vectorize it over an array
      }
#if FUSED_OP_EXTRA_WORK_PERCENT > 0
      // A planted regression (CMakeLists.txt): the same again over a share of the elements.
      const std::int64_t extra = n * FUSED_OP_EXTRA_WORK_PERCENT / 100;
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < extra; ++i) {  // the first elements: long out of the caches by now
        const float t = fused_op::kA * x[i] + fused_op::kB;
        y[i] = t > 0.0f ? t : 0.0f;
      }
#endif
    } else {
      float* t = t_.data();
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) t[i] = fused_op::kA * x[i] + fused_op::kB;
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) y[i] = t[i] > 0.0f ? t[i] : 0.0f;
    }
  }

  roofbench::Verification verify() override { return fused_op::check(x_.data(), y_.data(), n_); }

 private:
  std::int64_t n_;
  bool fused_;
  roofbench::HostBuffer<float> x_, t_, y_;
};

roofbench::Variant make(bool fused) {
  roofbench::Variant v = fused_op::declare(fused);
  v.backend = roofbench::Backend::cpu;
  v.unit = roofbench::Unit::simd;
  v.summary = fused ? "one pass, vectorized on every core" : "two passes through memory, vectorized on every core";
  v.sizes = roofbench::vector_sizes({1 << 24, 1 << 26});
  v.quick_sizes = roofbench::vector_sizes({1 << 22});
  v.make = [fused](const roofbench::Params& p) { return std::make_unique<CpuAxpbRelu>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
