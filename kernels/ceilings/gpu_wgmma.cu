// GPU tensor-core peak through Hopper's wgmma (sm_90a), FP16 and BF16 inputs with FP32
// accumulation: back-to-back 64x256x16 warpgroup MMAs from shared memory.
// Run only this: roofbench ceilings --device cuda:0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <memory>

#include "bench/cuda_check.h"
#include "bench/registry.h"
#include "bench/sm90a.cuh"
#include "bench/verify.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// Every element of A and B is 1/8, so one m64n256k16 wgmma adds 16 x 1/64 = 1/4 to every
// accumulator; after `iters` rounds of kMmas each holds iters·kMmas/4, exact in FP32 below 2^24.
// The layout of the operands in shared memory then cannot change the result, so the
// descriptors use the plain (unswizzled) layout; the check is of the arithmetic and its count.
constexpr int kWarpgroups = 2, kThreads = 128 * kWarpgroups;
constexpr int kMmas = 16;   // wgmmas per commit group
constexpr int kAcc = 128;   // FP32 accumulator registers per thread for 64x256
constexpr double kFlopsPerWgmma = 2.0 * 64 * 256 * 16;
constexpr int kABytes = 64 * 16 * 2, kBBytes = 256 * 16 * 2;

double reference_sum(std::int64_t iters) {
  const float each = static_cast<float>(iters * kMmas) * 0.25f;
  return static_cast<double>(each) * kAcc;
}

// ---------------------------------------------------------------- kernel

template <bool kBf16>
__global__ void __launch_bounds__(kThreads) wgmma_peak_kernel(double* out, long long iters) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  __shared__ __align__(1024) unsigned short smem[(kABytes + kBBytes) / 2];
  const unsigned short one_eighth = kBf16 ? 0x3E00 : 0x3000;  // 0.125 in bf16 and in fp16
  for (int i = threadIdx.x; i < (kABytes + kBBytes) / 2; i += kThreads) smem[i] = one_eighth;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // generic writes -> wgmma's reads
  __syncthreads();
  // Unswizzled K-major layout: 8x8 core matrices of 128 bytes, the two K halves 128 bytes apart
  // (LBO) and 8-row groups 256 bytes apart (SBO).
  const std::uint64_t desc_a = sm90a::smem_desc(smem, 128, 256, sm90a::Swizzle::none),
                      desc_b = sm90a::smem_desc(smem + kABytes / 2, 128, 256, sm90a::Swizzle::none);

  using T = std::conditional_t<kBf16, __nv_bfloat16, __half>;
  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.0f;
  for (long long it = 0; it < iters; ++it) {
    sm90a::wgmma_fence();
#pragma unroll
    for (int m = 0; m < kMmas; ++m) sm90a::wgmma_m64k16<256, 0, T>(d, desc_a, desc_b);
    sm90a::wgmma_commit();
    sm90a::wgmma_wait<0>();
  }
  double sum = 0;
#pragma unroll
  for (int i = 0; i < kAcc; ++i) sum += d[i];
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
    if (iters_ * kMmas >= (1 << 24)) throw InputError("wgmma ceiling: iters x mmas must stay below 2^24");
    require_sm90("the wgmma ceiling");
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    wgmma_peak_kernel<kBf16><<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    const double ref = reference_sum(iters_);
    Checker chk(Tolerance{0, 0}, "every thread's accumulator sum vs iters·mmas/4 per element, exact");
    for (std::size_t i = 0; i < out.size(); ++i) chk.check(out[i], ref, static_cast<std::int64_t>(i));
    return chk.finish();
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
  v.precision = kBf16 ? Precision::bf16 : Precision::fp16;
  v.backend = Backend::cuda;
  v.unit = "tensor";
  v.only_on = kSm90Only;
  v.summary = fmt::format("wgmma m64n256k16 {} -> FP32 from shared memory, 2 warpgroups per block", type);
  v.source = __FILE__;
  // Every warpgroup: iters x mmas wgmmas of 2·64·256·16 flops; every thread writes one double.
  v.flops = [](const Params& p) {
    const double warpgroups = static_cast<double>(param(p, "blocks") * param(p, "threads") / 128);
    return kFlopsPerWgmma * warpgroups * static_cast<double>(param(p, "mmas")) * static_cast<double>(param(p, "iters"));
  };
  v.bytes = [](const Params& p) { return 8.0 * static_cast<double>(param(p, "blocks") * param(p, "threads")); };
  v.work = "warpgroups x mmas x iters m64n256k16 wgmmas of 2·64·256·16 = 524288 flops; writes one double per thread";
  v.sizes = {wgmma_params(1056, 512)};
  v.quick_sizes = {wgmma_params(264, 512)};
  v.test_sizes = {wgmma_params(1, 1), wgmma_params(132, 10)};
  v.ceiling = CeilingSpec{v.variant, "compute", "",
                          "back-to-back wgmma m64n256k16 from shared memory, 16 per commit group: the tensor peak "
                          "Hopper's datasheet quotes"};
  v.make = [](const Params& p) { return std::make_unique<GpuWgmma<kBf16>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<false>());
ROOFBENCH_REGISTER(make<true>());

}  // namespace
}  // namespace roofbench::ceilings
