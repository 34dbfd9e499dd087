// Warp-level WMMA tensor-core GEMM, FP16 and BF16 inputs with FP32 accumulation: from
// register_tiled, the FMAs move to the tensor cores (16x16x16 nvcuda::wmma fragments per warp),
// and tiles reach shared memory by cp.async in a three-stage pipeline.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/wmma'
#include <mma.h>

#include <type_traits>

#include "kernels/gemm/cp_async.cuh"
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// A block of 8 warps computes a 128x128 tile of C; warps sit 2 (along M) x 4 (along N), each
// owning a 64x32 warp tile = 4x2 accumulator fragments. Per BK = 64 step a warp loads 4 A and
// 2 B fragments per 16-deep slice and issues 8 MMAs, four slices a step. cp.async copies 16-byte
// chunks global -> shared without passing through registers, and three stages (105 KiB, two
// blocks an SM on an H100/H200) keep two tiles in flight while the tensor cores work on the
// third. A GPU that gives a block less than that (99 KiB on sm_86 and sm_89) gets two stages
// (70 KiB): the next tile loads while this one is used. Shared rows are padded by 8 elements
// (16 bytes) so that the fragment loads of a warp hit different banks.
//
// What Nsight Compute said of it (H200, 2026-11-29, BK = 32 and a loop over chunks; reports/
// baselines/h200-2026-11-29/profile/wmma.txt): 0.32x cuBLAS at 8192^3, the tensor pipe 40% busy,
// issue slots 52% busy at 7.9 instructions issued per HMMA, "stall wait" (a fixed-latency
// dependency) the first stall reason. The k loop now spends 3.5 instructions per HMMA in its SASS
// (tests/kernels/test_sass.cpp holds it under 4): the chunks' places are fixed per thread
// (TileLoader below) and a step is 64 deep, so a barrier and a loader serve twice the MMAs.
// An earlier guess, 64x64 warp tiles (ace44c0), was measured on an H200 and reverted: it left the
// loader's overhead as it was.
//
// What caps it on Hopper: WMMA compiles to mma.sync, which reaches about 65% of the tensor peak
// (the mma.sync ceiling measures it); the wgmma rung is the way past it.
namespace wmma = nvcuda::wmma;
constexpr int BM = 128, BN = 128, BK = 64, WM = 64, WN = 32;
constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kFragM = WM / 16, kFragN = WN / 16;
constexpr int kLdA = BK + 8, kLdB = BN + 8;  // padded row strides, in elements
constexpr int kChunk = 8;                    // elements in a 16-byte cp.async chunk
constexpr int kStageA = BM * kLdA, kStageB = BK * kLdB;  // elements per stage
template <int kStages>
constexpr std::size_t kSmemBytes = kStages * (kStageA + kStageB) * 2;
static_assert(kThreads == 256, "8 warps");
static_assert(BK % 16 == 0 && WM % 16 == 0 && WN % 16 == 0, "whole 16x16x16 fragments");
static_assert((BM * BK / kChunk) % kThreads == 0 && (BK * BN / kChunk) % kThreads == 0,
              "every thread copies the same number of chunks");
static_assert(kLdA % 8 == 0 && kLdB % 8 == 0, "wmma needs a row stride that is a multiple of 8 16-bit elements");
static_assert((kStageA * 2) % 128 == 0 && (kStageB * 2) % 128 == 0, "stages stay 128-byte aligned");

// Fragment loads from shared memory. For FP16, wmma::load_matrix_sync compiles to
// `wmma.load....shared.f16` and then to ldmatrix (LDSM). For BF16, CUDA 13's header passes a
// generic pointer to its builtin and the PTX is `wmma.load....bf16` without `.shared`: generic
// loads (LD.E), which go through the address-space check on every fragment. The BF16 loads are
// therefore written out with the state space named; the fragment's four 32-bit registers are
// the instruction's four results, in the order the builtin writes them.
// (tests/kernels/test_sass.cpp checks that neither precision issues a generic load.)
template <class Use, class Layout>
__device__ __forceinline__ void load_shared(wmma::fragment<Use, 16, 16, 16, __half, Layout>& f, const __half* p,
                                            unsigned ld) {
  wmma::load_matrix_sync(f, p, ld);
}
template <class Use>
__device__ __forceinline__ void load_shared(wmma::fragment<Use, 16, 16, 16, __nv_bfloat16, wmma::row_major>& f,
                                            const __nv_bfloat16* p, unsigned ld) {
  static_assert(sizeof(f.x) == 4 * sizeof(unsigned), "a BF16 m16n16k16 A or B fragment is four 32-bit registers");
  unsigned* r = reinterpret_cast<unsigned*>(f.x);
  const unsigned addr = shared_address(p);
  if constexpr (std::is_same_v<Use, wmma::matrix_a>)
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr), "r"(ld));
  else
    asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr), "r"(ld));
}

