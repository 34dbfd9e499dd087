// GPU tensor-core peak through Hopper's wgmma (sm_90a), FP16 and BF16 inputs with FP32
// accumulation: back-to-back 64x256x16 warpgroup MMAs from shared memory.
// Run only this: roofbench ceilings --device cuda:0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/variant.h"
#include "kernels/sm90a.cuh"
#include "roofbench/verify.h"
#include "kernels/ceilings/mma_operands.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// A (64x16) and B (16x256) hold small integers that depend on row and column (mma_operands.h),
// written to shared memory in the layout the descriptors describe, so that a wrong leading or
// stride byte offset, or a misread accumulator layout, changes the result (with every element
// the same, as before, none could). Every wgmma adds the same D = A·B, so after iters·kMmas each
// accumulator holds iters·kMmas·D(m, n), exact in FP32 while that stays below 2^24. Each thread
// writes Σ_j (j + 1)·d[j]; the host computes it from the m64nNk16 accumulator layout.
constexpr int kWarpgroups = 2, kThreads = 128 * kWarpgroups;
constexpr int kMmas = 16;   // wgmmas per commit group
constexpr int kAcc = 128;   // FP32 accumulator registers per thread for 64x256
constexpr int kN = 256;
constexpr double kFlopsPerWgmma = 2.0 * 64 * kN * 16;
constexpr int kABytes = 64 * 16 * 2, kBBytes = kN * 16 * 2;

// Unswizzled K-major layout, for A (rows m) and for B stored N x K (rows n): 8x8 core matrices
// of 128 bytes (8 rows of 16 bytes), the two K halves 128 bytes apart (the descriptors' leading
// byte offset) and 8-row groups 256 bytes apart (their stride byte offset).
__host__ __device__ constexpr int kmajor_offset(int row, int k) {
  return (row / 8) * 256 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
}

// Register j of thread t of a warpgroup (warp w = t/32, lane l = t%32) holds D at row
// 16w + l/4 + 8·((j/2)%2), column 8·(j/4) + 2·(l%4) + j%2 (the wgmma GEMM's epilogue reads it so).
double reference_sum(int thread_in_warpgroup, std::int64_t iters) {
  const int w = thread_in_warpgroup / 32, l = thread_in_warpgroup % 32;
  double sum = 0;
  for (int j = 0; j < kAcc; ++j) {
    const int row = 16 * w + l / 4 + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * (l % 4) + j % 2;
    sum += (j + 1) * static_cast<double>(iters * kMmas) * mma_dot16(row, col);
  }
  return sum;
}

// ---------------------------------------------------------------- kernel

template <bool kBf16>
__global__ void __launch_bounds__(kThreads) wgmma_peak_kernel(double* out, long long iters) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  using T = std::conditional_t<kBf16, __nv_bfloat16, __half>;
  __shared__ __align__(1024) unsigned char smem[kABytes + kBBytes];
  for (int i = threadIdx.x; i < 64 * 16; i += kThreads) {  // A(m, k)
    const int m = i / 16, k = i % 16;
    *reinterpret_cast<T*>(smem + kmajor_offset(m, k)) = static_cast<T>(static_cast<float>(mma_a(m, k)));
  }
  for (int i = threadIdx.x; i < kN * 16; i += kThreads) {  // B(k, n), stored as row n of N x K
    const int n = i / 16, k = i % 16;
    *reinterpret_cast<T*>(smem + kABytes + kmajor_offset(n, k)) = static_cast<T>(static_cast<float>(mma_b(k, n)));
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // generic writes -> wgmma's reads
  __syncthreads();
  const std::uint64_t desc_a = sm90a::smem_desc(smem, 128, 256, sm90a::Swizzle::none),
                      desc_b = sm90a::smem_desc(smem + kABytes, 128, 256, sm90a::Swizzle::none);

  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.0f;
  for (long long it = 0; it < iters; ++it) {
    sm90a::wgmma_fence();
#pragma unroll
    for (int m = 0; m < kMmas; ++m) sm90a::wgmma_m64k16<kN, 0, T>(d, desc_a, desc_b);
    sm90a::wgmma_commit();
    sm90a::wgmma_wait<0>();
  }
  double sum = 0;
#pragma unroll
  for (int i = 0; i < kAcc; ++i) sum += (i + 1) * static_cast<double>(d[i]);
  out[blockIdx.x * (long long)blockDim.x + threadIdx.x] = sum;
#endif
}

