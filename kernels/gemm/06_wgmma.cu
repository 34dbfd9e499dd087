// Hopper wgmma GEMM (sm_90a), BF16 and FP16 inputs with FP32 accumulation: from wmma, the tensor
// memory accelerator (TMA) copies whole tiles into swizzled shared memory, and each consumer
// warpgroup issues asynchronous 64x256x16 warpgroup MMAs (64x128x16 in gemm/wgmma_bn128) straight
// from shared memory.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/wgmma'
#include <cuda.h>
#include <cudaTypedefs.h>
#include <fmt/format.h>

#include "kernels/sm90a.cuh"
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// Why it is faster than wmma: mma.sync feeds the tensor cores from registers that every warp
// must first load from shared memory, and it tops out near 65% of the tensor peak on Hopper.
// wgmma reads both operands from shared memory through descriptors, runs asynchronously, and is
// the instruction the peak is quoted for. TMA moves a whole tile per instruction from one
// thread, so no warp spends issue slots on loads.
//
// A block is three warpgroups: warpgroup 0 is the producer (one thread issues the TMA loads of
// each stage); warpgroups 1 and 2 are consumers, each computing 64 rows of the BM x BN tile with
// a 64 x BN accumulator (BN/2 FP32 registers per thread). Full/empty mbarriers per stage hand the
// kStages buffers back and forth. A consumer keeps one stage's wgmmas in flight while it issues
// the next stage's, and hands a stage back once its wgmmas have finished. TMA fills
// out-of-range elements with zeros, so ragged M, N and K need no special case; TMA does need
// 16-byte row strides, so K and N must be multiples of 8.
//
// The tile width is the tuning knob. BN = 256 (64x256x16 wgmmas, 128 accumulators per thread)
// reads 3/4 the shared memory per flop of BN = 128 and 3/4 the global memory per flop, which is
// what lets it approach cuBLAS; BN = 128 is kept beside it as the step between.
//
// Shared layouts (128-byte swizzle, the pattern TMA writes and wgmma reads):
//  A tile: 128 rows (M) x 64 elements (K) = 128 bytes per row; "K-major". wgmma's descriptor
//          steps 8-row groups 1024 bytes apart (SBO); each k16 slice starts 32 bytes further.
//  B tile: B is row-major K x N, so its tile is "MN-major": BN/64 TMA boxes of 64 K-rows x 64
//          N-elements (128 bytes), each 8 KiB after the one before. The descriptor steps 64-wide
//          N chunks 8 KiB apart (LBO) and 8-row K groups 1024 bytes apart (SBO), with the
//          transpose flag for B set; each k16 slice starts 16 rows = 2048 bytes further.
constexpr int BM = 128, BK = 64, kStages = 4, kConsumers = 2;
constexpr int kThreads = 128 * (kConsumers + 1);
constexpr int kBoxN = 64;                                // N elements per B box (128 bytes)
constexpr int kBoxBytes = BK * kBoxN * 2;
constexpr int kTileABytes = BM * BK * 2;
static_assert(BK * 2 == 128, "a K-major A row is exactly one 128-byte swizzle row");
static_assert(kBoxN * 2 == 128, "a B box row is exactly one 128-byte swizzle row");
static_assert(BM == 64 * kConsumers, "each consumer warpgroup owns 64 rows (one m64 wgmma)");
static_assert(kTileABytes % 1024 == 0 && kBoxBytes % 1024 == 0, "tiles stay 1024-byte aligned for the swizzle");

template <int BN>
struct Tile {
  static_assert(BN == 128 || BN == 256, "wgmma shapes wrapped in kernels/sm90a.cuh: n128 and n256");
  static constexpr int kBoxes = BN / kBoxN;
  static constexpr int kStageBytes = kTileABytes + kBoxes * kBoxBytes;
  static constexpr std::size_t kSmemBytes =
      kStages * kStageBytes + 2 * kStages * sizeof(std::uint64_t) + 1024;  // + alignment
  static_assert(kSmemBytes <= 227 * 1024, "the stages fit in an SM's 227 KiB of opt-in shared memory");
};

