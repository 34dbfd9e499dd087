// Tensor-core GEMM from raw mma.sync and ldmatrix, FP16 and BF16 inputs with FP32 accumulation:
// what the WMMA rung's API hides, written out. The same tensor-core instruction as WMMA
// (HMMA.16816 on Hopper), but the kernel chooses where every fragment comes from: shared memory
// laid out with an XOR swizzle instead of padding, ldmatrix (.trans for B) straight into the
// registers mma.sync reads, a 64x64 tile per warp, and four cp.async stages.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/mma_sync'
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/gemm/cp_async.cuh"
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// Issue 51 asks for this rung beside WMMA: CUTLASS's sm80 tensor-core GEMMs are built this way
// (128x256 block tiles, 64x64 warp tiles, multistage cp.async, swizzled shared memory), and
// mma.sync's own ceiling (the `bf16_mma_sync` ceiling: 651 TFLOP/s on the H200, 0.66 of the
// dense datasheet) is the roof it climbs toward; wgmma is the way past it.
//
// Why 128x256 and not WMMA's 128x128: a block tile of M x N reads (M + N) x BK 16-bit elements
// from L2 for 2 x M x N x BK FLOPs, MN / (M + N) FLOP a byte: 64 for 128x128, 85 for 128x256. At
// the mma.sync ceiling's 651 TFLOP/s that is 10.2 TB/s of L2 reads for 128x128, above the H200's
// measured L2 read ceiling (8.6 to 8.7 TB/s), and 7.6 TB/s for 128x256.
//
// Block 128x256, BK = 32, 8 warps as 2 x 4, each a 64x64 tile of C: 4 (m16) x 8 (n8) mma tiles,
// 128 FP32 accumulators a thread, one block an SM. Per 16-deep slice a warp issues 4
// ldmatrix.x4 for A and 4 ldmatrix.x4.trans for B, then 32 mma.sync.m16n8k16.
//
// Shared memory, one stage: A as 128 rows of 32 elements (64 bytes, four 16-byte chunks), chunk c
// of row r stored at chunk c ^ ((r >> 1) & 3); B as 32 rows (k) of 256 elements (512 bytes, 32
// chunks), chunk c of row k at c ^ (k & 7). An 8x8 matrix that ldmatrix reads is 8 rows of one
// logical chunk: the swizzle puts those 8 rows' 16 bytes in 8 different 16-byte slots of a
// 128-byte span, so each of ldmatrix's phases is one wavefront with no bank conflict, and no
// padding is spent. A thread's cp.async chunks keep one swizzle for every tile (their rows step
// by 64 in A and 8 in B), so their places are fixed for the kernel.
//
// Blocks take their tiles in groups of 8 block rows (kGroupM), column by column within a group:
// the blocks resident at one time share the same few panels of A and B in L2.
constexpr int BM = 128, BN = 256, BK = 32, WM = 64, WN = 64, kStages = 4, kGroupM = 8;
constexpr int kWarpsN = BN / WN, kThreads = 32 * (BM / WM) * kWarpsN;
constexpr int kTilesM = WM / 16, kTilesN = WN / 8;  // mma tiles of a warp
constexpr int kChunk = 8;                           // 16-bit elements in a 16-byte chunk
constexpr int kStageA = BM * BK, kStageB = BK * BN;  // elements per stage
constexpr int kChunksA = kStageA / kChunk / kThreads, kChunksB = kStageB / kChunk / kThreads;
constexpr std::size_t kSmemBytes = kStages * (kStageA + kStageB) * 2;
static_assert(kThreads == 256, "8 warps");
static_assert(BK == 4 * kChunk && BN % (8 * kChunk) == 0, "the swizzles below: 4 chunks a row of A, whole 128-byte spans of B");
static_assert(kThreads % (BK / kChunk) == 0 && kThreads % (BN / kChunk) == 0, "one chunk column a thread");
static_assert((kThreads / (BK / kChunk)) % 8 == 0 && (kThreads / (BN / kChunk)) % 8 == 0,
              "a thread's chunks step by a multiple of 8 rows: one swizzle for all of them");

