#pragma once
// The CUDA GEMM instance every GPU variant shares: inputs (FP32, FP16 or BF16) made on the host
// and kept for the FP64 check, copied up for each check; C (always FP32) poisoned before the verified run.
// A variant supplies launch(), and may reject shapes it cannot handle in its constructor.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <memory>
#include <type_traits>

#include "roofbench/cuda.h"
#include "roofbench/device_types.cuh"
#include "roofbench/half.h"
#include "roofbench/random.h"
#include "roofbench/variant.h"
#include "kernels/gemm/reference.h"

namespace roofbench::gemm {

// ---- device helpers shared by the FP32 SIMT rungs (register-tiled, warp-tiled)
// One float4 of a row-major matrix at (r, c..c+3); zeros outside R x C. The float4 load needs
// a row stride that is a multiple of 4 (16-byte alignment), else it goes element by element.
__device__ __forceinline__ float4 load4(const float* __restrict__ X, int R, int Cn, int r, int c, bool vec) {
  const long long base = (long long)r * Cn + c;
  if (vec && r < R && c + 3 < Cn) return *reinterpret_cast<const float4*>(X + base);
  float4 v;
  v.x = (r < R && c + 0 < Cn) ? X[base + 0] : 0.0f;
  v.y = (r < R && c + 1 < Cn) ? X[base + 1] : 0.0f;
  v.z = (r < R && c + 2 < Cn) ? X[base + 2] : 0.0f;
  v.w = (r < R && c + 3 < Cn) ? X[base + 3] : 0.0f;
  return v;
}

__device__ __forceinline__ void store4(float* __restrict__ C, int M, int N, int r, int c, float4 v, bool vec) {
  if (r >= M) return;
  const long long base = (long long)r * N + c;
  if (vec && c + 3 < N) {
    *reinterpret_cast<float4*>(C + base) = v;
    return;
  }
  if (c + 0 < N) C[base + 0] = v.x;
  if (c + 1 < N) C[base + 1] = v.y;
  if (c + 2 < N) C[base + 2] = v.z;
  if (c + 3 < N) C[base + 3] = v.w;
}

template <class T>
class GpuGemm : public Instance {
 public:
  using D = device_t<T>;
  explicit GpuGemm(const Params& p) : M(param(p, "M")), N(param(p, "N")), K(param(p, "K")) {
    if (M <= 0 || N <= 0 || K <= 0) throw InputError("GEMM sizes must be positive");
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) throw InputError("GEMM sizes must fit in 32 bits");
  }

  void prepare(std::uint64_t seed) override {
    seed_ = seed;
    // Allocated here rather than in the constructor so that a rejected shape allocates nothing.
    if (!dC.get()) {
      dA = DeviceBuffer<T>(static_cast<std::size_t>(M * K));
      dB = DeviceBuffer<T>(static_cast<std::size_t>(K * N));
      dC = DeviceBuffer<float>(static_cast<std::size_t>(M * N));
    }
    dA.upload_uniform(hA, seed);
    dB.upload_uniform(hB, seed + 1);
    dC.poison();
    setup();
  }
  void run() override {
    launch(reinterpret_cast<const D*>(dA.get()), reinterpret_cast<const D*>(dB.get()), dC.get());
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    return check(hA.data(), hB.data(), dC.download(hC), M, N, K, seed_);
  }

 protected:
  virtual void setup() {}  // after the inputs exist: e.g. descriptors that hold their addresses
  virtual void launch(const D* A, const D* B, float* C) = 0;
  const std::int64_t M, N, K;
  const T* device_a() const { return dA.get(); }
  const T* device_b() const { return dB.get(); }
  float* device_c() const { return dC.get(); }

