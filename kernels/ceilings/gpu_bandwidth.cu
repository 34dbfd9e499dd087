// GPU HBM bandwidth ceilings: read-only, write-only, copy, triad and update over arrays far
// larger than the L2 (1 GiB each in a full run). One technique (STREAM), so one file.
// Run only these: roofbench ceilings --device cuda:0
#include <memory>

#include "roofbench/cuda.h"
#include "roofbench/host_buffer.h"
#include "kernels/ceilings/stream_ceilings.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- kernels
// 16-byte loads and stores (float4) in a grid-stride loop over a grid of a few blocks per SM:
// wide accesses keep enough bytes in flight per thread to cover HBM latency. The read kernel
// sums exactly (small integers) and adds each warp's total to a 64-bit integer.
constexpr int kThreads = 256;

__global__ void read_kernel(const float4* __restrict__ x, long long n4, unsigned long long* sum) {
  float acc = 0;
#pragma unroll 4
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    const float4 v = x[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, static_cast<unsigned long long>(acc));
}

__global__ void write_kernel(float4* __restrict__ y, long long n4, float v) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
    y[i] = make_float4(v, v, v, v);
}

__global__ void copy_kernel(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}

// Bounded to 32 registers: it took 40, and 6 blocks of 256 threads fit in an SM's registers, not
// the 8 per SM its grid is sized for (a second, partial round of blocks).
__global__ void __launch_bounds__(kThreads, 8) triad_kernel(const float4* __restrict__ b, const float4* __restrict__ c, float4* __restrict__ a,
                             long long n4, float s) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    const float4 u = b[i], w = c[i];
    a[i] = make_float4(u.x + s * w.x, u.y + s * w.y, u.z + s * w.z, u.w + s * w.w);
  }
}

__global__ void update_kernel(float4* __restrict__ y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    float4 v = y[i];
    v.x += 1.0f, v.y += 1.0f, v.z += 1.0f, v.w += 1.0f;
    y[i] = v;
  }
}

// ---------------------------------------------------------------- launcher
class GpuStream final : public Instance {
 public:
  // vendor: cudaMemcpyAsync device to device in place of the copy kernel (its reference).
  GpuStream(StreamOp op, const Params& p, bool vendor = false)
      : op_(op), n_(param(p, "n")), vendor_(vendor && op == StreamOp::copy) {
    if (n_ % 4 != 0) throw InputError("GPU stream ceilings need n to be a multiple of 4");
    blocks_ = grid_stride_blocks(n_ / 4, kThreads);
    if (op_ != StreamOp::write) x_ = DeviceBuffer<float>(n_);
    if (op_ == StreamOp::triad) c_ = DeviceBuffer<float>(n_);
    if (op_ != StreamOp::read) y_ = DeviceBuffer<float>(n_);
    if (op_ == StreamOp::read) sum_ = DeviceBuffer<unsigned long long>(1);
  }

  void prepare(std::uint64_t seed) override {
    value_ = static_cast<float>(seed % 7 + 1);
    hx_.clear();
    hc_.clear();
    if (op_ != StreamOp::write) {
      hx_.resize(n_);
      fill_small_ints(hx_.data(), n_, seed);
      x_.upload(hx_);
    }
    if (op_ == StreamOp::triad) {
      hc_.resize(n_);
      fill_small_ints(hc_.data(), n_, seed + 1);
      c_.upload(hc_);
    }
    if (op_ == StreamOp::update)
      y_.copy_from(x_);
    else if (op_ != StreamOp::read)
      y_.poison();
    // The sum is zeroed here, not in run(): the timed runs then hold the kernel alone (later runs
    // keep adding to it, which only the first, verified, run cares about).
    if (op_ == StreamOp::read) sum_.zero();
  }

