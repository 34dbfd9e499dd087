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
#ifndef ROOFBENCH_NO_SM90A
// Unswizzled K-major descriptor: 8x8 core matrices of 128 bytes, the two K halves 128 bytes
// apart (LBO) and 8-row groups 256 bytes apart (SBO).
__device__ __forceinline__ std::uint64_t plain_desc(const void* p) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(128 >> 4) << 16) |
         (static_cast<std::uint64_t>(256 >> 4) << 32);
}

template <bool kBf16>
__device__ __forceinline__ void wgmma_64x256x16(float (&d)[kAcc], std::uint64_t desc_a, std::uint64_t desc_b);
template <>
__device__ __forceinline__ void wgmma_64x256x16<true>(float (&d)[kAcc], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1, 1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b));
}
template <>
__device__ __forceinline__ void wgmma_64x256x16<false>(float (&d)[kAcc], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1, 1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b));
}
#endif

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
  const std::uint64_t desc_a = plain_desc(smem), desc_b = plain_desc(smem + kABytes / 2);

  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.0f;
  for (long long it = 0; it < iters; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int m = 0; m < kMmas; ++m) wgmma_64x256x16<kBf16>(d, desc_a, desc_b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
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
