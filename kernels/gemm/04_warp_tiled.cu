// Warp-tiled SIMT GEMM (FP32): from register_tiled, the block tile is split into one 64x64 tile
// per warp, and each thread's outputs into strips spread across its warp's tile.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/warp_tiled'
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// Why it can be faster than register_tiled: the threads of a warp now cover one compact 64x64
// tile of C, so a warp's shared-memory reads of A and B are a few 16-byte rows that its lanes
// share (broadcasts), and a thread's 8x16 outputs (128 FMAs per k from 8 + 16 values) need a
// quarter fewer shared reads per FMA than 8x8 ((8 + 16) / 128 against (8 + 8) / 64). This is
// siboehm's SGEMM kernel 10, which his H100 replication measured above his register-tiled ones;
// whether it pays here is for the GPU run to say (the issue asks for warp tiling "if it pays").
//
// Block 128x128, BK = 16; warps 2 x 2, each 64x64; a warp's tile is WNITER = 4 column strips of
// 64x16, and in each strip lane l owns rows 8·(l/4) .. +7 and columns 4·(l%4) .. +3. A is stored
// transposed (k-major) so that a thread's 8 rows are two float4s; its rows are padded by 4
// floats so that the transposing stores conflict 2-way at most.
constexpr int BM = 128, BN = 128, BK = 16;
constexpr int WM = 64, WN = 64, WNITER = 4, TM = 8, TN = 4;
constexpr int kWarpsN = BN / WN, kWarps = (BM / WM) * kWarpsN, kThreads = 32 * kWarps;
constexpr int WSUBN = WN / WNITER;   // 16: one column strip
constexpr int kLanesN = WSUBN / TN;  // 4 lanes across a strip
constexpr int kPadA = 4;
static_assert(kThreads == 128, "the tile loads below assume 128 threads");
static_assert((WM / TM) * kLanesN == 32, "a strip is covered by the 32 lanes of its warp, once");
static_assert(BM * BK == 4 * 4 * kThreads && BK * BN == 4 * 4 * kThreads, "each thread loads 4 float4s of A and of B");
static_assert(TM % 4 == 0 && TN == 4 && (BM + kPadA) % 4 == 0, "rows of A and B are read as float4s");

// Three blocks per SM: ptxas then fits the 128 accumulators in 168 registers without spilling.
__global__ void __launch_bounds__(kThreads, 3)
    warp_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                      int K) {
  __shared__ __align__(16) float As[BK][BM + kPadA];  // As[k][m]
  __shared__ __align__(16) float Bs[BK][BN];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int wm = (warp / kWarpsN) * WM, wn = (warp % kWarpsN) * WN;  // this warp's tile in the block
  const int tm = (lane / kLanesN) * TM, tn = (lane % kLanesN) * TN;  // this lane's place in a strip
  const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;

  float acc[TM][WNITER * TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: 128 rows x 4 float4s; B tile: 16 rows x 32 float4s; 4 float4s of each per thread.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = t / (BK / 4) + i * (kThreads / (BK / 4)), c = (t % (BK / 4)) * 4;
      const float4 a = load4(A, M, K, bm + r, k0 + c, vec_a);
      As[c + 0][r] = a.x;
      As[c + 1][r] = a.y;
      As[c + 2][r] = a.z;
      As[c + 3][r] = a.w;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = t / (BN / 4) + i * (kThreads / (BN / 4)), c = (t % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&Bs[r][c]) = load4(B, K, N, k0 + r, bn + c, vec_b);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[WNITER * TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k][wm + tm + i]);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int s = 0; s < WNITER; ++s) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k][wn + s * WSUBN + tn]);
        b[s * TN] = v.x, b[s * TN + 1] = v.y, b[s * TN + 2] = v.z, b[s * TN + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // the tiles are overwritten next
  }

  const bool vec_c = N % 4 == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int s = 0; s < WNITER; ++s)
      store4(C, M, N, bm + wm + tm + i, bn + wn + s * WSUBN + tn,
             make_float4(acc[i][s * TN], acc[i][s * TN + 1], acc[i][s * TN + 2], acc[i][s * TN + 3]), vec_c);
}

// ---------------------------------------------------------------- launcher
class WarpTiledGemm final : public GpuGemm<float> {
 public:
  explicit WarpTiledGemm(const Params& p) : GpuGemm(p) { require_grid_rows("warp_tiled", BM); }

  std::optional<WaveModel> waves() const override { return tile_waves(warp_tiled_kernel, kThreads, 0, BM, BN); }

 private:
  void launch(const float* A, const float* B, float* C) override {
    const dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    warp_tiled_kernel<<<grid, kThreads>>>(A, B, C, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K));
  }
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = gpu_gemm_variant<float>();
  v.variant = "warp_tiled";
  v.summary = "128x128 block tile, a 64x64 tile per warp, 8x16 outputs per thread in four strips, float4 loads";
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({1024});
  v.make = [](const Params& p) { return std::make_unique<WarpTiledGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
