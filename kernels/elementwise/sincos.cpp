// y = sin²x + cos²x on the CPU: five passes through memory against one (the fusion lesson).
// Run only this: roofbench run --device cpu --filter 'fusion/sincos'
#include <cmath>
#include <memory>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/vmath.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
// Unfused: each step is its own loop over every element, as five library calls would be, so
// every intermediate goes to memory and comes back: 44 bytes per element against 8. Every loop is
// vmath.h's, in both forms: SLEEF's vector sin and cos, and streaming stores past the last-level
// cache (each form at its best: a cached store would read every output line first).
class CpuSinCos final : public Instance {
 public:
  CpuSinCos(const Params& p, bool fused)
      : n_(param(p, "n")), fused_(fused), x_(n_), y_(n_), s_(fused ? 0 : n_), c_(fused ? 0 : n_),
        s2_(fused ? 0 : n_), c2_(fused ? 0 : n_),
        vm_(vmath::ops(vmath::stores_for(sizeof(float) * static_cast<std::size_t>(n_) * (fused ? 2 : 6)))) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_, seed, -4.0, 4.0);
    plant_sincos_nans(x_.data(), n_, seed);
    // y, and the unfused form's passes, which are checked too (check_sincos): a pass that wrote
    // nothing must not pass on what an earlier instance left in the same memory.
    for (HostBuffer<float>* b : {&y_, &s_, &c_, &s2_, &c2_}) b->poison();
  }

  void run() override {
    const float* __restrict__ x = x_.data();
    float* __restrict__ y = y_.data();
    const std::int64_t n = n_;
    const vmath::Ops& vm = vm_;
    if (fused_) {
      vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.sin2_plus_cos2(x + b, y + b, len); });
      return;
    }
    float *__restrict__ s = s_.data(), *__restrict__ c = c_.data();
    float *__restrict__ s2 = s2_.data(), *__restrict__ c2 = c2_.data();
    vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.sin(x + b, s + b, len); });
    vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.cos(x + b, c + b, len); });
    vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.square(s + b, s2 + b, len); });
    vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.square(c + b, c2 + b, len); });
    vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.add(s2 + b, c2 + b, y + b, len); });
  }

  Verification verify() override {
    return fused_ ? check_sincos(x_.data(), y_.data(), n_)
                  : check_sincos(x_.data(), y_.data(), n_, s_.data(), c_.data());
  }

 private:
  std::int64_t n_;
  bool fused_;
  HostBuffer<float> x_, y_, s_, c_, s2_, c2_;
  const vmath::Ops& vm_;  // the loops for this CPU, streaming stores when the arrays pass the LLC
};

// ---------------------------------------------------------------- registration
Variant make(bool fused) {
  Variant v = sincos_variant(fused);
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = fused ? "sin²x + cos²x in one loop: x read once, y written once"
                    : "sin, cos, square, square, add as five loops, every intermediate through memory";
  v.sizes = vector_sizes({1 << 26});  // one size past every cache teaches the lesson
  v.quick_sizes = vector_sizes({1 << 22});
  v.make = [fused](const Params& p) { return std::make_unique<CpuSinCos>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
}  // namespace roofbench::elementwise