  void run() override {
    const long long n4 = n_ / 4;
    switch (op_) {
      case StreamOp::read:
        read_kernel<<<blocks_, kThreads>>>(reinterpret_cast<const float4*>(x_.get()), n4, sum_.get());
        break;
      case StreamOp::write:
        write_kernel<<<blocks_, kThreads>>>(reinterpret_cast<float4*>(y_.get()), n4, value_);
        break;
      case StreamOp::copy:
        if (vendor_) {
          // On the default stream like the kernels, so the timing events bracket it; device to
          // device, it does not wait for the host.
          CUDA_CHECK(cudaMemcpyAsync(y_.get(), x_.get(), static_cast<std::size_t>(n_) * sizeof(float),
                                     cudaMemcpyDeviceToDevice, 0));
          break;
        }
        copy_kernel<<<blocks_, kThreads>>>(reinterpret_cast<const float4*>(x_.get()),
                                           reinterpret_cast<float4*>(y_.get()), n4);
        break;
      case StreamOp::triad:
        triad_kernel<<<blocks_, kThreads>>>(reinterpret_cast<const float4*>(x_.get()),
                                            reinterpret_cast<const float4*>(c_.get()),
                                            reinterpret_cast<float4*>(y_.get()), n4, kTriadScalar);
        break;
      case StreamOp::update:
        update_kernel<<<blocks_, kThreads>>>(reinterpret_cast<float4*>(y_.get()), n4);
        break;
    }
    CUDA_CHECK_LAUNCH();
  }

  Verification verify() override {
    if (op_ == StreamOp::read) {
      const auto s = sum_.download();
      return check_sum(static_cast<double>(s[0]), exact_sum(hx_.data(), n_), n_);
    }
    const auto y = y_.download();
    return check_stream(op_, hx_.data(), hc_.data(), y.data(), n_, value_);
  }

 private:
  StreamOp op_;
  std::int64_t n_;
  bool vendor_;
  unsigned blocks_ = 1;
  DeviceBuffer<float> x_, c_, y_;
  DeviceBuffer<unsigned long long> sum_;
  std::vector<float> hx_, hc_;
  float value_ = 1;
};

// ---------------------------------------------------------------- registration
Variant make(StreamOp op) {
  Variant v = stream_ceiling_variant(op, Backend::cuda, Level::dram);
  v.summary = std::string("STREAM-style ") + op_name(op) + ", float4 grid-stride, 8 blocks per SM";
  v.ceiling->method = "float4 grid-stride loop, 256 threads x 8 blocks per SM, arrays of n floats (>= 5x the L2 each)";
  v.sizes = vector_sizes({1LL << 28});
  // The quick runs too: at 2^26 floats (a 64 us read on an H200) the ramp of the launch and the
  // drain cost the read ceiling 10% (3.99 against 4.42 TB/s on the second H200 visit), and the
  // quick SAXPY, which moves three times the bytes, came out 6% above that roof: IMPLAUSIBLE
  // against a roof that was not one. A roof is measured at the size that reaches the asymptote.
  v.quick_sizes = v.sizes;
  v.test_sizes = vector_sizes({4, 4096 + 4, 1 << 20});
  v.ceiling->sustained = op == StreamOp::read;  // HBM's roof, held
  v.make = [op](const Params& p) { return std::make_unique<GpuStream>(op, p); };
  return v;
}
ROOFBENCH_REGISTER(make(StreamOp::read));
ROOFBENCH_REGISTER(make(StreamOp::write));
ROOFBENCH_REGISTER(make(StreamOp::copy));
ROOFBENCH_REGISTER(make(StreamOp::triad));
ROOFBENCH_REGISTER(make(StreamOp::update));

// The vendor's copy beside the suite's: cudaMemcpy device to device over the same arrays. The
// reports give the copy ceiling as a ratio to it (target: at least 1.0x); it is a roof of its own
// where it is the faster. The driver may move it with a copy engine rather than a kernel, so
// `run --counters` does not profile it (nothing may be there to count).
Variant make_memcpy() {
  Variant v = bandwidth_ceiling_variant("dram_memcpy", Backend::cuda, Level::dram,
                                        "cudaMemcpyAsync device to device on the default stream, arrays of n floats "
                                        "(>= 5x the L2 each)");
  v.ceiling->reference_for = stream_ceiling_name(StreamOp::copy, Level::dram);
  v.work = stream_work(StreamOp::copy);
  v.summary = "cudaMemcpy device to device: the reference for the copy ceiling";
  v.sizes = vector_sizes({1LL << 28});
  v.quick_sizes = v.sizes;  // as the suite's own copy's (make above)
  v.test_sizes = vector_sizes({4, 4096 + 4, 1 << 20});
  v.launches_kernels = false;
  v.make = [](const Params& p) { return std::make_unique<GpuStream>(StreamOp::copy, p, /*vendor=*/true); };
  return v;
}
ROOFBENCH_REGISTER(make_memcpy());

}  // namespace
}  // namespace roofbench::ceilings
