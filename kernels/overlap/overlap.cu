// The overlap lesson on the GPU (kernels/overlap/overlap.h): copy in, compute, copy out, chunk
// by chunk, on one stream (serial), pipelined over two or four streams from pinned memory, or
// over four from pageable memory.
// Run only this: roofbench run --device cuda:0 --filter 'overlap/'
#include <memory>
#include <vector>

#include "roofbench/cuda.h"
#include "kernels/overlap/overlap.h"

namespace roofbench::overlap {
namespace {

// ---------------------------------------------------------------- kernel
// `iters` dependent FMAs per element (a = -1, d = 1/4096 at run time): pairs v ← -v, v ← d - v.
__global__ void fma_chain(const float* __restrict__ x, float* __restrict__ y, long long n, long long iters, float a,
                          float d) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  // A plain int counter of pairs (iters < 2^16): with `k + 1 < iters` in 64 bits the compiler
  // tested for the exit after every pair, 3-5 instructions per two FMAs, and the kernel ran at a
  // third of the FMA rate its roof assumes. Unrolled by 8, the body is 16 FMAs back to back.
  const int pairs = static_cast<int>(iters >> 1);
#pragma unroll 8
  for (int k = 0; k < pairs; ++k) {
    v = fmaf(a, v, 0.0f);
    v = fmaf(a, v, d);
  }
  if (iters & 1) v = fmaf(a, v, 0.0f);
  y[i] = v;
}

// ---------------------------------------------------------------- launcher
// A parameter within [lo, hi], checked before anything is allocated (iters < 2^16: exact in FP32).
std::int64_t checked(const Params& p, const char* name, std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = param(p, name);
  if (v < lo || v > hi)
    throw std::invalid_argument("overlap: " + std::string(name) + " = " + std::to_string(v) + " is outside [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

class GpuOverlap final : public Instance {
 public:
  GpuOverlap(const Params& p, Form f)
      : n_(checked(p, "n", 1, std::int64_t{1} << 40)),
        chunks_(checked(p, "chunks", 1, std::int64_t{1} << 20)),
        iters_(checked(p, "iters", 0, (1 << 16) - 1)),
        x_dev_(static_cast<std::size_t>(n_)),
        y_dev_(static_cast<std::size_t>(n_)),
        streams_(static_cast<std::size_t>(streams_of(f))) {
    const auto n = static_cast<std::size_t>(n_);
    if (f == Form::pageable) {
      x_pageable_ = HostBuffer<float>(n);
      y_pageable_ = HostBuffer<float>(n);
    } else {
      x_pinned_ = std::make_unique<PinnedBuffer<float>>(n);
      y_pinned_ = std::make_unique<PinnedBuffer<float>>(n);
    }
  }

  void prepare(std::uint64_t seed) override {
    fill_overlap_input(x_host(), n_, seed);
    for (std::int64_t i = 0; i < n_; ++i) y_host()[i] = poison_f32();
    x_dev_.poison();
    y_dev_.poison();
  }

  // Chunk c: its copy in, its kernel, its copy out, on stream c mod S, in that order; every
  // stream's calls are queued before any waits (serial: S = 1, so nothing overlaps).
  void run() override {
    const std::size_t S = streams_.size();
    for (std::int64_t c = 0; c < chunks_; ++c) {
      const std::int64_t at = chunk_begin(n_, chunks_, c), len = chunk_size(n_, chunks_, c);
      if (len == 0) continue;
      cudaStream_t s = streams_[static_cast<std::size_t>(c) % S].get();
      const std::size_t bytes = static_cast<std::size_t>(len) * sizeof(float);
      CUDA_CHECK(cudaMemcpyAsync(x_dev_.get() + at, x_host() + at, bytes, cudaMemcpyHostToDevice, s));
      fma_chain<<<blocks_for(len, 256), 256, 0, s>>>(x_dev_.get() + at, y_dev_.get() + at, len, iters_, -1.0f, kStep);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaMemcpyAsync(y_host() + at, y_dev_.get() + at, bytes, cudaMemcpyDeviceToHost, s));
    }
  }

  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());  // the copies out land in host memory
    return check_overlap(x_host(), y_host(), n_, iters_);
  }

 private:
  float* x_host() { return x_pinned_ ? x_pinned_->data() : x_pageable_.data(); }
  float* y_host() { return y_pinned_ ? y_pinned_->data() : y_pageable_.data(); }
  std::int64_t n_, chunks_, iters_;
  DeviceBuffer<float> x_dev_, y_dev_;
  std::vector<CudaStream> streams_;
  std::unique_ptr<PinnedBuffer<float>> x_pinned_, y_pinned_;
  HostBuffer<float> x_pageable_, y_pageable_;
};

// ---------------------------------------------------------------- registration
Variant make(Form f) {
  Variant v = overlap_variant(f);
  v.summary = f == Form::serial     ? "copy in, kernel, copy out per chunk on one stream: nothing overlaps"
              : f == Form::streams2 ? "chunk i on stream i mod 2, pinned host memory"
              : f == Form::streams4 ? "chunk i on stream i mod 4, pinned host memory: copy in, compute, copy out overlap"
                                    : "streams4's calls from pageable host memory: the driver stages every copy";
  v.make = [f](const Params& p) { return std::make_unique<GpuOverlap>(p, f); };
  return v;
}
ROOFBENCH_REGISTER(make(Form::serial));
ROOFBENCH_REGISTER(make(Form::streams2));
ROOFBENCH_REGISTER(make(Form::streams4));
ROOFBENCH_REGISTER(make(Form::pageable));

}  // namespace
}  // namespace roofbench::overlap