// ---------------------------------------------------------------- launcher
template <bool kBf16>
class GpuWgmma final : public Instance {
 public:
  explicit GpuWgmma(const Params& p)
      : blocks_(param(p, "blocks")), iters_(param(p, "iters")), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    if (param(p, "threads") != kThreads || param(p, "mmas") != kMmas)
      throw InputError(fmt::format("wgmma ceiling: threads and mmas are fixed at {} and {}", kThreads, kMmas));
    if (iters_ * kMmas * kMmaDotBound >= (1 << 24))
      throw InputError("wgmma ceiling: iters x mmas x 64 must stay below 2^24 for an exact check");
    require_sm90("the wgmma ceiling");
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    wgmma_peak_kernel<kBf16><<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    std::vector<double> ref(128);
    for (int t = 0; t < 128; ++t) ref[static_cast<std::size_t>(t)] = reference_sum(t, iters_);
    return check_all(Tolerance{0, 0},
                     "every thread's weighted accumulator sum vs iters·mmas·A·B on the host, from the m64nNk16 "
                     "accumulator layout, exact",
                     static_cast<std::int64_t>(out.size()), [&](Checker& chk, std::int64_t i) {
                       chk.check(out[static_cast<std::size_t>(i)], ref[static_cast<std::size_t>(i % 128)], i);
                     });
  }

 private:
  std::int64_t blocks_, iters_;
  DeviceBuffer<double> out_;
};

// ---------------------------------------------------------------- registration
Params wgmma_params(std::int64_t blocks, std::int64_t iters) {
  return {{"blocks", blocks}, {"threads", kThreads}, {"mmas", kMmas}, {"iters", iters}};
}

template <bool kBf16>
Variant make() {
  const char* type = kBf16 ? "bf16" : "fp16";
  Variant v;
  v.family = "ceiling";
  v.variant = fmt::format("{}_wgmma", type);
  v.reference = "iters·mmas·A·B on the host, from the wgmma accumulator layout, exact";
  v.precision = kBf16 ? Precision::bf16 : Precision::fp16;
  v.backend = Backend::cuda;
  v.unit = Unit::tensor;
  v.only_on = kSm90Only;
  v.summary = fmt::format("wgmma m64n256k16 {} -> FP32 from shared memory, 2 warpgroups per block", type);
  // Every warpgroup: iters x mmas wgmmas; every thread writes one double.
  const Count threads = Count::param("blocks") * Count::param("threads");
  v.work = Work()
               .write("one double per thread", threads, 8)
               .flops(kFlopsPerWgmma / 128 * threads * Count::param("mmas") * Count::param("iters"),
                      "an m64n256k16 wgmma is 2·64·256·16 = 524288, a warpgroup's 128 threads' together");
  v.sizes = {wgmma_params(1056, 512)};
  v.quick_sizes = {wgmma_params(264, 512)};
  v.test_sizes = {wgmma_params(1, 1), wgmma_params(132, 10)};
  v.ceiling = CeilingSpec{v.variant, CeilingKind::compute, Level::dram,
                          "back-to-back wgmma m64n256k16 from shared memory, 16 per commit group: the tensor peak "
                          "Hopper's datasheet quotes"};
  v.ceiling->sustained = kBf16;  // the roof of the BF16 wgmma GEMMs and cuBLAS
  v.make = [](const Params& p) { return std::make_unique<GpuWgmma<kBf16>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<false>());
ROOFBENCH_REGISTER(make<true>());

}  // namespace
}  // namespace roofbench::ceilings
