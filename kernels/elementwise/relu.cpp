// y = max(x, 0) on the CPU in FP32, FP16 and BF16: the same work on half the bytes (the
// low-precision lesson). Run only this: roofbench run --device cpu --filter 'lowprec/relu'
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernel
// For FP16 and BF16 the max is taken on the bits: a set sign bit means a negative number (or
// −0), which becomes +0. The CPU has no 16-bit arithmetic to speak of, and needs none here.
template <class T>
class CpuRelu final : public Instance {
 public:
  explicit CpuRelu(const Params& p) : n_(param(p, "n")), x_(n_), y_(n_) {}

  void prepare(std::uint64_t seed) override {
    // FP32 values rounded to T (the conversion from FP64 goes through FP32), with no FP32 array
    // between: the same inputs in every precision, and y a NaN everywhere.
    fill_uniform(x_.data(), n_, seed);
    y_.poison();
  }

  void run() override {
    const std::int64_t n = n_;
    if constexpr (std::is_same_v<T, float>) {
      const float* __restrict__ x = x_.data();
      float* __restrict__ y = y_.data();
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    } else {
      const std::uint16_t* __restrict__ x = reinterpret_cast<const std::uint16_t*>(x_.data());
      std::uint16_t* __restrict__ y = reinterpret_cast<std::uint16_t*>(y_.data());
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] & 0x8000u) ? std::uint16_t{0} : x[i];
    }
  }

  Verification verify() override { return check_relu(x_.data(), y_.data(), n_); }

 private:
  std::int64_t n_;
  HostBuffer<T> x_, y_;
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = relu_variant<T>();
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.summary = std::is_same_v<T, float> ? "max(x, 0) on FP32, vectorized"
                                       : "max(x, 0) on 16-bit values as a test of the sign bit, vectorized";
  v.sizes = vector_sizes({1 << 27});  // one size past every cache teaches the lesson
  v.quick_sizes = vector_sizes({1 << 24});
  v.make = [](const Params& p) { return std::make_unique<CpuRelu<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<float>());
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::elementwise
