// Naive CUDA GEMM: one thread per element of C, consecutive threads along a row of C.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/naive'
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// threadIdx.x runs along a row of C, so a warp reads one element of A (broadcast) and 32
// consecutive elements of B per step: coalesced, but every operand comes from L1/L2 again for
// every output, so it stays far from the compute roof.
__global__ void naive_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                             int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0;
  for (int k = 0; k < K; ++k) acc += A[(long long)row * K + k] * B[(long long)k * N + col];
  C[(long long)row * N + col] = acc;
}

// ---------------------------------------------------------------- launcher
class NaiveGemm final : public GpuGemm {
 public:
  using GpuGemm::GpuGemm;

 private:
  void launch(const float* A, const float* B, float* C) override {
    const dim3 block(32, 8);
    const dim3 grid(blocks_for(N, block.x), blocks_for(M, block.y));
    naive_kernel<<<grid, block>>>(A, B, C, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K));
  }
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = gpu_gemm_variant();
  v.variant = "naive";
  v.summary = "one thread per element of C, coalesced along rows of C";
  v.source = __FILE__;
  v.sizes = square_gemm_sizes({1024, 2048, 4096});
  v.quick_sizes = square_gemm_sizes({1024});
  v.make = [](const Params& p) { return std::make_unique<NaiveGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
