// Register-tiled SIMT GEMM (FP32): from smem_tiled, each thread computes a TM x TN block of C in
// registers from vectors of A and B it reads once per k, loads are float4, and the next tiles
// are fetched into registers while the current ones are used (double-buffered shared memory).
// Run only this: roofbench run --device cuda:0 --filter 'gemm/register_tiled'
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// Why it is faster: smem_tiled does two shared loads per FMA. Here a thread loads TM values of A
// and TN of B per k and does TM x TN FMAs with them, so shared traffic per FMA falls to
// (TM + TN) / (TM x TN) = 1/4 of a load, and the FMA pipe, not shared memory, sets the pace.
//
// A thread's rows are {ty*4 .. ty*4+3} and {64 + ty*4 .. 64 + ty*4+3} (and its columns the same
// in x): the two halves are 64 apart so that 16 threads reading a float4 each cover 256
// contiguous bytes of a shared row (no bank conflicts), and so that C is written as contiguous
// float4s. A is stored transposed (k-major) so that a thread's TM values of A are one float4 per
// half as well; its rows are padded by 4 floats so the transposing stores do not conflict.
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int kThreads = (BM / TM) * (BN / TN);
constexpr int kPadA = 4;
static_assert(kThreads == 256, "the tile loads below assume 256 threads");
static_assert(BM * BK == 4 * kThreads && BK * BN == 4 * kThreads, "each thread loads one float4 of A and of B");
static_assert(TM == 8 && TN == 8 && BM == 2 * 64 && BN == 2 * 64, "rows and columns split in two halves 64 apart");

__global__ void __launch_bounds__(kThreads, 2)
    register_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K) {
  __shared__ __align__(16) float As[2][BK][BM + kPadA];
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int t = threadIdx.x;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int ty = t / (BN / TN), tx = t % (BN / TN);
  const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;

  // This thread's share of each tile load.
  const int a_row = t / (BK / 4), a_col = (t % (BK / 4)) * 4;  // A tile: BM rows x BK/4 float4s
  const int b_row = t / (BN / 4), b_col = (t % (BN / 4)) * 4;  // B tile: BK rows x BN/4 float4s

  auto stage = [&](int buf, float4 a, float4 b) {
    As[buf][a_col + 0][a_row] = a.x;
    As[buf][a_col + 1][a_row] = a.y;
    As[buf][a_col + 2][a_row] = a.z;
    As[buf][a_col + 3][a_row] = a.w;
    *reinterpret_cast<float4*>(&Bs[buf][b_row][b_col]) = b;
  };

  float acc[TM][TN] = {};
  float4 a_next = load4(A, M, K, bm + a_row, a_col, vec_a);
  float4 b_next = load4(B, K, N, b_row, bn + b_col, vec_b);
  stage(0, a_next, b_next);
  __syncthreads();

  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) {  // in flight while the FMAs below run
      a_next = load4(A, M, K, bm + a_row, k0 + BK + a_col, vec_a);
      b_next = load4(B, K, N, k0 + BK + b_row, bn + b_col, vec_b);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][64 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][64 + tx * 4]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    // The other buffer was last read before the previous barrier, so it is free to overwrite.
    if (more) stage(buf ^ 1, a_next, b_next);
    __syncthreads();
    buf ^= 1;
  }

  const bool vec_c = N % 4 == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = bm + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    store4(C, M, N, r, bn + tx * 4, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), vec_c);
    store4(C, M, N, r, bn + 64 + tx * 4, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]), vec_c);
  }
}

// ---------------------------------------------------------------- launcher
class RegisterTiledGemm final : public GpuGemm<float> {
 public:
  explicit RegisterTiledGemm(const Params& p) : GpuGemm(p) { require_grid_rows("register_tiled", BM); }

  std::optional<WaveModel> waves() const override { return tile_waves(register_tiled_kernel, kThreads, 0, BM, BN); }

 private:
  void launch(const float* A, const float* B, float* C) override {
    const dim3 grid(blocks_for(N, BN), blocks_for(M, BM));
    register_tiled_kernel<<<grid, kThreads>>>(A, B, C, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K));
  }
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = gpu_gemm_variant<float>();
  v.variant = "register_tiled";
  v.summary = "128x128 block tile, 8x8 outputs per thread in registers, float4 loads, double-buffered smem";
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({1024});
  v.make = [](const Params& p) { return std::make_unique<RegisterTiledGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
