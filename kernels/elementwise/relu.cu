// y = max(x, 0) on the GPU in FP32, FP16 and BF16: the same work on half the bytes (the
// low-precision lesson). Run only this: roofbench run --device cuda:0 --filter 'lowprec/relu'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/device_types.cuh"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernel
// One element per thread, as plainly as an FP32 ReLU would be written; only the type changes.
template <class D>
__global__ void relu_kernel(const D* __restrict__ x, D* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = to_float(x[i]) > 0.0f ? x[i] : from_float<D>(0.0f);
}

// ---------------------------------------------------------------- launcher
template <class T>
class GpuRelu final : public Instance {
  using D = device_t<T>;

 public:
  explicit GpuRelu(const Params& p) : n_(param(p, "n")), x_(n_), y_(n_) {}
  void prepare(std::uint64_t seed) override {
    const auto f = uniform_vector<float>(n_, seed);
    hx_.resize(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) hx_[i] = T(f[i]);
    x_.upload(hx_);
    y_.poison();
  }
  void run() override {
    relu_kernel<D><<<blocks_for(n_, 256), 256>>>(x_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const std::vector<T> y = y_.template download<T>();
    return check_relu(hx_.data(), y.data(), n_);
  }

 private:
  std::int64_t n_;
  DeviceBuffer<D> x_, y_;
  std::vector<T> hx_;
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = relu_variant<T>();
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = "max(x, 0), one element per thread";
  v.sizes = vector_sizes({1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 26});
  v.make = [](const Params& p) { return std::make_unique<GpuRelu<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<float>());
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::elementwise
