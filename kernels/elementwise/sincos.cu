// y = sin²x + cos²x on the GPU: five kernels, each a full pass through HBM, against one (the
// fusion lesson). Run only this: roofbench run --device cuda:0 --filter 'fusion/sincos'
#include <memory>

#include "bench/cuda_check.h"
#include "bench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
// sinf/cosf (not the __sinf intrinsics): the accurate forms a library would call. Even so, the
// arithmetic is a few dozen instructions per element against 8 bytes of traffic, and the fused
// kernel stays on the HBM roof; unfused, the same work moves 44 bytes per element.
__global__ void sin_kernel(const float* __restrict__ x, float* __restrict__ s, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) s[i] = sinf(x[i]);
}
__global__ void cos_kernel(const float* __restrict__ x, float* __restrict__ c, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = cosf(x[i]);
}
__global__ void square_kernel(const float* __restrict__ a, float* __restrict__ a2, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) a2[i] = a[i] * a[i];
}
__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                           long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i];
}
__global__ void sincos_fused_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    const float s = sinf(x[i]), c = cosf(x[i]);
    y[i] = s * s + c * c;
  }
}

// ---------------------------------------------------------------- launcher
class GpuSinCos final : public Instance {
 public:
  GpuSinCos(const Params& p, bool fused) : n_(param(p, "n")), fused_(fused), x_(n_), y_(n_) {
    if (!fused_) {
      s_ = DeviceBuffer<float>(n_);
      c_ = DeviceBuffer<float>(n_);
      s2_ = DeviceBuffer<float>(n_);
      c2_ = DeviceBuffer<float>(n_);
    }
  }
  void prepare(std::uint64_t seed) override {
    hx_ = uniform_vector<float>(n_, seed, -4.0, 4.0);
    x_.upload(hx_);
    CUDA_CHECK(cudaMemset(y_.get(), 0xFF, y_.bytes()));  // NaN
  }
  void run() override {
    const unsigned blocks = blocks_for(n_, 256);
    if (fused_) {
      sincos_fused_kernel<<<blocks, 256>>>(x_.get(), y_.get(), n_);
      CUDA_CHECK_LAUNCH();
      return;
    }
    sin_kernel<<<blocks, 256>>>(x_.get(), s_.get(), n_);
    CUDA_CHECK_LAUNCH();
    cos_kernel<<<blocks, 256>>>(x_.get(), c_.get(), n_);
    CUDA_CHECK_LAUNCH();
    square_kernel<<<blocks, 256>>>(s_.get(), s2_.get(), n_);
    CUDA_CHECK_LAUNCH();
    square_kernel<<<blocks, 256>>>(c_.get(), c2_.get(), n_);
    CUDA_CHECK_LAUNCH();
    add_kernel<<<blocks, 256>>>(s2_.get(), c2_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto y = y_.download();
    return check_sincos(hx_.data(), y.data(), n_);
  }

 private:
  std::int64_t n_;
  bool fused_;
  DeviceBuffer<float> x_, y_, s_, c_, s2_, c2_;
  std::vector<float> hx_;
};

// ---------------------------------------------------------------- registration
Variant make(bool fused) {
  Variant v = sincos_variant(fused);
  v.backend = Backend::cuda;
  v.unit = "simt";
  v.summary = fused ? "sin²x + cos²x in one kernel: x read once, y written once"
                    : "sin, cos, square, square, add as five kernels, every intermediate through HBM";
  v.source = __FILE__;
  v.sizes = vector_sizes({1 << 24, 1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 24});
  v.make = [fused](const Params& p) { return std::make_unique<GpuSinCos>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
}  // namespace roofbench::elementwise