// For other entries of the architecture list the kernel is a trap (kernels/sm90a.cuh); the launcher
// refuses GPUs other than sm_90 before it gets there.
#ifndef ROOFBENCH_NO_SM90A
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarriers
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// A wait that never ends (a TMA that delivers fewer bytes than expected, a phase mixed up) would
// hang the process, and with it the whole run. A wait longer than kHangNs, far beyond any real
// one, traps instead: the run records the error and names this benchmark (bench/gbench_runner.cpp).
constexpr unsigned long long kHangNs = 10'000'000'000ull;
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned long long start = 0;
  for (unsigned spins = 0;; ++spins) {
    unsigned done = 0;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    if (done) return;
    if (spins == 0)
      start = global_ns();
    else if (spins % 1024 == 0 && global_ns() - start > kHangNs)
      __trap();
  }
}

// ---- TMA: one 2D box, coordinates innermost first, completion counted on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

#endif  // ROOFBENCH_NO_SM90A

template <class D, int BN>
__global__ void __launch_bounds__(kThreads)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 float* __restrict__ C, int M, int N, int K) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  using namespace sm90a;
  using T = Tile<BN>;
  extern __shared__ unsigned char smem_raw[];
  // The swizzle pattern is a function of address bits, so tiles must start 1024-byte aligned.
  unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                         ~static_cast<std::uintptr_t>(1023));
  auto tile_a = [&](int s) { return smem + s * T::kStageBytes; };
  auto tile_b = [&](int s) { return smem + s * T::kStageBytes + kTileABytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + kStages * T::kStageBytes);
  std::uint64_t* empty = full + kStages;

  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int k_tiles = (K + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);                   // the producer's expect_tx arrival (+ the bytes)
      mbar_init(&empty[s], 4 * kConsumers);     // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    // Producer: one thread keeps up to kStages tiles in flight. In the last column of tiles a
    // B box may lie wholly past N (N = 1408 with BN = 256): it is not loaded. Its stale shared
    // memory reaches only the accumulator columns past N, which are never stored.
    if (tid == 0) {
      const int boxes = min(T::kBoxes, (N - bn + kBoxN - 1) / kBoxN);
      const unsigned bytes = kTileABytes + boxes * kBoxBytes;  // partly out-of-range boxes count whole
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);  // consumers are done with it
        mbar_expect_tx(&full[s], bytes);
        tma_load_2d(tile_a(s), &map_a, kt * BK, bm, &full[s]);
        for (int box = 0; box < boxes; ++box)
          tma_load_2d(tile_b(s) + box * kBoxBytes, &map_b, bn + box * kBoxN, kt * BK, &full[s]);
      }
    }
    return;
  }

  // Consumers.
  const int c = wg - 1;
  // No zeroing: the first k-tile's first wgmma overwrites the accumulators. Zeroing them with
  // ordinary instructions would have ptxas serialize every wgmma of the loop (warning C7515), as
  // it cannot prove them finished before a later iteration's wgmmas.
  float d[BN / 2];
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], (kt / kStages) & 1);
    const unsigned char* a = tile_a(s) + c * 64 * 128;  // this warpgroup's 64 rows
    const unsigned char* b = tile_b(s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
      wgmma_m64k16<BN, 1, D>(d, smem_desc(a + kk * 32, 16, 1024, Swizzle::b128),
                             smem_desc(b + kk * 16 * 128, kBoxBytes, 1024, Swizzle::b128), kt > 0 || kk > 0);
    wgmma_commit();
    // The previous stage's wgmmas are done once at most this stage's are in flight: hand it back.
    wgmma_wait<1>();
    if (kt > 0 && tid % 32 == 0) mbar_arrive(&empty[(kt - 1) % kStages]);
  }
  wgmma_wait<0>();

  // Epilogue: the m64nNk16 accumulator layout. Register j of thread t (warp w, lane l) holds
  // row 16w + l/4 + 8·((j/2)%2), column 8·(j/4) + 2·(l%4) + j%2; pairs (j, j+1) are adjacent.
  const int w = tid / 32, l = tid % 32;