__device__ __forceinline__ int swizzle_a(int row, int chunk) { return row * BK + ((chunk ^ ((row >> 1) & 3)) * kChunk); }
__device__ __forceinline__ int swizzle_b(int row, int chunk) { return row * BN + ((chunk ^ (row & 7)) * kChunk); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// d += a * b, one m16n8k16 tile: a is the 16x16 A fragment (4 registers), b the 16x8 B fragment (2).
template <class D>
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (std::is_same_v<D, __nv_bfloat16>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <class D>
__global__ void __launch_bounds__(kThreads, 1)
    mma_sync_kernel(const D* __restrict__ A, const D* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  D* As = reinterpret_cast<D*>(smem_raw);
  D* Bs = As + kStages * kStageA;

  // This block's tile: groups of kGroupM block rows, column by column within a group.
  const int tiles_m = (M - 1) / BM + 1, tiles_n = (N - 1) / BN + 1;  // their product <= INT32_MAX (the host checks)
  const int per_group = kGroupM * tiles_n, group = blockIdx.x / per_group;
  const int first_m = group * kGroupM, rows_here = min(tiles_m - first_m, kGroupM);
  const int in_group = blockIdx.x - group * per_group;
  const int bm = (first_m + in_group % rows_here) * BM, bn = (in_group / rows_here) * BN;

  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int wm = (warp / kWarpsN) * WM, wn = (warp % kWarpsN) * WN;
  const int k_tiles = (K - 1) / BK + 1;  // K >= 1; K + BK - 1 would overflow near 2^31

  // This thread's cp.async chunks: of A, rows ra + 64 i at chunk ca; of B, rows rb + 8 i at chunk cb.
  // K and N are multiples of 8 (checked on the host): a chunk is wholly inside or outside. A
  // block whose tile lies inside M and N copies a k-tile inside K without a check (one uniform
  // branch a tile): its pointers only step.
  constexpr int kRowStepA = kThreads / (BK / kChunk), kRowStepB = kThreads / (BN / kChunk);
  const int ra = t / (BK / kChunk), ca = t % (BK / kChunk), rb = t / (BN / kChunk), cb = t % (BN / kChunk);
  const D* a_src = A + (long long)(bm + ra) * K + ca * kChunk;
  const D* b_src = B + (long long)rb * N + bn + cb * kChunk;
  const long long a_step = (long long)kRowStepA * K, b_step = (long long)kRowStepB * N;
  const unsigned a_dst = shared_address(As + swizzle_a(ra, ca)), b_dst = shared_address(Bs + swizzle_b(rb, cb));
  const bool inside = bm <= M - BM && bn <= N - BN;  // no int overflow near 2^31
  unsigned a_rows_ok = 0;
#pragma unroll
  for (int i = 0; i < kChunksA; ++i)
    if (bm + ra + i * kRowStepA < M) a_rows_ok |= 1u << i;
  const bool b_col_ok = bn + cb * kChunk < N;
  auto load_tile = [&](int stage, int k0) {
    const D* a = a_src + k0;
    const D* b = b_src + (long long)k0 * N;
    const unsigned sa = a_dst + 2 * stage * kStageA, sb = b_dst + 2 * stage * kStageB;
    if (inside && k0 <= K - BK) {
#pragma unroll
      for (int i = 0; i < kChunksA; ++i) cp_async16(sa + 2 * i * kRowStepA * BK, a + i * a_step);
#pragma unroll
      for (int i = 0; i < kChunksB; ++i) cp_async16(sb + 2 * i * kRowStepB * BN, b + i * b_step);
      return;
    }
    const bool a_k_ok = k0 + ca * kChunk < K;
#pragma unroll
    for (int i = 0; i < kChunksA; ++i) {
      const bool ok = a_k_ok && ((a_rows_ok >> i) & 1u);
      cp_async16_or_zeros(sa + 2 * i * kRowStepA * BK, ok ? a + i * a_step : A, ok);
    }
#pragma unroll
    for (int i = 0; i < kChunksB; ++i) {
      const bool ok = b_col_ok && k0 + rb + i * kRowStepB < K;
      cp_async16_or_zeros(sb + 2 * i * kRowStepB * BN, ok ? b + i * b_step : B, ok);
    }
  };

  // Where this lane points ldmatrix, as byte offsets within a stage. A's m tile i, slice kk: row
  // wm + 16 i + lane % 16 at chunk 2 kk + lane / 16 (the four 8x8 matrices of a0..a3). B's n
  // tiles 2j and 2j + 1, slice kk: k row 16 kk + lane % 16 at chunk (wn + 16 j) / 8 + lane / 16
  // (b0, b1 of each). A row's swizzle repeats every 8 rows, so tile i is tile 0 plus i * 16 rows,
  // and slice kk of B is slice 0 plus 16 rows: constant offsets, ldmatrix's immediates.
  unsigned a_frag[BK / 16], b_frag[kTilesN / 2];
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) a_frag[kk] = shared_address(As + swizzle_a(wm + lane % 16, 2 * kk + lane / 16));
#pragma unroll
  for (int j = 0; j < kTilesN / 2; ++j)
    b_frag[j] = shared_address(Bs + swizzle_b(lane % 16, (wn + 16 * j) / kChunk + lane / 16));

  float acc[kTilesM][kTilesN][4];
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  // Prologue: stages 0 .. kStages-2 in flight. Every thread commits a group per stage, empty or
  // not, so that wait_group counts the same on every thread.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_tile(s, s * BK);
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // tile kt has landed (for this thread) ...
    __syncthreads();               // ... and for all threads; stage (kt-1) % kStages is free again
    const int next = kt + kStages - 1;
    if (next < k_tiles) load_tile(next % kStages, next * BK);
    cp_async_commit();

    const unsigned sa = 2 * (kt % kStages) * kStageA, sb = 2 * (kt % kStages) * kStageB;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned a[kTilesM][4], b[kTilesN / 2][4];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) ldmatrix_x4(a[i], a_frag[kk] + sa + 2 * 16 * i * BK);
#pragma unroll
      for (int j = 0; j < kTilesN / 2; ++j) ldmatrix_x4_trans(b[j], b_frag[j] + sb + 2 * 16 * kk * BN);
#pragma unroll
      for (int i = 0; i < kTilesM; ++i)
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) mma16816<D>(acc[i][j], a[i], b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]);
    }
  }
  cp_async_wait<0>();  // nothing is left in flight when the block exits

  // Epilogue: a thread holds, of each m16n8 tile, rows lane / 4 and lane / 4 + 8 at columns
  // 2 (lane % 4) and + 1: one float2 each, 8-byte aligned since N is a multiple of 8. A column
  // inside N has its pair inside too (N even).
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) {
      const int c = bn + wn + 8 * j + 2 * (lane % 4);
      if (c >= N) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = bm + wm + 16 * i + lane / 4 + 8 * h;
        if (r < M)
          *reinterpret_cast<float2*>(C + (long long)r * N + c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      }
    }
}

