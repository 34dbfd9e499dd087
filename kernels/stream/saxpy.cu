// SAXPY on the GPU, y = a·x + y: the memory-bound example kernel (BLAS level 1).
// Run only this: roofbench run --device cuda:0 --filter 'stream/saxpy'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/random.h"
#include "kernels/stream/saxpy.h"

namespace roofbench::stream {
namespace {

// ---------------------------------------------------------------- kernel
// One element per thread, as a plain kernel would be written: the HBM roof is its limit.
__global__ void saxpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// ---------------------------------------------------------------- launcher
class GpuSaxpy final : public Instance {
 public:
  explicit GpuSaxpy(const Params& p) : n_(param(p, "n")), x_(n_), y_(n_) {}
  void prepare(std::uint64_t seed) override {
    hx_ = uniform_vector<float>(n_, seed);
    hy0_ = uniform_vector<float>(n_, seed + 1);
    x_.upload(hx_);
    y_.upload(hy0_);
  }
  void run() override {
    saxpy_kernel<<<blocks_for(n_, 256), 256>>>(kSaxpyAlpha, x_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto y = y_.download();
    return check_saxpy(hx_.data(), hy0_.data(), y.data(), n_);
  }

 private:
  std::int64_t n_;
  DeviceBuffer<float> x_, y_;
  std::vector<float> hx_, hy0_;
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = saxpy_variant();
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = "y = a*x + y, one element per thread, arrays far larger than the L2";
  v.sizes = vector_sizes({1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 26});
  v.make = [](const Params& p) { return std::make_unique<GpuSaxpy>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::stream
