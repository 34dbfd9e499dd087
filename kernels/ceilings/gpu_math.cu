// GPU transcendental ceilings: calls per second of each math function, on every SM.
//   math_sin, math_cos, math_sincos, math_exp, math_tanh: CUDA's accurate sinf, cosf, sincosf,
//     expf and tanhf, the functions the CUDA elementwise families call (the model's third roof
//     for them, roofline/model.h);
//   mufu_sin, mufu_ex2: the special function unit itself (__sinf → MUFU.SIN, ex2.approx →
//     MUFU.EX2), 16 results per clock per SM on Hopper: the hardware's own transcendental roof.
// Each thread runs eight independent chains x ← a·f(x) + b, a contraction (|a·f'| ≤ 0.5) whose
// fixed point lies where the families' inputs do, so no value overflows or leaves the fast range,
// and a rounding error shrinks at every step instead of growing: the host can check the result
// in FP64. tests/kernels/test_sass.cpp checks the MUFU instructions are there.
// Run only these: roofbench ceilings --device cuda:0
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "roofbench/variant.h"
#include "roofbench/cuda.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

constexpr int kChains = 8, kThreads = 256;

__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// One per ceiling: the device step, its FP64 model, the chains' starts (within the families'
// input range) and what it is called.
struct Sin {
  static constexpr const char* kName = "math_sin";
  static constexpr const char* kFunction = "sin";
  static constexpr const char* kHow = "sinf";
  static constexpr const char* kUnit = "";
  static constexpr float kStart = 1.5f;
  __device__ static float step(float x) { return fmaf(0.5f, sinf(x), 2.0f); }
  static double ref(double x) { return 0.5 * std::sin(x) + 2.0; }
};
struct Cos {
  static constexpr const char* kName = "math_cos";
  static constexpr const char* kFunction = "cos";
  static constexpr const char* kHow = "cosf";
  static constexpr const char* kUnit = "";
  static constexpr float kStart = 1.5f;
  __device__ static float step(float x) { return fmaf(0.5f, cosf(x), 2.0f); }
  static double ref(double x) { return 0.5 * std::cos(x) + 2.0; }
};
struct SinCos {
  static constexpr const char* kName = "math_sincos";
  static constexpr const char* kFunction = "sincos";
  static constexpr const char* kHow = "sincosf";
  static constexpr const char* kUnit = "";
  static constexpr float kStart = 1.5f;
  __device__ static float step(float x) {
    float s, c;
    sincosf(x, &s, &c);
    return fmaf(0.25f, s + c, 2.0f);
  }
  static double ref(double x) { return 0.25 * (std::sin(x) + std::cos(x)) + 2.0; }
};
struct Exp {
  static constexpr const char* kName = "math_exp";
  static constexpr const char* kFunction = "exp";
  static constexpr const char* kHow = "expf";
  static constexpr const char* kUnit = "";
  static constexpr float kStart = -3.5f;
  __device__ static float step(float x) { return fmaf(0.1f, expf(x), -3.0f); }
  static double ref(double x) { return static_cast<double>(0.1f) * std::exp(x) - 3.0; }
};
struct Tanh {
  static constexpr const char* kName = "math_tanh";
  static constexpr const char* kFunction = "tanh";
  static constexpr const char* kHow = "tanhf";
  static constexpr const char* kUnit = "";
  static constexpr float kStart = 0.5f;
  __device__ static float step(float x) { return fmaf(0.5f, tanhf(x), 1.0f); }
  static double ref(double x) { return 0.5 * std::tanh(x) + 1.0; }
};
struct MufuSin {
  static constexpr const char* kName = "mufu_sin";
  static constexpr const char* kFunction = "sin.approx";
  static constexpr const char* kHow = "__sinf";
  static constexpr const char* kUnit = ", on the MUFU (MUFU.SIN)";
  static constexpr float kStart = 1.5f;
  __device__ static float step(float x) { return fmaf(0.5f, __sinf(x), 2.0f); }
  static double ref(double x) { return 0.5 * std::sin(x) + 2.0; }
};
struct MufuEx2 {
  static constexpr const char* kName = "mufu_ex2";
  static constexpr const char* kFunction = "ex2.approx";
  static constexpr const char* kHow = "ex2.approx.ftz.f32";
  static constexpr const char* kUnit = ", on the MUFU (MUFU.EX2)";
  static constexpr float kStart = -3.5f;
  __device__ static float step(float x) { return fmaf(0.1f, ex2_approx(x), -3.0f); }
  static double ref(double x) { return static_cast<double>(0.1f) * std::exp2(x) - 3.0; }
};

