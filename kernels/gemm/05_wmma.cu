// Warp-level WMMA tensor-core GEMM, FP16 and BF16 inputs with FP32 accumulation: from
// register_tiled, the FMAs move to the tensor cores (16x16x16 nvcuda::wmma fragments per warp),
// and tiles reach shared memory by cp.async in a three-stage pipeline.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/wmma'
#include <mma.h>

#include <type_traits>

#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// A block of 8 warps computes a 128x128 tile of C; warps sit 2 (along M) x 4 (along N), each
// owning a 64x32 warp tile = 4x2 accumulator fragments. Per BK = 32 step a warp loads 4 A and
// 2 B fragments per 16-deep slice and issues 8 MMAs. cp.async copies 16-byte chunks global ->
// shared without passing through registers, and three stages keep two tiles in flight while the
// tensor cores work on the third. Shared rows are padded by 8 elements (16 bytes) so that the
// fragment loads of a warp hit different banks.
//
// What caps it on Hopper: WMMA compiles to mma.sync, which reaches about 65% of the tensor peak
// (the mma.sync ceiling measures it); the wgmma rung is the way past it.
namespace wmma = nvcuda::wmma;
constexpr int BM = 128, BN = 128, BK = 32, WM = 64, WN = 32, kStages = 3;
constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kFragM = WM / 16, kFragN = WN / 16;
constexpr int kLdA = BK + 8, kLdB = BN + 8;  // padded row strides, in elements
constexpr int kChunk = 8;                    // elements in a 16-byte cp.async chunk
constexpr int kStageA = BM * kLdA, kStageB = BK * kLdB;  // elements per stage
constexpr std::size_t kSmemBytes = kStages * (kStageA + kStageB) * 2;
static_assert(kThreads == 256, "8 warps");
static_assert(BK % 16 == 0 && WM % 16 == 0 && WN % 16 == 0, "whole 16x16x16 fragments");
static_assert((BM * BK / kChunk) % kThreads == 0 && (BK * BN / kChunk) % kThreads == 0,
              "every thread copies the same number of chunks");
static_assert(kLdA % 8 == 0 && kLdB % 8 == 0, "wmma needs a row stride that is a multiple of 8 16-bit elements");
static_assert((kStageA * 2) % 128 == 0 && (kStageB * 2) % 128 == 0, "stages stay 128-byte aligned");

// 16 bytes global -> shared, or 16 zero bytes when `valid` is false (src-size 0 reads nothing).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

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
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (std::is_same_v<Use, wmma::matrix_a>)
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr), "r"(ld));
  else
    asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr), "r"(ld));
}

// K and N are multiples of 8 (checked on the host), so a 16-byte chunk is wholly inside or
// wholly outside the matrix and every row starts 16-byte aligned.
template <class D>
__device__ __forceinline__ void load_tile(D* As, D* Bs, const D* __restrict__ A, const D* __restrict__ B, int M, int N,
                                          int K, int bm, int bn, int k0) {
#pragma unroll
  for (int c = threadIdx.x; c < BM * BK / kChunk; c += kThreads) {
    const int r = c / (BK / kChunk), kc = (c % (BK / kChunk)) * kChunk;
    const bool ok = bm + r < M && k0 + kc < K;
    cp_async16(As + r * kLdA + kc, ok ? A + (long long)(bm + r) * K + k0 + kc : A, ok);
  }
#pragma unroll
  for (int c = threadIdx.x; c < BK * BN / kChunk; c += kThreads) {
    const int r = c / (BN / kChunk), nc = (c % (BN / kChunk)) * kChunk;
    const bool ok = k0 + r < K && bn + nc < N;
    cp_async16(Bs + r * kLdB + nc, ok ? B + (long long)(k0 + r) * N + bn + nc : B, ok);
  }
}

template <class D>
__global__ void __launch_bounds__(kThreads, 2)
    wmma_kernel(const D* __restrict__ A, const D* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  D* As = reinterpret_cast<D*>(smem_raw);
  D* Bs = As + kStages * kStageA;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int warp = threadIdx.x / 32, wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int k_tiles = (K + BK - 1) / BK;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragM][kFragN];
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // Prologue: stages 0 .. kStages-2 in flight. Every thread commits a group per stage, empty or
  // not, so that wait_group counts the same on every thread.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_tile(As + s * kStageA, Bs + s * kStageB, A, B, M, N, K, bm, bn, s * BK);
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // tile kt has landed (for this thread) ...
    __syncthreads();               // ... and for all threads; stage (kt-1) % kStages is free again
    const int next = kt + kStages - 1;
    if (next < k_tiles)
      load_tile(As + (next % kStages) * kStageA, Bs + (next % kStages) * kStageB, A, B, M, N, K, bm, bn, next * BK);
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
    CUDA_CHECK(cudaFuncSetAttribute(wmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kSmemBytes)));
  }

  std::optional<WaveModel> waves() const override {
    return this->tile_waves(wmma_kernel<D>, kThreads, kSmemBytes, BM, BN);
  }

 private:
  void launch(const D* A, const D* B, float* C) override {
    const dim3 grid(blocks_for(this->N, BN), blocks_for(this->M, BM));
    wmma_kernel<D><<<grid, kThreads, kSmemBytes>>>(A, B, C, static_cast<int>(this->M), static_cast<int>(this->N),
                                                   static_cast<int>(this->K));
  }
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>(Unit::tensor);
  v.variant = "wmma";
  v.summary = "16x16x16 WMMA fragments, 128x128x32 block tile, 64x32 warp tiles, 3-stage cp.async pipeline";
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
