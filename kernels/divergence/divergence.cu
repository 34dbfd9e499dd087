// Control divergence on the GPU: a branch that splits inside every warp (2 to 32 ways by lane),
// the same branch taken by whole warps (uniform), and no branch at all (branchless).
// Run only this: roofbench run --device cuda:0 --filter 'divergence/'
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/random.h"
#include "kernels/divergence/divergence.h"

namespace roofbench::divergence {
namespace {

// ---------------------------------------------------------------- kernels
// Each way is its own loop with its own compile-time constants, behind a 32-case switch: the
// compiler sees 32 different code paths, not one path with a table it could index (which is
// what the branchless variant does by hand). A loop of hundreds of dependent FMAs is far too
// long to predicate into a select, so a warp whose lanes take k ways runs k loops in turn.
template <int W>
__device__ __forceinline__ float body(float x, int iters) {
  constexpr float a = 1.0f + (W + 1) * 0x1p-23f, b = 0.25f + W / 64.0f;  // coef_a(W), coef_b(W)
  for (int k = 0; k < iters; ++k) x = fmaf(x, a, b);
  return x;
}

#define ROOFBENCH_WAY(W) \
  case W:                \
    return body<W>(x, iters);
__device__ float by_way(float x, int w, int iters) {
  switch (w) {
    ROOFBENCH_WAY(0) ROOFBENCH_WAY(1) ROOFBENCH_WAY(2) ROOFBENCH_WAY(3) ROOFBENCH_WAY(4) ROOFBENCH_WAY(5)
    ROOFBENCH_WAY(6) ROOFBENCH_WAY(7) ROOFBENCH_WAY(8) ROOFBENCH_WAY(9) ROOFBENCH_WAY(10) ROOFBENCH_WAY(11)
    ROOFBENCH_WAY(12) ROOFBENCH_WAY(13) ROOFBENCH_WAY(14) ROOFBENCH_WAY(15) ROOFBENCH_WAY(16) ROOFBENCH_WAY(17)
    ROOFBENCH_WAY(18) ROOFBENCH_WAY(19) ROOFBENCH_WAY(20) ROOFBENCH_WAY(21) ROOFBENCH_WAY(22) ROOFBENCH_WAY(23)
    ROOFBENCH_WAY(24) ROOFBENCH_WAY(25) ROOFBENCH_WAY(26) ROOFBENCH_WAY(27) ROOFBENCH_WAY(28) ROOFBENCH_WAY(29)
    ROOFBENCH_WAY(30) ROOFBENCH_WAY(31)
    default:
      return x;
  }
}
#undef ROOFBENCH_WAY

__constant__ float c_a[kMaxWays], c_b[kMaxWays];

enum class How { divergent, uniform, branchless };

template <How H>
__global__ void divergence_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, int iters,
                                  int ways) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int lane = threadIdx.x & 31;
  if (H == How::divergent) {
    y[i] = by_way(x[i], lane % ways, iters);
  } else if (H == How::uniform) {
    y[i] = by_way(x[i], static_cast<int>((i / 32) % ways), iters);
  } else {
    const int w = lane % ways;
    const float a = c_a[w], b = c_b[w];
    float v = x[i];
    for (int k = 0; k < iters; ++k) v = fmaf(v, a, b);
    y[i] = v;
  }
}

// ---------------------------------------------------------------- launcher
class GpuDivergence final : public Instance {
 public:
  GpuDivergence(const Params& p, How how)
      : how_(how), n_(param(p, "n")), iters_(static_cast<int>(param(p, "iters"))),
        ways_(static_cast<int>(param(p, "ways"))) {
    if (ways_ < 1 || ways_ > kMaxWays) throw InputError("divergence: ways must be 1 to 32");
    x_ = DeviceBuffer<float>(n_);
    y_ = DeviceBuffer<float>(n_);
  }
  void prepare(std::uint64_t seed) override {
    float a[kMaxWays], b[kMaxWays];
    for (int w = 0; w < kMaxWays; ++w) a[w] = coef_a(w), b[w] = coef_b(w);
    CUDA_CHECK(cudaMemcpyToSymbol(c_a, a, sizeof a));
    CUDA_CHECK(cudaMemcpyToSymbol(c_b, b, sizeof b));
    hx_ = uniform_vector<float>(n_, seed);
    x_.upload(hx_);
    y_.poison();
  }
  void run() override {
    const unsigned blocks = blocks_for(n_, 256);
    switch (how_) {
      case How::divergent:
        divergence_kernel<How::divergent><<<blocks, 256>>>(x_.get(), y_.get(), n_, iters_, ways_);
        break;
      case How::uniform:
        divergence_kernel<How::uniform><<<blocks, 256>>>(x_.get(), y_.get(), n_, iters_, ways_);
        break;
      case How::branchless:
        divergence_kernel<How::branchless><<<blocks, 256>>>(x_.get(), y_.get(), n_, iters_, ways_);
        break;
    }
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto y = y_.download();
    const int ways = ways_;
    const bool by_warp = how_ == How::uniform;
    return check_divergence(hx_.data(), y.data(), n_, iters_, [ways, by_warp](std::int64_t i) {
      return static_cast<int>(by_warp ? (i / 32) % ways : (i % 32) % ways);
    });
  }

 private:
  How how_;
  std::int64_t n_;
  int iters_, ways_;
  DeviceBuffer<float> x_, y_;
  std::vector<float> hx_;
};

// ---------------------------------------------------------------- registration
Params size(std::int64_t n, std::int64_t iters, std::int64_t ways) {
  return {{"n", n}, {"iters", iters}, {"ways", ways}};
}

Variant make(How how, const char* name, const char* summary) {
  Variant v = divergence_variant(name);
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.summary = summary;
  for (std::int64_t w : {2, 4, 8, 16, 32}) v.sizes.push_back(size(1 << 22, 512, w));
  v.quick_sizes = {size(1 << 22, 256, 2), size(1 << 22, 256, 32)};
  v.test_sizes = {size(1, 16, 2), size(1000, 16, 2), size(1000, 16, 32), size(4096, 16, 7)};
  v.make = [how](const Params& p) { return std::make_unique<GpuDivergence>(p, how); };
  return v;
}
ROOFBENCH_REGISTER(make(How::uniform, "uniform", "one way per warp (by warp index): no warp splits"));
ROOFBENCH_REGISTER(make(How::divergent, "divergent", "ways chosen by lane: every warp runs each of its ways in turn"));
ROOFBENCH_REGISTER(make(How::branchless, "branchless", "no branch: each lane's constants from a table"));

}  // namespace
}  // namespace roofbench::divergence