// Chain r starts at kStart + r/16.
__host__ __device__ constexpr float chain_offset(int r) {
  return 0.0625f * static_cast<float>(r);
}

template <class Fn>
__global__ void math_kernel(double* out, long long reps) {
  float x[kChains];
#pragma unroll
  for (int r = 0; r < kChains; ++r) x[r] = Fn::kStart + chain_offset(r);
  for (long long i = 0; i < reps; ++i) {
#pragma unroll
    for (int r = 0; r < kChains; ++r) x[r] = Fn::step(x[r]);
  }
  double sum = 0;
#pragma unroll
  for (int r = 0; r < kChains; ++r) sum += x[r];
  out[blockIdx.x * (long long)blockDim.x + threadIdx.x] = sum;
}

template <class Fn>
class GpuMath final : public Instance {
 public:
  explicit GpuMath(const Params& p)
      : blocks_(param(p, "blocks")), reps_(param(p, "reps")), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    if (param(p, "threads") != kThreads || param(p, "chains") != kChains)
      throw InputError(fmt::format("{} ceiling: threads and chains are fixed at {} and {}", Fn::kName, kThreads, kChains));
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    math_kernel<Fn><<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), reps_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    double ref = 0;
    for (int r = 0; r < kChains; ++r) {
      double x = static_cast<double>(Fn::kStart + chain_offset(r));
      for (long long i = 0; i < reps_; ++i) x = Fn::ref(x);
      ref += x;
    }
    // Each step's error shrinks by the contraction (at most 0.5), so a few FP32 ULP remain (a
    // few 1e-7 on the MUFU path); a wrong function or a skipped chain is off by O(1).
    return check_all(Tolerance{0, 1e-5}, fmt::format("every thread's chain sum vs the same chains in FP64 "
                                                     "(std::{}), within 1e-5",
                                                     Fn::kFunction),
                     static_cast<std::int64_t>(out.size()),
                     [&](Checker& chk, std::int64_t i) { chk.check(out[static_cast<std::size_t>(i)], ref, i); });
  }

 private:
  std::int64_t blocks_, reps_;
  DeviceBuffer<double> out_;
};

Params math_params(std::int64_t blocks, std::int64_t reps) {
  return {{"blocks", blocks}, {"threads", kThreads}, {"chains", kChains}, {"reps", reps}};
}

template <class Fn>
Variant make() {
  Variant v;
  v.family = "ceiling";
  v.variant = Fn::kName;
  v.reference = fmt::format("the same chains in FP64 with std::{}, within 1e-5", Fn::kFunction);
  v.precision = Precision::fp32;
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = fmt::format("8 independent chains x ← a·{}(x) + b per thread{}, 256 threads per block", Fn::kHow,
                          Fn::kUnit);
  const Count threads = Count::param("blocks") * Count::param("threads");
  const Count calls = threads * Count::param("chains") * Count::param("reps");
  v.work = Work()
               .write("one double per thread", threads, 8)
               .flops(2 * calls, "the FMA that keeps each chain in range, one per call")
               .transcendentals(Fn::kFunction, calls);
  v.sizes = {math_params(16384, 1024)};
  v.quick_sizes = {math_params(4096, 1024)};
  v.test_sizes = {math_params(1, 1), math_params(264, 100)};
  v.ceiling = CeilingSpec{Fn::kName, CeilingKind::transcendental, Level::dram,
                          fmt::format("{}{}: chains in registers, 8 per thread, 16384 blocks of 256", Fn::kHow, Fn::kUnit),
                          Fn::kFunction};
  v.make = [](const Params& p) { return std::make_unique<GpuMath<Fn>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<Sin>());
ROOFBENCH_REGISTER(make<Cos>());
ROOFBENCH_REGISTER(make<SinCos>());
ROOFBENCH_REGISTER(make<Exp>());
ROOFBENCH_REGISTER(make<Tanh>());
ROOFBENCH_REGISTER(make<MufuSin>());
ROOFBENCH_REGISTER(make<MufuEx2>());

}  // namespace
}  // namespace roofbench::ceilings
