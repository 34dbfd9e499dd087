// GPU FMA peaks on the CUDA cores, one per precision: FP32 (fmaf), FP64 (fma), FP16 (half2) and
// BF16 (bfloat162) paired FMAs. Every thread runs independent FMA chains in registers.
// Run only this: roofbench ceilings --device cuda:0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <type_traits>

#include "roofbench/cuda.h"
#include "roofbench/half.h"
#include "bench/registry.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// x ← x·a + b converges (a < 1). The device rounds each FMA once; the host does the same: in
// FP32 and FP64 with std::fma, and for the 16-bit types by an FP32 fmaf, which is exact for
// these operands (a 16-bit product fits in FP32's 24 bits and the addends are close in
// magnitude), followed by one rounding to the 16-bit type. So host and device agree bit for bit.
//
// Each step must move x by at least a unit in the last place of its type, or the check could not
// tell the chains from a kernel that skipped its loop. a = 0.999, b = 1e-3 does so for ~10^4
// steps in FP32 and FP64; FP16's chains (from 0.5) stop moving after 450 to 560 steps. In BF16 a
// rounds to 1 and each +b is below half a unit, so every chain stayed at its start; BF16's
// a = 127/128 and b = 1/32 (exact in it) climb toward 4 through three binades and move for 135
// steps or more. So the check counts every step at the test sizes (1 and 100 iterations), but at
// the run's 4096 it proves only that the 16-bit loops ran past those 135 or 450 steps: a loop cut
// shorter than that would show as a ceiling above the datasheet's peak, which the model warns of
// (a kernel above its roof). verify() refuses a size at which the model ends where it starts.
struct SlowContraction {
  static constexpr double kA = 0.999, kB = 1e-3;
};
struct Bf16Contraction {
  static constexpr double kA = 127.0 / 128.0, kB = 1.0 / 32.0;
};
constexpr int kChains = 8, kThreads = 256;

// Chain r starts at 0.5 + r/128, exact in every type here.
__host__ __device__ constexpr float chain_start(int r) {
  return 0.5f + 0.0078125f * static_cast<float>(r);
}

// One type per ceiling: its device vector type, how many FMAs one instruction does (lanes), the
// device FMA, and the host's bit-exact model of one step. splat() makes the kernel's values on
// either side: coefficients are made on the host, so every type gets them at its own precision.
struct Fp32 : SlowContraction {
  using D = float;
  static constexpr int kLanes = 1;
  static constexpr Precision kPrecision = Precision::fp32;
  static constexpr const char* kName = "fp32_fma";
  static constexpr const char* kHow = "fmaf";
  __host__ __device__ static D splat(double v) { return static_cast<float>(v); }
  __device__ static D fma(D x, D a, D b) { return fmaf(x, a, b); }
  __device__ static double lanes_sum(D x) { return x; }
  static double coeff(double v) { return static_cast<float>(v); }
  static double step(double x) {
    return std::fma(static_cast<float>(x), static_cast<float>(coeff(kA)), static_cast<float>(coeff(kB)));
  }
};
struct Fp64 : SlowContraction {
  using D = double;
  static constexpr int kLanes = 1;
  static constexpr Precision kPrecision = Precision::fp64;
  static constexpr const char* kName = "fp64_fma";
  static constexpr const char* kHow = "fma (double)";
  __host__ __device__ static D splat(double v) { return v; }
  __device__ static D fma(D x, D a, D b) { return ::fma(x, a, b); }
  __device__ static double lanes_sum(D x) { return x; }
  static double step(double x) { return std::fma(x, kA, kB); }
};
// The paired 16-bit types: D2 is the device pair, Host the storage type of roofbench/half.h that
// rounds exactly as the device does, Coef its coefficients.
template <class D2, class Host, Precision P, class Coef>
struct PairedFma : Coef {
  using Coef::kA;
  using Coef::kB;
  using D = D2;
  static constexpr int kLanes = 2;
  static constexpr Precision kPrecision = P;
  __host__ __device__ static D splat(double v) {
    if constexpr (std::is_same_v<D2, __half2>)
      return __float2half2_rn(static_cast<float>(v));
    else
      return __float2bfloat162_rn(static_cast<float>(v));
  }
  __device__ static D fma(D x, D a, D b) { return __hfma2(x, a, b); }
  __device__ static double lanes_sum(D x) {
    return static_cast<double>(__low2float(x)) + static_cast<double>(__high2float(x));
  }
  static double coeff(double v) { return static_cast<double>(Host(v)); }
  static double step(double x) {
    return static_cast<double>(
        Host(std::fma(static_cast<float>(x), static_cast<float>(coeff(kA)), static_cast<float>(coeff(kB)))));
  }
};
struct Fp16 : PairedFma<__half2, half_t, Precision::fp16, SlowContraction> {
  static constexpr const char* kName = "fp16_fma";
  static constexpr const char* kHow = "__hfma2 on half2 pairs";
};
struct Bf16 : PairedFma<__nv_bfloat162, bf16_t, Precision::bf16, Bf16Contraction> {
  static constexpr const char* kName = "bf16_fma";
  static constexpr const char* kHow = "__hfma2 on bfloat162 pairs";
};

