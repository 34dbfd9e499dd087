// Three chained sigmoid layers, forward and backward, on the CPU: store the activations for the
// backward pass, or recompute them there (the recomputation lesson).
// Run only this: roofbench run --device cpu --filter 'recompute/'
#include <cmath>
#include <memory>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/vmath.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
class CpuSigmoid3 final : public Instance {
 public:
  CpuSigmoid3(const Params& p, bool recompute)
      : n_(param(p, "n")), recompute_(recompute), x_(n_), g_(n_), y_(n_), gx_(n_), a1_(recompute ? 0 : n_),
        a2_(recompute ? 0 : n_),
        vm_(vmath::ops(vmath::stores_for(sizeof(float) * static_cast<std::size_t>(n_) * (recompute ? 4 : 6)))) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_, seed, -4.0, 4.0);
    fill_uniform(g_.data(), n_, seed + 1, -1.0, 1.0);
    // The outputs, and the stored form's activations: a forward pass that skipped them must not
    // pass on what an earlier instance left in the same memory.
    for (HostBuffer<float>* b : {&y_, &gx_, &a1_, &a2_}) b->poison();
  }

  // σ through SLEEF's vector exp (vmath.h), in both forms.
  void run() override {
    const float *__restrict__ x = x_.data(), *__restrict__ g = g_.data();
    float *__restrict__ y = y_.data(), *__restrict__ gx = gx_.data();
    const std::int64_t n = n_;
    const vmath::Ops& vm = vm_;
    if (recompute_) {
      vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.sigmoid3(x + b, nullptr, nullptr, y + b, len); });
      vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.sigmoid3_backward(x + b, g + b, gx + b, len); });
      return;
    }
    float *__restrict__ a1 = a1_.data(), *__restrict__ a2 = a2_.data();
    vmath::split(n, [&](std::int64_t b, std::int64_t len) { vm.sigmoid3(x + b, a1 + b, a2 + b, y + b, len); });
    vmath::split(n, [&](std::int64_t b, std::int64_t len) {
      vm.sigmoid3_backward_stored(g + b, a1 + b, a2 + b, y + b, gx + b, len);
    });
  }

  Verification verify() override { return check_sigmoid3(x_.data(), g_.data(), y_.data(), gx_.data(), n_); }

 private:
  std::int64_t n_;
  bool recompute_;
  HostBuffer<float> x_, g_, y_, gx_, a1_, a2_;
  const vmath::Ops& vm_;  // the loops for this CPU, streaming stores when the arrays pass the LLC
};

// ---------------------------------------------------------------- registration
Variant make(bool recompute) {
  Variant v = sigmoid3_variant(recompute);
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = recompute ? "forward keeps only x; backward recomputes a1, a2 and y"
                        : "forward stores a1 and a2; backward reads them back";
  v.sizes = vector_sizes({1 << 26});  // one size past every cache teaches the lesson
  v.quick_sizes = vector_sizes({1 << 22});
  v.make = [recompute](const Params& p) { return std::make_unique<CpuSigmoid3>(p, recompute); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
}  // namespace roofbench::elementwise
