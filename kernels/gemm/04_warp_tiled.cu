// Warp-tiled SIMT GEMM (FP32) with register prefetch: from register_tiled, each warp computes one
// compact 32x64 tile of C, and every operand is fetched one step ahead of its use: the next
// tile from global memory into registers, the next k's fragments from shared memory into
// registers. CUTLASS's SIMT SGEMM (warps of 32x64, two shared-memory stages, fragments
// double-buffered in registers) is built this way.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/warp_tiled'
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// Why it is faster than register_tiled. Nsight Compute on an H200 (reports/baselines/
// h200-2026-11-29/profile/register_tiled.txt, 4096³) counted issue slots 73% busy, 86.7% of
// the instructions FFMAs, and warps stalled 0.95 cycles per instruction on the short scoreboard
// (shared loads) beside 0.57 on dispatch. In register_tiled's SASS the compiler hoists the
// shared loads of a k only as far as its 127 registers let it: the first of a tile are read 3
// to 6 instructions after they issue, just after the barrier that all of the block's warps
// leave together, and its 8-deep tile spends ~55 instructions (the guarded global loads, the
// transposing stores, the barrier) on 512 FMAs. Here (the SASS: 128 registers, no spills; in
// the k loop 1,024 FFMAs, 64 shared loads and 75 others on a block's steady path, and every
// shared load read 34 or more instructions after it issues):
//  - the fragments of k+1 are loaded before the FMAs of k (two register sets, 32 registers), so
//    a warp's 64 FMAs cover its own shared loads' latency;
//  - a block whose tiles lie wholly inside A and B loads them with plain float4 loads, no
//    bounds checks (one uniform branch a tile);
//  - tiles 16 deep: the per-tile work and the barrier come half as often. One barrier a tile:
//    the next tile is stored into the other buffer at the tile's last k.
// The previous warp_tiled (8x16 outputs per thread, 128 threads, no prefetch; 4.66 ms at 4096³
// on the H200, Nsight Compute: long-scoreboard stalls on its global loads) is replaced by this one.
//
// Block 128x128, BK = 16, 256 threads: 8 warps as 4 (M) x 2 (N), each a 32x64 tile. In a warp's
// tile, lane l sits at row group lr = l / 8 and column group lc = l % 8, and owns two 4x4 blocks
// in each direction: rows lr*4 .. +3 and 16 + lr*4 .. +3, columns lc*4 .. +3 and 32 + lc*4 .. +3.
// A k's fragment is then four float4 reads whose 32 lanes touch 4 (A) and 8 (B) distinct 16-byte
// words: one shared-memory wavefront each. A is stored transposed (k-major), its rows padded by 4
// floats so that the transposing stores conflict 2-way at most.
constexpr int BM = 128, BN = 128, BK = 16;
constexpr int WM = 32, WN = 64, kWarpsN = BN / WN, kThreads = 32 * (BM / WM) * kWarpsN;
constexpr int kLaneCols = 8;  // lanes across a warp's tile (and 4 down)
constexpr int kPadA = 4;
constexpr int kLoads = BM * BK / (4 * kThreads);  // float4s of A a thread loads a tile, and of B
static_assert(kThreads == 256, "8 warps, 4 x 2");
static_assert(BM * BK == 4 * kLoads * kThreads && BK * BN == 4 * kLoads * kThreads, "tiles split evenly in float4s");
static_assert(WM == 2 * 16 && WN == 2 * 4 * kLaneCols, "a thread's 8x8 outputs are two 4x4 blocks each way");

