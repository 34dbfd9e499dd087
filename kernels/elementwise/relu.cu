// y = max(x, 0) on the GPU in FP32, FP16 and BF16: the same work on half the bytes (the
// low-precision lesson). Run only this: roofbench run --device cuda:0 --filter 'lowprec/relu'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/device_types.cuh"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

constexpr unsigned kThreads = 256;

// ---------------------------------------------------------------- kernel
// Every form moves 16 bytes per access, as the copy ceiling does (kernels/ceilings/gpu_bandwidth.cu):
// 4 floats or 8 halves per load, in a grid-stride loop over a few blocks per SM, then the last
// elements one at a time. Only the type changes, and so only the bytes: the FP16 form does the
// same accesses over half the memory. One element per thread instead keeps 2 bytes (FP16) or 4
// (FP32) in flight per thread, 4-8 KiB per SM, far from what covers HBM's latency at 4.8 TB/s:
// both forms would wait on latency, not bytes, and FP16 could not show its 2x.
template <class D>
__device__ __forceinline__ D relu(D x) {
  return to_float(x) > 0.0f ? x : from_float<D>(0.0f);
}

template <class D>
__global__ void __launch_bounds__(kThreads, 8) relu_kernel(const D* __restrict__ x, D* __restrict__ y, long long n) {
  constexpr int kPer = 16 / sizeof(D);
  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
  const long long nv = n / kPer;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  // Four 16-byte loads in flight per thread, in every precision: the compiler unrolled the FP32
  // loop by itself but not the FP16 one (eight conversions per load), which then had one. 32
  // registers (__launch_bounds__), so that the grid's 8 blocks per SM are all resident.
  for (long long i = first; i < nv; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (i + j * stride < nv) v[j] = xv[i + j * stride];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (i + j * stride >= nv) break;
      D* e = reinterpret_cast<D*>(&v[j]);
#pragma unroll
      for (int k = 0; k < kPer; ++k) e[k] = relu(e[k]);
      yv[i + j * stride] = v[j];
    }
  }
  for (long long i = kPer * nv + first; i < n; i += stride) y[i] = relu(x[i]);
}

// ---------------------------------------------------------------- launcher
template <class T>
class GpuRelu final : public Instance {
  using D = device_t<T>;

 public:
  explicit GpuRelu(const Params& p)
      : n_(param(p, "n")), blocks_(grid_stride_blocks(n_ / (16 / sizeof(D)), kThreads)), x_(n_), y_(n_) {}
  void prepare(std::uint64_t seed) override {
    x_.upload_uniform(hx_, seed);
    y_.poison();
  }
  void run() override {
    relu_kernel<D><<<blocks_, kThreads>>>(x_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    return check_relu(hx_.data(), y_.download(hy_), n_);
  }

 private:
  std::int64_t n_;
  unsigned blocks_;
  DeviceBuffer<D> x_, y_;
  HostBuffer<T> hx_, hy_;  // kept between checks: the recheck touches no new page
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = relu_variant<T>();
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = "max(x, 0), 16-byte accesses in a grid-stride loop";
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
