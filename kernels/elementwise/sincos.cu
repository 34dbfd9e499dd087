// y = sin²x + cos²x on the GPU: five kernels, each a full pass through HBM, against one (the
// fusion lesson). Run only this: roofbench run --device cuda:0 --filter 'fusion/sincos'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/random.h"
#include "kernels/elementwise/elementwise.h"

namespace roofbench::elementwise {
namespace {

// ---------------------------------------------------------------- kernels
// Every kernel here walks its arrays as the copy ceiling does (kernels/ceilings/gpu_bandwidth.cu):
// 16-byte float4 accesses in a grid-stride loop over a few blocks per SM, then the last n % 4
// elements one at a time. Both forms get the same access pattern, so what separates them is the
// passes through memory alone, and the fused kernel's share of the copy roof compares like with
// like.
struct Sin {
  __device__ float operator()(float x) const { return sinf(x); }
};
struct Cos {
  __device__ float operator()(float x) const { return cosf(x); }
};
struct Square {
  __device__ float operator()(float a) const { return a * a; }
};
struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct SinCosSquares {  // the fused form: x read once, y written once
  __device__ float operator()(float x) const {
    float s, c;
    sincosf(x, &s, &c);  // one range reduction for both, as declared ("sincos", elementwise.h)
    return s * s + c * c;
  }
};

constexpr int kThreads = 256;

// y[i] = f(x[i])
template <class F>
__global__ void map_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, F f) {
  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
  const long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (long long i = first; i < n4; i += stride) {
    const float4 v = x4[i];
    y4[i] = make_float4(f(v.x), f(v.y), f(v.z), f(v.w));
  }
  for (long long i = 4 * n4 + first; i < n; i += stride) y[i] = f(x[i]);
}

// y[i] = f(a[i], b[i]). Bounded to 32 registers (it took 40: 6 blocks per SM, not the grid's 8).
template <class F>
__global__ void __launch_bounds__(kThreads, 8) zip_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y, long long n,
                           F f) {
  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
  const long long n4 = n / 4;
  const float4 *a4 = reinterpret_cast<const float4*>(a), *b4 = reinterpret_cast<const float4*>(b);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (long long i = first; i < n4; i += stride) {
    const float4 u = a4[i], v = b4[i];
    y4[i] = make_float4(f(u.x, v.x), f(u.y, v.y), f(u.z, v.z), f(u.w, v.w));
  }
  for (long long i = 4 * n4 + first; i < n; i += stride) y[i] = f(a[i], b[i]);
}

// ---------------------------------------------------------------- launcher
class GpuSinCos final : public Instance {
 public:
  GpuSinCos(const Params& p, bool fused) : n_(param(p, "n")), fused_(fused), x_(n_), y_(n_) {
    blocks_ = grid_stride_blocks(n_ / 4, kThreads);
    if (!fused_) {
      s_ = DeviceBuffer<float>(n_);
      c_ = DeviceBuffer<float>(n_);
      s2_ = DeviceBuffer<float>(n_);
      c2_ = DeviceBuffer<float>(n_);
    }
  }
  void prepare(std::uint64_t seed) override {
    hx_.ensure_size(n_);
    fill_uniform(hx_.data(), n_, seed, -4.0, 4.0);
    plant_sincos_nans(hx_.data(), n_, seed);
    x_.upload(hx_.data());
    y_.poison();
    if (!fused_) {  // checked too (check_sincos): a pass that wrote nothing must not pass on old data
      s_.poison();
      c_.poison();
      s2_.poison();
      c2_.poison();
    }
  }
  void run() override {
    if (fused_) {
      map_kernel<<<blocks_, kThreads>>>(x_.get(), y_.get(), n_, SinCosSquares{});
      CUDA_CHECK_LAUNCH();
      return;
    }
    map_kernel<<<blocks_, kThreads>>>(x_.get(), s_.get(), n_, Sin{});
    CUDA_CHECK_LAUNCH();
    map_kernel<<<blocks_, kThreads>>>(x_.get(), c_.get(), n_, Cos{});
    CUDA_CHECK_LAUNCH();
    map_kernel<<<blocks_, kThreads>>>(s_.get(), s2_.get(), n_, Square{});
    CUDA_CHECK_LAUNCH();
    map_kernel<<<blocks_, kThreads>>>(c_.get(), c2_.get(), n_, Square{});
    CUDA_CHECK_LAUNCH();
    zip_kernel<<<blocks_, kThreads>>>(s2_.get(), c2_.get(), y_.get(), n_, Add{});
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const float* y = y_.download(hy_);
    if (fused_) return check_sincos(hx_.data(), y, n_);
    return check_sincos(hx_.data(), y, n_, s_.download(hs_), c_.download(hc_));
  }

 private:
  std::int64_t n_;
  bool fused_;
  unsigned blocks_ = 1;  // a few blocks per SM, as for the copy ceiling
  DeviceBuffer<float> x_, y_, s_, c_, s2_, c2_;
  HostBuffer<float> hx_, hy_, hs_, hc_;  // kept between checks: the recheck touches no new page
};

// ---------------------------------------------------------------- registration
Variant make(bool fused) {
  Variant v = sincos_variant(fused);
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = fused ? "sin²x + cos²x in one kernel: x read once, y written once (float4, as the copy ceiling)"
                    : "sin, cos, square, square, add as five kernels, every intermediate through HBM (float4)";
  v.sizes = vector_sizes({1 << 24, 1 << 26, 1 << 28});
  v.quick_sizes = vector_sizes({1 << 24});
  v.make = [fused](const Params& p) { return std::make_unique<GpuSinCos>(p, fused); };
  return v;
}
ROOFBENCH_REGISTER(make(false));
ROOFBENCH_REGISTER(make(true));

}  // namespace
}  // namespace roofbench::elementwise