// Where one thread's cp.async chunks of a tile lie, fixed for the whole kernel. A thread copies
// kChunksA chunks of A, all in the same column kc of the tile and kRowStepA rows apart, and
// kChunksB chunks of B, in column nc and kRowStepB rows apart. So the k loop only adds BK to A's
// pointer and BK rows to B's: Nsight Compute on the H200 (reports/baselines/h200-2026-11-29/
// profile/wmma.txt) found 7.9 instructions issued per HMMA, half the issue slots busy and "stall
// wait" the first reason, and the SASS showed why: a loop `c = threadIdx.x; c < chunks; c +=
// kThreads` whose trip count the compiler cannot know was ~450 instructions of index arithmetic,
// branches and remainders for 4 cp.async per thread per k-tile, against 32 HMMA.
constexpr int kChunksA = BM * BK / kChunk / kThreads, kChunksB = BK * BN / kChunk / kThreads;
constexpr int kRowStepA = kThreads / (BK / kChunk), kRowStepB = kThreads / (BN / kChunk);
static_assert(kThreads % (BK / kChunk) == 0 && kThreads % (BN / kChunk) == 0,
              "each thread keeps one column of chunks in A and in B");

template <class D>
struct TileLoader {
  const D* A;           // the matrices: the source named by a chunk that reads nothing
  const D* B;
  const D* a;           // A + (bm + row) * K + kc: the thread's first chunk of A at k0 = 0
  const D* b;           // B + row * N + bn + nc: the thread's first chunk of B at k0 = 0
  long long a_step;     // kRowStepA rows of A, in elements
  long long b_step;     // kRowStepB rows of B, in elements
  int n;                // N
  int smem_a, smem_b;   // the first chunk's offset in a stage, in elements
  int kc, rb;           // the chunks' column in A's tile; the first chunk's row in B's tile
  unsigned a_rows_ok;   // bit i: A's row of chunk i lies inside M
  bool b_col_ok;        // B's column lies inside N

  __device__ TileLoader(const D* A_, const D* B_, int M, int N, int K, int bm, int bn) : A(A_), B(B_), n(N) {
    const int t = threadIdx.x;
    const int ra = t / (BK / kChunk), nc = (t % (BN / kChunk)) * kChunk;
    kc = (t % (BK / kChunk)) * kChunk;
    rb = t / (BN / kChunk);
    a_step = (long long)kRowStepA * K;
    b_step = (long long)kRowStepB * N;
    a = A + (long long)(bm + ra) * K + kc;
    b = B + (long long)rb * N + bn + nc;
    smem_a = ra * kLdA + kc;
    smem_b = rb * kLdB + nc;
    a_rows_ok = 0;
#pragma unroll
    for (int i = 0; i < kChunksA; ++i)
      if (bm + ra + i * kRowStepA < M) a_rows_ok |= 1u << i;
    b_col_ok = bn + nc < N;
  }

  // K and N are multiples of 8 (checked on the host), so a 16-byte chunk is wholly inside or
  // wholly outside the matrix and every row starts 16-byte aligned. A chunk outside is zeros.
  __device__ __forceinline__ void load(D* As, D* Bs, int K, int k0) const {
    const bool a_k_ok = k0 + kc < K;
    const D* ak = a + k0;
#pragma unroll
    for (int i = 0; i < kChunksA; ++i) {
      const bool ok = a_k_ok && ((a_rows_ok >> i) & 1u);
      cp_async16_or_zeros(shared_address(As + smem_a + i * kRowStepA * kLdA), ok ? ak + i * a_step : A, ok);
    }
    const D* bk = b + (long long)k0 * n;
#pragma unroll
    for (int i = 0; i < kChunksB; ++i) {
      const bool ok = b_col_ok && k0 + rb + i * kRowStepB < K;
      cp_async16_or_zeros(shared_address(Bs + smem_b + i * kRowStepB * kLdB), ok ? bk + i * b_step : B, ok);
    }
  }
};

