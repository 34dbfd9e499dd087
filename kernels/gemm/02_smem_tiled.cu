// Shared-memory tiled CUDA GEMM: from naive, each block stages BK-deep tiles of A and B in
// shared memory, so each element loaded from global memory is used BM (or BN) times.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/smem_tiled'
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// A 32x32 block computes a 32x32 tile of C, one element per thread. Per BK step, every thread
// loads one element of A's and B's tiles, the block synchronizes, and each thread does BK FMAs
// from shared memory. Global traffic falls by 32x against naive; the limit moves to shared-
// memory bandwidth (two shared loads per FMA), which register tiling removes in the next rung.
// 16-bit inputs are widened to FP32 as they are staged, so the inner loop is the same FFMA loop.
constexpr int BM = 32, BN = 32, BK = 32;
static_assert(BM == BN && BN == BK, "one thread loads one element of each tile: the tiles must be square");

template <class D>
__global__ void smem_tiled_kernel(const D* __restrict__ A, const D* __restrict__ B, float* __restrict__ C, int M,
                                  int N, int K) {
  __shared__ float As[BM][BK];
  // A warp is 32 consecutive tx with one ty: it reads As[ty][k] as a broadcast and Bs[k][tx] as
  // 32 consecutive words, so neither tile has bank conflicts and neither needs padding.
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * BM + ty, col = blockIdx.x * BN + tx;
  float acc = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Out-of-range elements are zero, so ragged edges need no special case in the inner loop.
    As[ty][tx] = (row < M && k0 + tx < K) ? to_float(A[(long long)row * K + k0 + tx]) : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? to_float(B[(long long)(k0 + ty) * N + col]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(long long)row * N + col] = acc;
}

// ---------------------------------------------------------------- launcher
template <class T>
class SmemTiledGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit SmemTiledGemm(const Params& p) : GpuGemm<T>(p) { this->require_grid_rows("smem_tiled", BM); }

  std::optional<WaveModel> waves() const override {
    return this->tile_waves(smem_tiled_kernel<D>, BM * BN, 0, BM, BN);
  }

 private:
  void launch(const D* A, const D* B, float* C) override {
    const dim3 block(BN, BM);
    const dim3 grid(blocks_for(this->N, BN), blocks_for(this->M, BM));
    smem_tiled_kernel<D><<<grid, block>>>(A, B, C, static_cast<int>(this->M), static_cast<int>(this->N),
                                          static_cast<int>(this->K));
  }
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>();
  v.variant = "smem_tiled";
  v.summary = "32x32 tiles of A and B staged through shared memory, one output per thread";
  v.sizes = gpu_sweep();
  v.quick_sizes = square_gemm_sizes({1024});
  v.make = [](const Params& p) { return std::make_unique<SmemTiledGemm<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<float>());
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::gemm
