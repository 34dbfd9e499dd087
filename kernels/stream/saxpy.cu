// SAXPY on the GPU, y = a·x + y: the memory-bound example kernel (BLAS level 1).
// Run only this: roofbench run --device cuda:0 --filter 'stream/saxpy'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/random.h"
#include "kernels/stream/saxpy.h"

namespace roofbench::stream {
namespace {

// ---------------------------------------------------------------- kernel
// float4 accesses in a grid-stride loop over a few blocks per SM, as the triad ceiling's
// (kernels/ceilings/gpu_bandwidth.cu), then the last n % 4 elements one at a time: the HBM roof
// is its limit. One element per thread would keep 8 bytes of loads in flight per thread, too few
// to cover HBM's latency at 4.8 TB/s.
constexpr unsigned kThreads = 256;

__global__ void saxpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
  const long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (long long i = first; i < n4; i += stride) {
    const float4 u = x4[i], v = y4[i];
    y4[i] = make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);
  }
  for (long long i = 4 * n4 + first; i < n; i += stride) y[i] = a * x[i] + y[i];
}

// ---------------------------------------------------------------- launcher
class GpuSaxpy final : public Instance {
 public:
  explicit GpuSaxpy(const Params& p)
      : n_(param(p, "n")), blocks_(grid_stride_blocks(n_ / 4, kThreads)), x_(n_), y_(n_) {}
  void prepare(std::uint64_t seed) override {
    x_.upload_uniform(hx_, seed);
    y_.upload_uniform(hy0_, seed + 1);
  }
  void run() override {
    saxpy_kernel<<<blocks_, kThreads>>>(kSaxpyAlpha, x_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    return check_saxpy(hx_.data(), hy0_.data(), y_.download(hy_), n_);
  }

 private:
  std::int64_t n_;
  unsigned blocks_;
  DeviceBuffer<float> x_, y_;
  HostBuffer<float> hx_, hy0_, hy_;  // kept between checks: the recheck touches no new page
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = saxpy_variant();
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = "y = a*x + y, float4 grid-stride, arrays far larger than the L2";
  v.sizes = vector_sizes({1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 26});
  v.make = [](const Params& p) { return std::make_unique<GpuSaxpy>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::stream