template <class D, int kStages>
__global__ void __launch_bounds__(kThreads, 2)
    wmma_kernel(const D* __restrict__ A, const D* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  D* As = reinterpret_cast<D*>(smem_raw);
  D* Bs = As + kStages * kStageA;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int warp = threadIdx.x / 32, wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int k_tiles = (K - 1) / BK + 1;  // K >= 1; K + BK - 1 would overflow near 2^31
  const TileLoader<D> loader(A, B, M, N, K, bm, bn);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragM][kFragN];
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // Prologue: stages 0 .. kStages-2 in flight. Every thread commits a group per stage, empty or
  // not, so that wait_group counts the same on every thread.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) loader.load(As + s * kStageA, Bs + s * kStageB, K, s * BK);
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // tile kt has landed (for this thread) ...
    __syncthreads();               // ... and for all threads; stage (kt-1) % kStages is free again
    const int next = kt + kStages - 1;
    if (next < k_tiles)
      loader.load(As + (next % kStages) * kStageA, Bs + (next % kStages) * kStageB, K, next * BK);
    cp_async_commit();

    const D* as = As + (kt % kStages) * kStageA;
    const D* bs = Bs + (kt % kStages) * kStageB;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, D, wmma::row_major> a[kFragM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, D, wmma::row_major> b[kFragN];
#pragma unroll
      for (int i = 0; i < kFragM; ++i) load_shared(a[i], as + (wm * WM + i * 16) * kLdA + kk, kLdA);
#pragma unroll
      for (int j = 0; j < kFragN; ++j) load_shared(b[j], bs + kk * kLdB + wn * WN + j * 16, kLdB);
#pragma unroll
      for (int i = 0; i < kFragM; ++i)
#pragma unroll
        for (int j = 0; j < kFragN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the pipeline's shared memory is reused below

  // Epilogue: fragments wholly inside C go straight to global memory (rows 32-byte aligned
  // because N % 8 == 0); edge fragments go through a per-warp 16x16 scratch and are written
  // element by element with bounds checks.
  float* scratch = reinterpret_cast<float*>(smem_raw) + warp * 16 * 16;
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j) {
      const int r0 = bm + wm * WM + i * 16, c0 = bn + wn * WN + j * 16;
      if (r0 >= M || c0 >= N) continue;  // warp-uniform
      if (r0 + 16 <= M && c0 + 16 <= N) {
        wmma::store_matrix_sync(C + (long long)r0 * N + c0, acc[i][j], N, wmma::mem_row_major);
        continue;
      }
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int r = r0 + e / 16, c = c0 + e % 16;
        if (r < M && c < N) C[(long long)r * N + c] = scratch[e];
      }
      __syncwarp();
    }
}

// ---------------------------------------------------------------- launcher
template <class T>
class WmmaGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit WmmaGemm(const Params& p) : GpuGemm<T>(p) {
    this->require_16_byte_rows("wmma", "rows copied in 16-byte cp.async chunks");
    this->require_grid_rows("wmma", BM);
    // Three stages where a block may have their shared memory, else two.
    int dev = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    three_ = static_cast<std::size_t>(optin) >= kSmemBytes<3>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem())));
  }

  std::optional<WaveModel> waves() const override { return this->tile_waves(kernel(), kThreads, smem(), BM, BN); }

 private:
  bool three_ = true;
  using Kernel = void (*)(const D*, const D*, float*, int, int, int);
  Kernel kernel() const { return three_ ? wmma_kernel<D, 3> : wmma_kernel<D, 2>; }
  std::size_t smem() const { return three_ ? kSmemBytes<3> : kSmemBytes<2>; }

  void launch(const D* A, const D* B, float* C) override {
    const dim3 grid(blocks_for(this->N, BN), blocks_for(this->M, BM));
    kernel()<<<grid, kThreads, smem()>>>(A, B, C, static_cast<int>(this->M), static_cast<int>(this->N),
                                         static_cast<int>(this->K));
  }
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>(Unit::tensor);
  v.variant = "wmma";
  v.summary = "16x16x16 WMMA fragments, 128x128x64 block tile, 64x32 warp tiles, 3-stage cp.async pipeline "
              "(2 where a block has under 105 KiB of shared memory)";
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({2048});
  v.test_sizes = aligned_test_shapes();
  v.make = [](const Params& p) { return std::make_unique<WmmaGemm<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::gemm
