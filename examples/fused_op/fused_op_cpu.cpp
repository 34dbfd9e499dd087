// y = max(a·x + b, 0) on the CPU, in two passes and fused. Run only this:
//   fused_op_bench run --device cpu --no-builtin --filter 'myops/'
#include <memory>

#include "fused_op.h"

namespace {

class CpuAxpbRelu final : public roofbench::Instance {
 public:
  CpuAxpbRelu(const roofbench::Params& p, bool fused)
      : n_(roofbench::param(p, "n")),
        fused_(fused),
        stream_(fused ? n_ + n_ * FUSED_OP_EXTRA_WORK_PERCENT / 100 : n_),
        x_(stream_),
        t_(fused ? 0 : n_),
        y_(stream_) {}

  void prepare(std::uint64_t seed) override {
    roofbench::fill_uniform(x_.data(), stream_, seed);
    std::fill(y_.data(), y_.data() + stream_, roofbench::poison_f32());  // an element never written fails
  }

  void run() override {
    const std::int64_t n = n_;
    const float* x = x_.data();
    float* y = y_.data();
    if (fused_) {
      const std::int64_t m = stream_;  // n, or more in a planted build (see stream_)
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < m; ++i) {
        const float t = fused_op::kA * x[i] + fused_op::kB;
        y[i] = t > 0.0f ? t : 0.0f;  // not std::max: GCC 12 does not vectorize it over an array
      }
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
  // The elements the fused pass streams through. A planted regression (CMakeLists.txt,
  // FUSED_OP_EXTRA_WORK_PERCENT) makes it that many percent more than the n it declares and
  // checks: more of the same stream, so each extra element costs what a declared one does (an
  // earlier plant recomputed the first elements again, which the caches still held on a large
  // L3, and cost 4% where it claimed 10%).
  std::int64_t stream_;
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
