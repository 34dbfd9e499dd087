// GPU tensor-core peak through mma.sync (the instruction WMMA and sm_80-style GEMMs compile to),
// FP16 and BF16 inputs with FP32 accumulation: independent m16n8k16 MMAs on register operands.
// Run only this: roofbench ceilings --device cuda:0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/variant.h"
#include "roofbench/verify.h"
#include "kernels/ceilings/mma_operands.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// Each lane loads its own elements of A (16x16) and B (16x8) into its fragment registers, as the
// PTX ISA lays out m16n8k16 fragments, from small integers that depend on row and column
// (mma_operands.h): a fragment register in the wrong place changes the product. Every MMA of a
// chain adds the same D = A·B, so after `iters` each accumulator holds iters·D(m, n), exact in
// FP32 while iters·64 < 2^24 (and under the tensor cores' truncating accumulation). Each thread
// writes Σ_chains Σ_r (r + 1)·d_r, which the host computes from the D-fragment layout: the
// weights tell the four accumulator registers apart.
constexpr int kChains = 8;          // independent accumulators per warp: MMAs in flight
constexpr int kThreads = 256;       // 8 warps per block
constexpr int kAccRegs = 4;         // FP32 accumulator registers per thread per m16n8 tile
constexpr double kFlopsPerMma = 2.0 * 16 * 8 * 16;

// Lane l holds, with g = l/4 and t = l%4 (PTX ISA, m16n8k16 fragments for 16-bit types):
//   A: {(g, 2t), (g, 2t+1)}, {(g+8, 2t), (g+8, 2t+1)}, {(g, 2t+8), (g, 2t+9)}, {(g+8, 2t+8), (g+8, 2t+9)}
//   B: {(2t, g), (2t+1, g)}, {(2t+8, g), (2t+9, g)}  (row k, column n)
//   D: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
double reference_sum(int lane, std::int64_t iters) {
  const int g = lane / 4, t = lane % 4;
  const int rows[kAccRegs] = {g, g, g + 8, g + 8}, cols[kAccRegs] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
  double per_chain = 0;
  for (int r = 0; r < kAccRegs; ++r) per_chain += (r + 1) * static_cast<double>(iters) * mma_dot16(rows[r], cols[r]);
  return kChains * per_chain;
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

// Two 16-bit values in one register, the first in the low half (the lower-indexed element).
template <bool kBf16>
__device__ __forceinline__ unsigned pack(int lo, int hi) {
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(static_cast<float>(lo), static_cast<float>(hi));
    return *reinterpret_cast<const unsigned*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(static_cast<float>(lo), static_cast<float>(hi));
    return *reinterpret_cast<const unsigned*>(&v);
  }
}

// kChains independent accumulators per thread: the tensor pipe has kChains MMAs of each warp to
// overlap with the latency of each one.
template <bool kBf16>
__global__ void mma_kernel(double* out, long long iters) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const unsigned a[4] = {pack<kBf16>(mma_a(g, 2 * t), mma_a(g, 2 * t + 1)),
                         pack<kBf16>(mma_a(g + 8, 2 * t), mma_a(g + 8, 2 * t + 1)),
                         pack<kBf16>(mma_a(g, 2 * t + 8), mma_a(g, 2 * t + 9)),
                         pack<kBf16>(mma_a(g + 8, 2 * t + 8), mma_a(g + 8, 2 * t + 9))};
  const unsigned b[2] = {pack<kBf16>(mma_b(2 * t, g), mma_b(2 * t + 1, g)),
                         pack<kBf16>(mma_b(2 * t + 8, g), mma_b(2 * t + 9, g))};
  float d[kChains][kAccRegs] = {};
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) mma_16816<kBf16>(d[c], a, b);
  }
  double sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int r = 0; r < kAccRegs; ++r) sum += (r + 1) * static_cast<double>(d[c][r]);
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
    if (iters_ * kMmaDotBound >= (1 << 24))
      throw InputError("mma.sync ceiling: iters x 64 must stay below 2^24 for an exact check");
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    mma_kernel<kBf16><<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    double ref[32];
    for (int lane = 0; lane < 32; ++lane) ref[lane] = reference_sum(lane, iters_);
    return check_all(Tolerance{0, 0},
                     "every thread's weighted accumulator sum vs iters·A·B on the host, from the PTX fragment "
                     "layouts, exact",
                     static_cast<std::int64_t>(out.size()),
                     [&](Checker& chk, std::int64_t i) { chk.check(out[static_cast<std::size_t>(i)], ref[i % 32], i); });
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
  v.reference = "iters·A·B on the host, from the PTX fragment layouts, exact";
  v.precision = kBf16 ? Precision::bf16 : Precision::fp16;
  v.backend = Backend::cuda;
  v.unit = Unit::tensor;
  v.summary = fmt::format("mma.sync m16n8k16 {} -> FP32, 8 independent accumulators per warp, register operands", type);
  // Every warp: chains x iters MMAs; every thread writes one double.
  const Count threads = Count::param("blocks") * Count::param("threads");
  v.work = Work()
               .write("one double per thread", threads, 8)
               .flops(kFlopsPerMma / 32 * threads * Count::param("chains") * Count::param("iters"),
                      "an m16n8k16 MMA is 2·16·8·16 = 4096, a warp's 32 threads' together");
  v.sizes = {mma_params(4224, 4096)};
  v.quick_sizes = {mma_params(1056, 4096)};
  v.test_sizes = {mma_params(1, 1), mma_params(132, 100)};
  v.ceiling = CeilingSpec{v.variant, CeilingKind::compute, Level::dram,
                          "mma.sync m16n8k16 on register fragments loaded once, 8 accumulators per warp: the "
                          "instruction ceiling of WMMA and sm_80-style kernels"};
  v.ceiling->sustained = kBf16;  // the roof of the BF16 WMMA GEMMs, which throttle under the power cap
  v.make = [](const Params& p) { return std::make_unique<GpuMma<kBf16>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<false>());
ROOFBENCH_REGISTER(make<true>());

}  // namespace
}  // namespace roofbench::ceilings