// ---------------------------------------------------------------- launcher
template <class T>
class MmaSyncGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit MmaSyncGemm(const Params& p) : GpuGemm<T>(p) {
    this->require_16_byte_rows("mma_sync", "rows copied in 16-byte cp.async chunks");
    if (std::int64_t{blocks_for(this->M, BM)} * blocks_for(this->N, BN) > INT32_MAX)
      throw InputError(fmt::format("gemm/mma_sync launches a block per {}x{} tile of C, at most {} of them; got M={} "
                                   "N={} K={}",
                                   BM, BN, INT32_MAX, this->M, this->N, this->K));
    CUDA_CHECK(cudaFuncSetAttribute(mma_sync_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kSmemBytes)));
  }

  std::optional<WaveModel> waves() const override {
    return this->tile_waves(mma_sync_kernel<D>, kThreads, kSmemBytes, BM, BN);
  }

 private:
  void launch(const D* A, const D* B, float* C) override {
    const unsigned blocks = blocks_for(this->M, BM) * blocks_for(this->N, BN);
    mma_sync_kernel<D><<<blocks, kThreads, kSmemBytes>>>(A, B, C, static_cast<int>(this->M), static_cast<int>(this->N),
                                                         static_cast<int>(this->K));
  }
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>(Unit::tensor);
  v.variant = "mma_sync";
  v.summary = "mma.sync m16n8k16 from ldmatrix, 128x256x32 block tile, 64x64 warp tiles, XOR-swizzled smem, "
              "4-stage cp.async pipeline";
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({2048});
  v.test_sizes = aligned_test_shapes();
  v.make = [](const Params& p) { return std::make_unique<MmaSyncGemm<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::gemm
