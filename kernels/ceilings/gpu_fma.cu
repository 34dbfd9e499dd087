// GPU FMA peaks on the CUDA cores, one per precision: FP32 (fmaf), FP64 (fma), FP16 (half2) and
// BF16 (bfloat162) paired FMAs. Every thread runs independent FMA chains in registers.
// Run only this: roofbench ceilings --device cuda:0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <type_traits>

#include "roofbench/variant.h"
#include "kernels/ceilings/fma_chain.h"
#include "roofbench/cuda.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// x ← x·a + b with a = 1 + 2^-p, the smallest value above 1 of the chain's type, and b = 0: every
// step moves x by one or two units in its last place, so the exact check of a chain's end counts
// every step; the host's model of the chains (fma_chain.h) rounds as the device does, bit for bit.
// verify() refuses a size at which a chain would stop moving (it overflows after 12,300 steps or
// more in the 16-bit types; the run's sizes take 4096), or at which a thread's sum, which is what
// is compared, came out as the sum one step either side (it cannot: it is exact).
constexpr int kChains = kGpuFmaChains, kThreads = 256;

// One type per ceiling: its device vector type, how many FMAs one instruction does (lanes) and
// the device FMA. splat() makes the kernel's values on either side.
struct Fp32 {
  using D = float;
  static constexpr Precision kPrecision = Precision::fp32;
  static constexpr int kLanes = gpu_fma_lanes(kPrecision);
  static constexpr const char* kName = "fp32_fma";
  static constexpr const char* kHow = "fmaf";
  __host__ __device__ static D splat(double v) { return static_cast<float>(v); }
  __device__ static D fma(D x, D a, D b) { return fmaf(x, a, b); }
  __device__ static double lanes_sum(D x) { return x; }
};
struct Fp64 {
  using D = double;
  static constexpr Precision kPrecision = Precision::fp64;
  static constexpr int kLanes = gpu_fma_lanes(kPrecision);
  static constexpr const char* kName = "fp64_fma";
  static constexpr const char* kHow = "fma (double)";
  __host__ __device__ static D splat(double v) { return v; }
  __device__ static D fma(D x, D a, D b) { return ::fma(x, a, b); }
  __device__ static double lanes_sum(D x) { return x; }
};
// The paired 16-bit types: D2 is the device pair.
template <class D2, Precision P>
struct PairedFma {
  using D = D2;
  static constexpr Precision kPrecision = P;
  static constexpr int kLanes = gpu_fma_lanes(kPrecision);  // a pair
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
};
struct Fp16 : PairedFma<__half2, Precision::fp16> {
  static constexpr const char* kName = "fp16_fma";
  static constexpr const char* kHow = "__hfma2 on half2 pairs";
};
struct Bf16 : PairedFma<__nv_bfloat162, Precision::bf16> {
  static constexpr const char* kName = "bf16_fma";
  static constexpr const char* kHow = "__hfma2 on bfloat162 pairs";
};

// ---------------------------------------------------------------- kernel
// Eight independent chains per thread give the scheduler eight FMAs to issue while each waits
// its ~4-cycle latency; many short blocks keep the tail of the last wave small.
template <class Tr>
__global__ void fma_kernel(double* out, long long iters, typename Tr::D a, typename Tr::D b) {
  using D = typename Tr::D;
  D x[kChains];
#pragma unroll
  for (int r = 0; r < kChains; ++r) x[r] = Tr::splat(gpu_fma_chain_start(r));
    // Unrolled 32 times: 256 FMAs per 5 instructions of loop control (a 64-bit counter's add,
    // compare and branch). The compiler's own 4 gave 32 FFMA per 37 instructions, and an FFMA needs
    // every issue slot of its sub-partition at peak: at most 86% of the peak, short of the 94% target.
#pragma unroll 32
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int r = 0; r < kChains; ++r) x[r] = Tr::fma(x[r], a, b);
  }
  // How far the chains moved, exact in FP64 (fma_chain.h): every step count gives its own sum.
  double sum = 0;
#pragma unroll
  for (int r = 0; r < kChains; ++r)
    sum += Tr::lanes_sum(x[r]) - Tr::kLanes * static_cast<double>(gpu_fma_chain_start(r));
  out[blockIdx.x * (long long)blockDim.x + threadIdx.x] = sum;
}

// ---------------------------------------------------------------- launcher
template <class Tr>
class GpuFma final : public Instance {
 public:
  explicit GpuFma(const Params& p)
      : blocks_(param(p, "blocks")), iters_(param(p, "iters")), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    if (param(p, "threads") != kThreads || param(p, "chains") != kChains)
      throw InputError(
          fmt::format("{} ceiling: threads and chains are fixed at {} and {}", Tr::kName, kThreads, kChains));
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    const FmaChain chain = gpu_fma_chain(Tr::kPrecision);
    fma_kernel<Tr>
        <<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_, Tr::splat(chain.a), Tr::splat(chain.b));
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const std::string uncounted = gpu_fma_uncounted(Tr::kPrecision, iters_);
    if (!uncounted.empty()) {
      Verification v;
      v.detail = fmt::format(
          "{}: in the host's model {}, so the check could not tell a kernel that ran every step "
          "from one that did not; choose another iters",
          Tr::kName, uncounted);
      return v;
    }
    const double ref = gpu_fma_thread(Tr::kPrecision, iters_).sum;
    const auto out = out_.download();
    return check_all(Tolerance{0, 0}, "every thread's chain sum vs the host's FMA model, exact, every step counted",
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
  v.reference = "the host's model of every thread's FMA chains, exact, each step moving every chain";
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
  v.ceiling = CeilingSpec{Tr::kName, CeilingKind::compute, Level::dram,
                          fmt::format("{} chains in registers, 8 per thread, 65536 short blocks", Tr::kHow)};
  v.ceiling->sustained = Tr::kPrecision == Precision::fp32;  // the SIMT roof of the FP32 GEMMs
  v.make = [](const Params& p) { return std::make_unique<GpuFma<Tr>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<Fp32>());
ROOFBENCH_REGISTER(make<Fp64>());
ROOFBENCH_REGISTER(make<Fp16>());
ROOFBENCH_REGISTER(make<Bf16>());

}  // namespace
}  // namespace roofbench::ceilings
