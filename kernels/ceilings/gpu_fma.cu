// GPU FP32 FMA peak on the CUDA cores: every thread runs independent fmaf chains in registers.
// Run only this: roofbench ceilings --device cuda:0
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "bench/cuda_check.h"
#include "bench/registry.h"
#include "bench/verify.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// x ← x·a + b converges (a < 1), and fmaf rounds once exactly like std::fma, so the device
// result equals the host's bit for bit. Each thread returns the sum of its chains, in order.
constexpr float kA = 0.999999f, kB = 1e-4f;
constexpr int kChains = 8, kThreads = 256;

// Chain r starts at 0.5 + r/128: exact in float however it is computed (nvcc contracts a·b + c
// into one FMA, the host may not), so host and device start from the same bits.
__host__ __device__ constexpr float chain_start(int r) {
  return 0.5f + 0.0078125f * static_cast<float>(r);
}

float reference_sum(std::int64_t iters) {
  float sum = 0;
  for (int r = 0; r < kChains; ++r) {
    float x = chain_start(r);
    for (std::int64_t i = 0; i < iters; ++i) x = std::fma(x, kA, kB);
    sum += x;
  }
  return sum;
}

// ---------------------------------------------------------------- kernel
// Eight independent chains per thread give the scheduler eight FMAs to issue while each waits
// its ~4-cycle latency; many short blocks keep the tail of the last wave small.
__global__ void fma_kernel(float* out, long long iters) {
  float x[kChains];
#pragma unroll
  for (int r = 0; r < kChains; ++r) x[r] = chain_start(r);
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int r = 0; r < kChains; ++r) x[r] = fmaf(x[r], kA, kB);
  }
  float sum = 0;
#pragma unroll
  for (int r = 0; r < kChains; ++r) sum += x[r];
  out[blockIdx.x * (long long)blockDim.x + threadIdx.x] = sum;
}

// ---------------------------------------------------------------- launcher
class GpuFma final : public Instance {
 public:
  explicit GpuFma(const Params& p)
      : blocks_(param(p, "blocks")), iters_(param(p, "iters")), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    if (param(p, "threads") != kThreads || param(p, "chains") != kChains)
      throw InputError("fp32_fma ceiling: threads and chains are fixed at 256 and 8");
  }
  void prepare(std::uint64_t) override { out_.poison(); }
  void run() override {
    fma_kernel<<<static_cast<unsigned>(blocks_), kThreads>>>(out_.get(), iters_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto out = out_.download();
    const float ref = reference_sum(iters_);
    Checker chk(Tolerance{0, 0}, "every thread's chain sum vs host std::fma, exact");
    for (std::size_t i = 0; i < out.size(); ++i) chk.check(out[i], ref, static_cast<std::int64_t>(i));
    return chk.finish();
  }

 private:
  std::int64_t blocks_, iters_;
  DeviceBuffer<float> out_;
};

// ---------------------------------------------------------------- registration
Params fma_params(std::int64_t blocks, std::int64_t iters) {
  return {{"blocks", blocks}, {"threads", kThreads}, {"chains", kChains}, {"iters", iters}};
}

Variant make() {
  Variant v;
  v.family = "ceiling";
  v.variant = "fp32_fma";
  v.precision = Precision::fp32;
  v.backend = Backend::cuda;
  v.unit = "simt";
  v.summary = "8 independent fmaf chains per thread, 256 threads per block";
  v.source = __FILE__;
  // Every thread: chains x iters FMAs of 2 flops; writes one float.
  v.flops = [](const Params& p) {
    return 2.0 * static_cast<double>(param(p, "blocks") * param(p, "threads") * param(p, "chains")) *
           static_cast<double>(param(p, "iters"));
  };
  v.bytes = [](const Params& p) { return 4.0 * static_cast<double>(param(p, "blocks") * param(p, "threads")); };
  v.work = "blocks x threads x chains x iters FMAs of 2 flops; writes one float per thread";
  v.sizes = {fma_params(65536, 4096)};
  v.quick_sizes = {fma_params(16384, 4096)};
  v.test_sizes = {fma_params(1, 1), fma_params(264, 100)};
  v.ceiling = CeilingSpec{"fp32_fma", "compute", "", "fmaf chains in registers, 8 per thread, 65536 short blocks"};
  v.make = [](const Params& p) { return std::make_unique<GpuFma>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::ceilings
