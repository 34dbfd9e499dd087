// y = max(a·x + b, 0) on the GPU, in two passes and fused. Run only this:
//   fused_op_bench run --device cuda:0 --no-builtin --filter 'myops/'
#include <roofbench/cuda.h>

#include <memory>

#include "fused_op.h"

namespace {

__global__ void axpb(const float* __restrict__ x, float* __restrict__ t, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) t[i] = fused_op::kA * x[i] + fused_op::kB;
}
__global__ void relu(const float* __restrict__ t, float* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(t[i], 0.0f);
}
__global__ void axpb_relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(fused_op::kA * x[i] + fused_op::kB, 0.0f);
}

class GpuAxpbRelu final : public roofbench::Instance {
 public:
  GpuAxpbRelu(const roofbench::Params& p, bool fused)
      : n_(roofbench::param(p, "n")), fused_(fused), x_(n_), t_(fused ? 0 : n_), y_(n_) {}

  void prepare(std::uint64_t seed) override {
    hx_ = roofbench::uniform_vector<float>(n_, seed);
    x_.upload(hx_);
    y_.poison();  // NaN: an element never written fails
  }

  void run() override {  // enqueue on the default stream, do not wait: the harness times it
    const unsigned blocks = roofbench::blocks_for(n_, 256);
    if (fused_) {
      axpb_relu<<<blocks, 256>>>(x_.get(), y_.get(), n_);
    } else {
      axpb<<<blocks, 256>>>(x_.get(), t_.get(), n_);
      CUDA_CHECK_LAUNCH();
      relu<<<blocks, 256>>>(t_.get(), y_.get(), n_);
    }
    CUDA_CHECK_LAUNCH();
  }

  roofbench::Verification verify() override {
    const std::vector<float> y = y_.download();
    return fused_op::check(hx_.data(), y.data(), n_);
  }

 private:
  std::int64_t n_;
  bool fused_;
  roofbench::DeviceBuffer<float> x_, t_, y_;
  std::vector<float> hx_;
};

roofbench::Variant make(bool fused) {
  roofbench::Variant v = fused_op::declare(fused);
  v.backend = roofbench::Backend::cuda;
  v.unit = roofbench::Unit::simt;
  v.summary = fused ? "one kernel, one element per thread" : "two kernels, through global memory";
  v.sizes = roofbench::vector_sizes({1 << 26, 1 << 28});
  v.quick_sizes = roofbench::vector_sizes({1 << 24});
  v.make = [fused](const roofbench::Params& p) { return std::make_unique<GpuAxpbRelu>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
