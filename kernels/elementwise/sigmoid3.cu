// Three chained sigmoid layers, forward and backward, on the GPU: store the activations for the
// backward pass, or recompute them there (the recomputation lesson: on a GPU FLOPs are cheap and
// bytes are not). Run only this: roofbench run --device cuda:0 --filter 'recompute/'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
// expf, not __expf: the accurate form; the recompute variant's extra work still hides under
// the memory traffic it saves.
__device__ __forceinline__ float sig(float t) {
  return 1.0f / (1.0f + expf(-t));
}
__global__ void forward_store(const float* __restrict__ x, float* __restrict__ a1, float* __restrict__ a2,
                              float* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    const float h1 = sig(x[i]), h2 = sig(h1);
    a1[i] = h1;
    a2[i] = h2;
    y[i] = sig(h2);
  }
}
__global__ void backward_store(const float* __restrict__ g, const float* __restrict__ y, const float* __restrict__ a2,
                               const float* __restrict__ a1, float* __restrict__ gx, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) gx[i] = g[i] * y[i] * (1 - y[i]) * a2[i] * (1 - a2[i]) * a1[i] * (1 - a1[i]);
}
__global__ void forward_recompute(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = sig(sig(sig(x[i])));
}
__global__ void backward_recompute(const float* __restrict__ x, const float* __restrict__ g, float* __restrict__ gx,
                                   long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    const float a1 = sig(x[i]), a2 = sig(a1), y = sig(a2);
    gx[i] = g[i] * y * (1 - y) * a2 * (1 - a2) * a1 * (1 - a1);
  }
}

// ---------------------------------------------------------------- launcher
class GpuSigmoid3 final : public Instance {
 public:
  GpuSigmoid3(const Params& p, bool recompute)
      : n_(param(p, "n")), recompute_(recompute), x_(n_), g_(n_), y_(n_), gx_(n_) {
    if (!recompute_) {
      a1_ = DeviceBuffer<float>(n_);
      a2_ = DeviceBuffer<float>(n_);
    }
  }
  void prepare(std::uint64_t seed) override {
    x_.upload_uniform(hx_, seed, -4.0, 4.0);
    g_.upload_uniform(hg_, seed + 1, -1.0, 1.0);
    y_.poison();
    gx_.poison();
    // The stored activations too: a forward pass that skipped them must not pass on what an
    // earlier instance of the same size left in the same memory.
    if (!recompute_) {
      a1_.poison();
      a2_.poison();
    }
  }
  void run() override {
    const unsigned blocks = blocks_for(n_, 256);
    if (recompute_) {
      forward_recompute<<<blocks, 256>>>(x_.get(), y_.get(), n_);
      CUDA_CHECK_LAUNCH();
      backward_recompute<<<blocks, 256>>>(x_.get(), g_.get(), gx_.get(), n_);
      CUDA_CHECK_LAUNCH();
      return;
    }
    forward_store<<<blocks, 256>>>(x_.get(), a1_.get(), a2_.get(), y_.get(), n_);
    CUDA_CHECK_LAUNCH();
    backward_store<<<blocks, 256>>>(g_.get(), y_.get(), a2_.get(), a1_.get(), gx_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    return check_sigmoid3(hx_.data(), hg_.data(), y_.download(hy_), gx_.download(hgx_), n_);
  }

 private:
  std::int64_t n_;
  bool recompute_;
  DeviceBuffer<float> x_, g_, y_, gx_, a1_, a2_;
  HostBuffer<float> hx_, hg_, hy_, hgx_;  // kept between checks: the recheck touches no new page
};

// ---------------------------------------------------------------- registration
Variant make(bool recompute) {
  Variant v = sigmoid3_variant(recompute);
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = recompute ? "forward keeps only x; the backward kernel recomputes a1, a2 and y"
                        : "forward stores a1 and a2 to HBM; the backward kernel reads them back";
  v.sizes = vector_sizes({1 << 24, 1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 24});
  v.make = [recompute](const Params& p) { return std::make_unique<GpuSigmoid3>(p, recompute); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
}  // namespace roofbench::elementwise
