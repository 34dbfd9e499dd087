// y = gelu(x + bias) on the GPU in FP32, FP16 and BF16: two kernels against one (the fusion
// lesson on a real chain), and half the bytes in 16 bits (the low-precision lesson).
// Run only this: roofbench run --device cuda:0 --filter 'fusion/bias_gelu'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/device_types.cuh"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
// Arithmetic in FP32 whatever the storage; tanhf, not the approximate tanh.approx instruction.
__device__ __forceinline__ float gelu_f(float t) {
  return 0.5f * t * (1.0f + tanhf(0.7978845608f * (t + 0.044715f * t * t * t)));
}

template <class D>
__global__ void bias_add_kernel(const D* __restrict__ x, const D* __restrict__ bias, D* __restrict__ t, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) t[i] = from_float<D>(to_float(x[i]) + to_float(bias[i % kBiasLength]));
}
template <class D>
__global__ void gelu_kernel(const D* __restrict__ t, D* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = from_float<D>(gelu_f(to_float(t[i])));
}
template <class D>
__global__ void bias_gelu_fused_kernel(const D* __restrict__ x, const D* __restrict__ bias, D* __restrict__ y,
                                       long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = from_float<D>(gelu_f(to_float(x[i]) + to_float(bias[i % kBiasLength])));
}

// ---------------------------------------------------------------- launcher
template <class T>
class GpuBiasGelu final : public Instance {
  using D = device_t<T>;

 public:
  GpuBiasGelu(const Params& p, bool fused) : n_(param(p, "n")), fused_(fused), x_(n_), y_(n_), bias_(kBiasLength) {
    if (!fused_) t_ = DeviceBuffer<D>(n_);
  }
  void prepare(std::uint64_t seed) override {
    x_.upload_uniform(hx_, seed, -3.0, 3.0);
    bias_.upload_uniform(hb_, seed + 1, -1.0, 1.0);
    y_.poison();
    // The unfused form's t too: a bias pass that wrote only part of it must not pass on what an
    // earlier instance of the same size left in the same memory.
    if (!fused_) t_.poison();
  }
  void run() override {
    const unsigned blocks = blocks_for(n_, 256);
    if (fused_) {
      bias_gelu_fused_kernel<D><<<blocks, 256>>>(x_.get(), bias_.get(), y_.get(), n_);
      CUDA_CHECK_LAUNCH();
      return;
    }
    bias_add_kernel<D><<<blocks, 256>>>(x_.get(), bias_.get(), t_.get(), n_);
    CUDA_CHECK_LAUNCH();
    gelu_kernel<D><<<blocks, 256>>>(t_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    return check_bias_gelu(hx_.data(), hb_.data(), y_.download(hy_), n_);
  }

 private:
  std::int64_t n_;
  bool fused_;
  DeviceBuffer<D> x_, y_, bias_, t_;
  HostBuffer<T> hx_, hb_, hy_;  // kept between checks: the recheck touches no new page
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make(bool fused) {
  Variant v = bias_gelu_variant<T>(fused);
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = fused ? "gelu(x + bias) in one kernel, FP32 arithmetic" : "x + bias, then gelu, as two kernels";
  v.sizes = vector_sizes({1 << 24, 1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 24});
  v.make = [fused](const Params& p) { return std::make_unique<GpuBiasGelu<T>>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make<float>(false));
ROOFBENCH_REGISTER(make<float>(true));
ROOFBENCH_REGISTER(make<half_t>(false));
ROOFBENCH_REGISTER(make<half_t>(true));
ROOFBENCH_REGISTER(make<bf16_t>(false));
ROOFBENCH_REGISTER(make<bf16_t>(true));

}  // namespace
}  // namespace roofbench::elementwise