  // For kernels that copy rows of A and B in 16-byte chunks: refuses, before any CUDA call, K or
  // N that is not a multiple of 8 16-bit elements, naming the variant and why it needs them.
  void require_16_byte_rows(const std::string& variant, const char* why) const {
    if (K % 8 != 0 || N % 8 != 0)
      throw InputError("gemm/" + variant + " needs K and N to be multiples of 8 (" + why + "); got M=" +
                       std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
  }

  // For kernels that put M in blocks of `bm` rows on the grid's y axis: refuses, before any CUDA
  // call, an M that needs more than the 65535 blocks that axis holds (the launch would fail with
  // a bare "invalid configuration argument"), naming the variant and the largest M it takes.
  void require_grid_rows(const std::string& variant, std::int64_t bm) const {
    constexpr std::int64_t kMaxGridY = 65535;
    if ((M + bm - 1) / bm > kMaxGridY)
      throw InputError("gemm/" + variant + " puts M in blocks of " + std::to_string(bm) +
                       " rows on the grid's y axis, at most 65535 of them, so M <= " + std::to_string(kMaxGridY * bm) +
                       "; got M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
  }

  // The facts of the wave model of a kernel launched with a BM x BN tile per block: its occupancy
  // on this GPU and the SMs (the roofline model derives tiles, waves and efficiency from them).
  template <class Kernel>
  WaveModel tile_waves(Kernel kernel, int threads, std::size_t dynamic_smem, std::int64_t bm, std::int64_t bn) const {
    int dev = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem));
    WaveModel w;
    w.tile_m = bm;
    w.tile_n = bn;
    w.blocks_per_sm = per_sm;
    w.sms = sms;
    return w;
  }

 private:
  DeviceBuffer<T> dA, dB;
  DeviceBuffer<float> dC;
  // Kept between checks: the recheck after the samples touches no new page (8192³: 512 MiB in
  // 16 bits, 768 MiB in FP32).
  HostBuffer<T> hA, hB;
  HostBuffer<float> hC;
  std::uint64_t seed_ = 0;
};

template <class T>
Variant gpu_gemm_variant(Unit unit = Unit::simt) {
  return variant_for(precision_of<T>(), Backend::cuda, unit);
}

// The sweep every GPU GEMM runs: square sizes from 128 to 8192, so that the chart shows the
// points climbing from the memory-bound slope toward the compute roof as intensity grows.
inline std::vector<Params> gpu_sweep() {
  return square_gemm_sizes({128, 256, 512, 1024, 2048, 4096, 8192});
}

// The sweep plus extra sizes for the fixed 128x128-tile kernels, either side of whole waves on a
// 132-SM Hopper GPU (H100 SXM or H200):
// 1408 (121 tiles) fits in one wave of 132 at one block per SM and 1536 (144) needs a second,
// nearly empty one; at two blocks per SM the same cliff is 2048 (256 of 264) against 2176 (289).
// 2304 (324 tiles) is 0.61 efficient at two blocks per SM. The wave model in results.json says
// which cliff applies, from the occupancy measured on the device.
inline std::vector<Params> fixed_tile_sweep() {
  std::vector<Params> sizes = gpu_sweep();
  for (const auto& p : square_gemm_sizes({1408, 1536, 2176, 2304})) sizes.push_back(p);
  return sizes;
}

// Test shapes for kernels that copy rows in 16-byte chunks (K and N multiples of 8), ragged
// against every tile here, with more K tiles than any pipeline has stages. 130x264x1096 is checked
// entry by entry (M·N <= 65536) through 18 K tiles of 64, so that every stage of a 4-stage
// pipeline is refilled at least three times and its barriers wait on both parities.
inline std::vector<Params> aligned_test_shapes() {
  return {{{"M", 64}, {"N", 64}, {"K", 64}},
          {{"M", 1}, {"N", 8}, {"K", 8}},
          {{"M", 200}, {"N", 136}, {"K", 72}},
          {{"M", 300}, {"N", 264}, {"K", 136}},
          {{"M", 130}, {"N", 264}, {"K", 1096}},
          {{"M", 300}, {"N", 264}, {"K", 392}}};
}

}  // namespace roofbench::gemm