// What every thread writes: the sum, in FP64 and in chain order, of its chains' lanes.
template <class Tr>
double reference_sum(std::int64_t iters) {
  double sum = 0;
  for (int r = 0; r < kChains; ++r) {
    double x = chain_start(r);
    for (std::int64_t i = 0; i < iters; ++i) x = Tr::step(x);
    for (int l = 0; l < Tr::kLanes; ++l) sum += x;
  }
  return sum;
}

// ---------------------------------------------------------------- kernel
// Eight independent chains per thread give the scheduler eight FMAs to issue while each waits
// its ~4-cycle latency; many short blocks keep the tail of the last wave small.
template <class Tr>
__global__ void fma_kernel(double* out, long long iters, typename Tr::D a, typename Tr::D b) {
  using D = typename Tr::D;
  D x[kChains];
#pragma unroll
  for (int r = 0; r < kChains; ++r) x[r] = Tr::splat(chain_start(r));
  // Unrolled 32 times: 256 FMAs per 5 instructions of loop control (a 64-bit counter's add,
  // compare and branch). The compiler's own 4 gave 32 FFMA per 37 instructions, and an FFMA needs
  // every issue slot of its sub-partition at peak: at most 86% of the peak, short of the 94% target.
#pragma unroll 32
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int r = 0; r < kChains; ++r) x[r] = Tr::fma(x[r], a, b);
  }
  double sum = 0;
#pragma unroll
  for (int r = 0; r < kChains; ++r) sum += Tr::lanes_sum(x[r]);
  out[blockIdx.x * (long long)blockDim.x + threadIdx.x] = sum;
}

// ---------------------------------------------------------------- launcher
template <class Tr>
class GpuFma final : public Instance {
 public:
  explicit GpuFma(const Params& p)
      : blocks_(param(p, "blocks")), iters_(param(p, "iters")), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    if (param(p, "threads") != kThreads || param(p, "chains") != kChains)
      throw InputError(fmt::format("{} ceiling: threads and chains are fixed at {} and {}", Tr::kName, kThreads, kChains));
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    fma_kernel<Tr><<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_, Tr::splat(Tr::kA),
                                                                 Tr::splat(Tr::kB));
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    const double ref = reference_sum<Tr>(iters_);
    if (iters_ > 0 && ref == reference_sum<Tr>(0)) {
      Verification v;
      v.detail = fmt::format("{}: the host model's chains end where they start after {} steps, so the check could not "
                             "tell them from a kernel that skipped its loop; choose coefficients that move",
                             Tr::kName, iters_);
      return v;
    }
    return check_all(Tolerance{0, 0}, "every thread's chain sum vs the host's FMA model, exact",
                     static_cast<std::int64_t>(out.size()),
                     [&](Checker& chk, std::int64_t i) { chk.check(out[static_cast<std::size_t>(i)], ref, i); });
  }

 private:
  std::int64_t blocks_, iters_;
  DeviceBuffer<double> out_;
};

// ---------------------------------------------------------------- registration
Params fma_params(std::int64_t blocks, std::int64_t iters) {
  return {{"blocks", blocks}, {"threads", kThreads}, {"chains", kChains}, {"iters", iters}};
}

template <class Tr>
Variant make() {
  Variant v;
  v.family = "ceiling";
  v.variant = Tr::kName;
  v.reference = "the host's model of every thread's FMA chains, exact";
  v.precision = Tr::kPrecision;
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = fmt::format("8 independent FMA chains per thread ({}), 256 threads per block", Tr::kHow);
  // Every thread: chains x iters FMA instructions of `lanes` FMAs; writes one double.
  const Count threads = Count::param("blocks") * Count::param("threads");
  v.work = Work()
               .write("one double per thread", threads, 8)
               .flops(2 * Tr::kLanes * threads * Count::param("chains") * Count::param("iters"),
                      fmt::format("{} FMA(s) of 2 per {} instruction", Tr::kLanes, Tr::kHow));
  v.sizes = {fma_params(65536, 4096)};
  v.quick_sizes = {fma_params(16384, 4096)};
  v.test_sizes = {fma_params(1, 1), fma_params(264, 100)};
  v.ceiling =
      CeilingSpec{Tr::kName, CeilingKind::compute, Level::dram, fmt::format("{} chains in registers, 8 per thread, 65536 short blocks", Tr::kHow)};
  v.make = [](const Params& p) { return std::make_unique<GpuFma<Tr>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<Fp32>());
ROOFBENCH_REGISTER(make<Fp64>());
ROOFBENCH_REGISTER(make<Fp16>());
ROOFBENCH_REGISTER(make<Bf16>());

}  // namespace
}  // namespace roofbench::ceilings