#pragma unroll
  for (int j = 0; j < BN / 2; j += 2) {
    const int r = bm + c * 64 + 16 * w + l / 4 + 8 * ((j / 2) % 2);
    const int col = bn + 8 * (j / 4) + 2 * (l % 4);
    if (r < M && col < N)  // N % 8 == 0 and col is even, so col + 1 < N as well
      *reinterpret_cast<float2*>(C + (long long)r * N + col) = make_float2(d[j], d[j + 1]);
  }
#endif
}

// ---------------------------------------------------------------- launcher
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (!p || q != cudaDriverEntryPointSuccess) throw CudaError("cuTensorMapEncodeTiled is not available from the driver");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A row-major rows x cols matrix of 16-bit elements, read in boxes of box_rows x box_cols.
CUtensorMap make_map(const void* base, CUtensorMapDataType type, std::int64_t rows, std::int64_t cols, int box_rows,
                     int box_cols) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};  // bytes, for dimension 1
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, type, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw CudaError(fmt::format("cuTensorMapEncodeTiled failed with CUresult {}", static_cast<int>(r)));
  return map;
}

template <class T, int BN>
class WgmmaGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit WgmmaGemm(const Params& p) : GpuGemm<T>(p) {
    this->require_16_byte_rows(name(), "TMA needs 16-byte row strides");
    this->require_grid_rows(name(), BM);
    require_sm90("gemm/" + name());
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_kernel<D, BN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(Tile<BN>::kSmemBytes)));
  }

  // The variant's name: the 128x256 tile is the family's `wgmma`, the other is named by its BN.
  static std::string name() { return BN == 256 ? std::string("wgmma") : fmt::format("wgmma_bn{}", BN); }

  std::optional<WaveModel> waves() const override {
    return this->tile_waves(wgmma_kernel<D, BN>, kThreads, Tile<BN>::kSmemBytes, BM, BN);
  }

 private:
  static constexpr CUtensorMapDataType kType =
      std::is_same_v<T, bf16_t> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;

  void setup() override {
    map_a_ = make_map(this->device_a(), kType, this->M, this->K, BM, BK);
    map_b_ = make_map(this->device_b(), kType, this->K, this->N, BK, kBoxN);
  }
  void launch(const D*, const D*, float* C) override {
    const dim3 grid(blocks_for(this->N, BN), blocks_for(this->M, BM));
    wgmma_kernel<D, BN><<<grid, kThreads, Tile<BN>::kSmemBytes>>>(map_a_, map_b_, C, static_cast<int>(this->M),
                                                                  static_cast<int>(this->N), static_cast<int>(this->K));
  }

  CUtensorMap map_a_{}, map_b_{};
};

// ---------------------------------------------------------------- registration
template <class T, int BN>
Variant make() {
  Variant v = gpu_gemm_variant<T>(Unit::tensor);
  v.variant = WgmmaGemm<T, BN>::name();
  v.only_on = kSm90Only;
  v.summary = fmt::format(
      "TMA tile loads into 128B-swizzled smem, 64x{}x16 wgmma from 2 consumer warpgroups ({}x{} block tile), "
      "4-stage mbarrier pipeline",
      BN, BM, BN);
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({2048});
  v.test_sizes = aligned_test_shapes();
  v.make = [](const Params& p) { return std::make_unique<WgmmaGemm<T, BN>>(p); };
  return v;
}
ROOFBENCH_REGISTER((make<half_t, 256>()));
ROOFBENCH_REGISTER((make<bf16_t, 256>()));
ROOFBENCH_REGISTER((make<half_t, 128>()));
ROOFBENCH_REGISTER((make<bf16_t, 128>()));

}  // namespace
}  // namespace roofbench::gemm
