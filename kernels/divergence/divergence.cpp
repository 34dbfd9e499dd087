// Control divergence's CPU analogue: a branch on random keys (the predictor fails half the time),
// the same branch on sorted keys (it never fails), and no branch at all.
// Run only this: roofbench run --device cpu --filter 'divergence/'
#include <cmath>
#include <memory>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "kernels/divergence/divergence.h"

namespace roofbench::divergence {
namespace {

// ---------------------------------------------------------------- kernels
// A short body (four dependent FMAs, about 16 cycles) so that a mispredicted branch (about 15)
// shows. The empty asm in each arm is a side effect the compiler may not merge or if-convert:
// without it GCC turns the branch into a blend and all three variants run the same code.
enum class How { divergent, uniform, branchless };
constexpr int kIters = 4;

class CpuDivergence final : public Instance {
 public:
  CpuDivergence(const Params& p, How how) : how_(how), n_(param(p, "n")), x_(n_), y_(n_), key_(n_) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_, seed);
    std::uint8_t* key = key_.data();
    const bool sorted = how_ == How::uniform;
    const std::int64_t n = n_;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i);
      key[i] = sorted ? (i >= n / 2) : static_cast<std::uint8_t>(splitmix64(s) & 1);
    }
    float* y = y_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) y[i] = std::nanf("");
  }

  void run() override {
    const float* __restrict__ x = x_.data();
    const std::uint8_t* __restrict__ key = key_.data();
    float* __restrict__ y = y_.data();
    const std::int64_t n = n_;
    if (how_ == How::branchless) {
      const float a[2] = {coef_a(0), coef_a(1)}, b[2] = {coef_b(0), coef_b(1)};
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) {
        const float ca = a[key[i]], cb = b[key[i]];
        float v = x[i];
        for (int k = 0; k < kIters; ++k) v = std::fma(v, ca, cb);
        y[i] = v;
      }
      return;
    }
    const float a0 = coef_a(0), b0 = coef_b(0), a1 = coef_a(1), b1 = coef_b(1);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      float v = x[i];
      if (key[i]) {
        asm volatile("" : "+x"(v));
        for (int k = 0; k < kIters; ++k) v = std::fma(v, a1, b1);
      } else {
        asm volatile("" : "+x"(v));
        for (int k = 0; k < kIters; ++k) v = std::fma(v, a0, b0);
      }
      y[i] = v;
    }
  }

  Verification verify() override {
    const std::uint8_t* key = key_.data();
    return check_divergence(x_.data(), y_.data(), n_, kIters, [key](std::int64_t i) { return int{key[i]}; });
  }

 private:
  How how_;
  std::int64_t n_;
  HostBuffer<float> x_, y_;
  HostBuffer<std::uint8_t> key_;
};

// ---------------------------------------------------------------- registration
Variant make(How how, const char* name, const char* summary) {
  Variant v = divergence_variant(name);
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = summary;
  auto size = [](std::int64_t n) { return Params{{"n", n}, {"iters", kIters}, {"ways", 2}}; };
  v.sizes = {size(1 << 24)};
  v.quick_sizes = {size(1 << 22)};
  v.test_sizes = {size(1), size(1000), size((1 << 16) + 3)};
  v.make = [how](const Params& p) {
    if (param(p, "iters") != kIters || param(p, "ways") != 2)
      throw InputError("the CPU divergence kernels run 4 FMAs on 2 ways");
    return std::make_unique<CpuDivergence>(p, how);
  };
  return v;
}
ROOFBENCH_REGISTER(make(How::uniform, "uniform", "a branch on sorted keys: the predictor is always right"));
ROOFBENCH_REGISTER(make(How::divergent, "divergent", "the same branch on random keys: mispredicted half the time"));
ROOFBENCH_REGISTER(make(How::branchless, "branchless", "no branch: the constants indexed by the key"));

}  // namespace
}  // namespace roofbench::divergence
