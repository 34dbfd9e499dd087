// Naive CUDA GEMM: one thread per element of C, consecutive threads along a row of C; FP32,
// FP16 and BF16 inputs, FP32 accumulation.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/naive'
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// threadIdx.x runs along a row of C, so a warp reads one element of A (broadcast) and 32
// consecutive elements of B per step: coalesced, but every operand comes from L1/L2 again for
// every output, so it stays far from the compute roof.
template <class D>
__global__ void naive_kernel(const D* __restrict__ A, const D* __restrict__ B, float* __restrict__ C, int M, int N,
                             int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0;
  for (int k = 0; k < K; ++k) acc += to_float(A[(long long)row * K + k]) * to_float(B[(long long)k * N + col]);
  C[(long long)row * N + col] = acc;
}

// ---------------------------------------------------------------- launcher
template <class T>
class NaiveGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit NaiveGemm(const Params& p) : GpuGemm<T>(p) { this->require_grid_rows("naive", kRows); }

 private:
  static constexpr unsigned kRows = 8;  // rows of C per block: blockDim.y
  void launch(const D* A, const D* B, float* C) override {
    const dim3 block(32, kRows);
    const dim3 grid(blocks_for(this->N, block.x), blocks_for(this->M, block.y));
    naive_kernel<D><<<grid, block>>>(A, B, C, static_cast<int>(this->M), static_cast<int>(this->N),
                                     static_cast<int>(this->K));
  }
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>();
  v.variant = "naive";
  v.summary = "one thread per element of C, coalesced along rows of C";
  v.sizes = gpu_sweep();
  v.quick_sizes = square_gemm_sizes({1024});
  v.make = [](const Params& p) { return std::make_unique<NaiveGemm<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<float>());
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::gemm
