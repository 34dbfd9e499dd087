// GPU tensor-core peak through mma.sync (the instruction WMMA and sm_80-style GEMMs compile to),
// FP16 and BF16 inputs with FP32 accumulation: independent m16n8k16 MMAs on register operands.
// Run only this: roofbench ceilings --device cuda:0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <memory>

#include "bench/cuda_check.h"
#include "bench/registry.h"
#include "bench/verify.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// Every element of A and B is 1/8, so one m16n8k16 MMA adds 16 x 1/64 = 1/4 to every element of
// the accumulator. After `iters` MMAs each accumulator holds iters / 4: exact in FP32 (and under
// the tensor cores' truncating accumulation) for iters < 2^24. Each thread writes the sum of its
// accumulators, in order, so the check is exact.
constexpr int kChains = 8;          // independent accumulators per warp: MMAs in flight
constexpr int kThreads = 256;       // 8 warps per block
constexpr int kAccRegs = 4;         // FP32 accumulator registers per thread per m16n8 tile
constexpr double kFlopsPerMma = 2.0 * 16 * 8 * 16;

double reference_sum(std::int64_t iters) {
  double sum = 0;
  for (int c = 0; c < kChains * kAccRegs; ++c) sum += static_cast<double>(static_cast<float>(iters) * 0.25f);
  return sum;
}

// ---------------------------------------------------------------- kernel
template <bool kBf16>
__device__ __forceinline__ void mma_16816(float (&d)[kAccRegs], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// kChains independent accumulators per thread: the tensor pipe has kChains MMAs of each warp to
// overlap with the latency of each one.
template <bool kBf16>
__global__ void mma_kernel(double* out, long long iters) {
  // Two 16-bit values of 1/8 packed in a 32-bit register.
  unsigned one_eighth;
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __float2bfloat162_rn(0.125f);
    one_eighth = *reinterpret_cast<const unsigned*>(&v);
  } else {
    const __half2 v = __float2half2_rn(0.125f);
    one_eighth = *reinterpret_cast<const unsigned*>(&v);
  }
  const unsigned a[4] = {one_eighth, one_eighth, one_eighth, one_eighth};
  const unsigned b[2] = {one_eighth, one_eighth};
  float d[kChains][kAccRegs] = {};
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) mma_16816<kBf16>(d[c], a, b);
  }
  double sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int r = 0; r < kAccRegs; ++r) sum += d[c][r];
  out[blockIdx.x * (long long)blockDim.x + threadIdx.x] = sum;
}

// ---------------------------------------------------------------- launcher
template <bool kBf16>
class GpuMma final : public Instance {
 public:
  explicit GpuMma(const Params& p)
      : blocks_(param(p, "blocks")), iters_(param(p, "iters")), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    if (param(p, "threads") != kThreads || param(p, "chains") != kChains)
      throw InputError(fmt::format("mma.sync ceiling: threads and chains are fixed at {} and {}", kThreads, kChains));
    if (iters_ >= (1 << 24)) throw InputError("mma.sync ceiling: iters must stay below 2^24 for an exact check");
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    mma_kernel<kBf16><<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    const double ref = reference_sum(iters_);
    Checker chk(Tolerance{0, 0}, "every thread's accumulator sum vs iters/4 per element, exact");
    for (std::size_t i = 0; i < out.size(); ++i) chk.check(out[i], ref, static_cast<std::int64_t>(i));
    return chk.finish();
  }

 private:
  std::int64_t blocks_, iters_;
  DeviceBuffer<double> out_;
};

// ---------------------------------------------------------------- registration
Params mma_params(std::int64_t blocks, std::int64_t iters) {
  return {{"blocks", blocks}, {"threads", kThreads}, {"chains", kChains}, {"iters", iters}};
}

template <bool kBf16>
Variant make() {
  const char* type = kBf16 ? "bf16" : "fp16";
  Variant v;
  v.family = "ceiling";
  v.variant = fmt::format("{}_mma_sync", type);
  v.precision = kBf16 ? Precision::bf16 : Precision::fp16;
  v.backend = Backend::cuda;
  v.unit = "tensor";
  v.summary = fmt::format("mma.sync m16n8k16 {} -> FP32, 8 independent accumulators per warp, register operands", type);
  v.source = __FILE__;
  // Every warp: chains x iters MMAs of 2·16·8·16 flops; every thread writes one double.
  v.flops = [](const Params& p) {
    const double warps = static_cast<double>(param(p, "blocks") * param(p, "threads") / 32);
    return kFlopsPerMma * warps * static_cast<double>(param(p, "chains")) * static_cast<double>(param(p, "iters"));
  };
  v.bytes = [](const Params& p) { return 8.0 * static_cast<double>(param(p, "blocks") * param(p, "threads")); };
  v.work = "warps x chains x iters m16n8k16 MMAs of 2·16·8·16 = 4096 flops; writes one double per thread";
  v.sizes = {mma_params(4224, 4096)};
  v.quick_sizes = {mma_params(1056, 4096)};
  v.test_sizes = {mma_params(1, 1), mma_params(132, 100)};
  v.ceiling = CeilingSpec{v.variant, "compute", "",
                          "mma.sync m16n8k16 on constant register fragments, 8 accumulators per warp: the instruction "
                          "ceiling of WMMA and sm_80-style kernels"};
  v.make = [](const Params& p) { return std::make_unique<GpuMma<kBf16>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<false>());
ROOFBENCH_REGISTER(make<true>());

}  // namespace
}  // namespace roofbench::ceilings
