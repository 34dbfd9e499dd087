// Control divergence's CPU analogue: a branch on random keys (the predictor fails half the time),
// the same branch on sorted keys (it never fails), and no branch at all.
// Run only this: roofbench run --device cpu --filter 'divergence/'
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "kernels/divergence/divergence.h"

namespace roofbench::divergence {
// ---------------------------------------------------------------- kernels
// A short body (four dependent FMAs, about 16 cycles) so that a mispredicted branch (about 15)
// shows. The empty asm in each arm is a side effect the compiler may not merge or if-convert:
// without it GCC turns the branch into a blend and all three variants run the same code. Each
// arm's asm is its own text: clang sinks identical asm out of both arms, and then merges them.
// Branchless has one too, so that it stays scalar like the others (the FMA target brings AVX,
// and a vectorized table lookup would measure SIMD against scalar, not a branch against none).
namespace {

// One element: kCpuIters FMAs on the constants of way `key` (0 or 1), through a branch or through
// a table. __builtin_fmaf is one instruction inside a function compiled for FMA (std::fma is the
// same once inlined, but an unoptimized build calls it) and a call into libm elsewhere.
template <bool kBranchless>
__attribute__((always_inline)) inline float element(float v, std::uint8_t key) {
  if constexpr (kBranchless) {
    const float a[2] = {coef_a(0), coef_a(1)}, b[2] = {coef_b(0), coef_b(1)};
    const float ca = a[key], cb = b[key];
    asm volatile("# no way" : "+x"(v));
#pragma GCC unroll 4
    for (int k = 0; k < kCpuIters; ++k) v = __builtin_fmaf(v, ca, cb);
  } else if (key) {
    asm volatile("# way 1" : "+x"(v));
#pragma GCC unroll 4
    for (int k = 0; k < kCpuIters; ++k) v = __builtin_fmaf(v, coef_a(1), coef_b(1));
  } else {
    asm volatile("# way 0" : "+x"(v));
#pragma GCC unroll 4
    for (int k = 0; k < kCpuIters; ++k) v = __builtin_fmaf(v, coef_a(0), coef_b(0));
  }
  return v;
}

template <bool kBranchless>
__attribute__((always_inline)) inline void span(const float* __restrict__ x, const std::uint8_t* __restrict__ key,
                                                float* __restrict__ y, std::int64_t begin, std::int64_t end) {
  for (std::int64_t i = begin; i < end; ++i) y[i] = element<kBranchless>(x[i], key[i]);
}

// The span twice: for the FMA instruction (every x86 core this suite targets has it) and plain,
// for a CPU without it. Each is called inside the parallel region, not around it: an outlined
// OpenMP region does not always carry its function's target (clang's does not).
using Span = void (*)(const float*, const std::uint8_t*, float*, std::int64_t, std::int64_t);
#if defined(__x86_64__)
template <bool kBranchless>
__attribute__((target("fma"))) void span_fma_instruction(const float* x, const std::uint8_t* key, float* y,
                                                         std::int64_t begin, std::int64_t end) {
  span<kBranchless>(x, key, y, begin, end);
}
#endif
template <bool kBranchless>
void span_libm_fma(const float* x, const std::uint8_t* key, float* y, std::int64_t begin, std::int64_t end) {
  span<kBranchless>(x, key, y, begin, end);
}

Span span_of(CpuFmaPath path, bool branchless) {
#if defined(__x86_64__)
  if (path == CpuFmaPath::instruction) return branchless ? &span_fma_instruction<true> : &span_fma_instruction<false>;
#endif
  return branchless ? &span_libm_fma<true> : &span_libm_fma<false>;
}

}  // namespace

bool cpu_has_fma_instruction() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

void cpu_divergence_loop(CpuFmaPath path, bool branchless, const float* x, const std::uint8_t* key, float* y,
                         std::int64_t n) {
  if (path == CpuFmaPath::instruction && !cpu_has_fma_instruction())
    throw InputError("cpu_divergence_loop: this CPU has no FMA instruction");
  const Span f = span_of(path, branchless);
  // One contiguous share per thread, as schedule(static) gives.
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    f(x, key, y, n * t / threads, n * (t + 1) / threads);
  }
}

namespace {

enum class How { divergent, uniform, branchless };

class CpuDivergence final : public Instance {
 public:
  CpuDivergence(const Params& p, How how)
      : how_(how),
        n_(param(p, "n")),
        x_(n_),
        y_(n_),
        key_(n_),
        path_(cpu_has_fma_instruction() ? CpuFmaPath::instruction : CpuFmaPath::libm) {}

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
    cpu_divergence_loop(path_, how_ == How::branchless, x_.data(), key_.data(), y_.data(), n_);
  }

  Verification verify() override {
    const std::uint8_t* key = key_.data();
    return check_divergence(x_.data(), y_.data(), n_, kCpuIters, [key](std::int64_t i) { return int{key[i]}; });
  }

 private:
  How how_;
  std::int64_t n_;
  HostBuffer<float> x_, y_;
  HostBuffer<std::uint8_t> key_;
  CpuFmaPath path_;
};

// ---------------------------------------------------------------- registration
Variant make(How how, const char* name, const char* summary) {
  Variant v = divergence_variant(name);
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = summary;
  auto size = [](std::int64_t n) { return Params{{"n", n}, {"iters", kCpuIters}, {"ways", 2}}; };
  v.sizes = {size(1 << 24)};
  v.quick_sizes = {size(1 << 22)};
  v.test_sizes = {size(1), size(1000), size((1 << 16) + 3)};
  v.make = [how](const Params& p) {
    if (param(p, "iters") != kCpuIters || param(p, "ways") != 2)
      throw InputError("the CPU divergence kernels run iters=" + std::to_string(kCpuIters) + " FMAs on ways=2, not iters=" +
                       std::to_string(param(p, "iters")) + " on ways=" + std::to_string(param(p, "ways")));
    return std::make_unique<CpuDivergence>(p, how);
  };
  return v;
}
ROOFBENCH_REGISTER(make(How::uniform, "uniform", "a branch on sorted keys: the predictor is always right"));
ROOFBENCH_REGISTER(make(How::divergent, "divergent", "the same branch on random keys: mispredicted half the time"));
ROOFBENCH_REGISTER(make(How::branchless, "branchless", "no branch: the constants indexed by the key"));

}  // namespace
}  // namespace roofbench::divergence