__global__ void __launch_bounds__(kThreads, 2)
    warp_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                      int K) {
  __shared__ __align__(16) float As[2][BK][BM + kPadA];  // As[buf][k][m]
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int wm = (warp / kWarpsN) * WM, wn = (warp % kWarpsN) * WN;
  const int ra = wm + (lane / kLaneCols) * 4, cb = wn + (lane % kLaneCols) * 4;  // this lane's first row, column
  const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;
  // The whole block inside A's rows and B's columns, both read as float4s: a tile whose k range
  // is inside K too needs no bounds checks.
  const bool inside = vec_a && vec_b && bm <= M - BM && bn <= N - BN;  // no int overflow near 2^31

  // This thread's share of each tile load: float4 i of A is row a_row + i * kRowsA, columns
  // a_col..+3; of B, row b_row + i * kRowsB, columns b_col..+3.
  constexpr int kRowsA = kThreads / (BK / 4), kRowsB = kThreads / (BN / 4);
  const int a_row = t / (BK / 4), a_col = (t % (BK / 4)) * 4;
  const int b_row = t / (BN / 4), b_col = (t % (BN / 4)) * 4;
  const float* a_src = A + (long long)(bm + a_row) * K + a_col;
  const float* b_src = B + (long long)b_row * N + bn + b_col;
  auto fetch = [&](int k0, float4 (&a)[kLoads], float4 (&b)[kLoads]) {
    if (inside && k0 <= K - BK) {
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        a[i] = *reinterpret_cast<const float4*>(a_src + (long long)i * kRowsA * K + k0);
        b[i] = *reinterpret_cast<const float4*>(b_src + (long long)(k0 + i * kRowsB) * N);
      }
    } else {
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        a[i] = load4(A, M, K, bm + a_row + i * kRowsA, k0 + a_col, vec_a);
        b[i] = load4(B, K, N, k0 + b_row + i * kRowsB, bn + b_col, vec_b);
      }
    }
  };
  auto stage = [&](int buf, const float4 (&a)[kLoads], const float4 (&b)[kLoads]) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      As[buf][a_col + 0][a_row + i * kRowsA] = a[i].x;
      As[buf][a_col + 1][a_row + i * kRowsA] = a[i].y;
      As[buf][a_col + 2][a_row + i * kRowsA] = a[i].z;
      As[buf][a_col + 3][a_row + i * kRowsA] = a[i].w;
      *reinterpret_cast<float4*>(&Bs[buf][b_row + i * kRowsB][b_col]) = b[i];
    }
  };
  // A k's fragments: fa[0] rows ra..+3, fa[1] rows ra+16..; fb[0] columns cb..+3, fb[1] cb+32..
  auto fragments = [&](int buf, int k, float4 (&fa)[2], float4 (&fb)[2]) {
    fa[0] = *reinterpret_cast<const float4*>(&As[buf][k][ra]);
    fa[1] = *reinterpret_cast<const float4*>(&As[buf][k][ra + 16]);
    fb[0] = *reinterpret_cast<const float4*>(&Bs[buf][k][cb]);
    fb[1] = *reinterpret_cast<const float4*>(&Bs[buf][k][cb + 32]);
  };

  float acc[8][8] = {};
  float4 ga[kLoads], gb[kLoads];
  fetch(0, ga, gb);
  stage(0, ga, gb);
  __syncthreads();
  float4 fa[2][2], fb[2][2];
  fragments(0, 0, fa[0], fb[0]);

  const int tiles = (K - 1) / BK + 1;
  for (int tile = 0, buf = 0; tile < tiles; ++tile, buf ^= 1) {
    const bool more = tile + 1 < tiles;
    if (more) fetch((tile + 1) * BK, ga, gb);  // in flight while the FMAs below run
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if (k == BK - 1 && more) {
        // The other buffer was last read before the previous tile's barrier: free to overwrite.
        stage(buf ^ 1, ga, gb);
        __syncthreads();
      }
      if (k < BK - 1) {
        fragments(buf, k + 1, fa[(k + 1) % 2], fb[(k + 1) % 2]);
      } else if (more) {
        fragments(buf ^ 1, 0, fa[(k + 1) % 2], fb[(k + 1) % 2]);
      }
      const float4 *xa = fa[k % 2], *xb = fb[k % 2];
      const float a[8] = {xa[0].x, xa[0].y, xa[0].z, xa[0].w, xa[1].x, xa[1].y, xa[1].z, xa[1].w};
      const float b[8] = {xb[0].x, xb[0].y, xb[0].z, xb[0].w, xb[1].x, xb[1].y, xb[1].z, xb[1].w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }

  const bool vec_c = N % 4 == 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = bm + ra + (i < 4 ? i : 16 + i - 4);
    store4(C, M, N, r, bn + cb, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), vec_c);
    store4(C, M, N, r, bn + cb + 32, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]), vec_c);
  }
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
  v.summary = "128x128 block tile, a 32x64 tile per warp, 8x8 outputs per thread, the next tile and k prefetched into registers";
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({1024});
  v.make = [](const Params& p) { return std::make_unique<WarpTiledGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
