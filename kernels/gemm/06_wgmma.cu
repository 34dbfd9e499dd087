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
// refuses GPUs other than sm_90 before it gets there. The mbarrier helpers are sm90a.cuh's.
#ifndef ROOFBENCH_NO_SM90A
using namespace sm90a;

// ---- TMA: one 2D box, coordinates innermost first, completion counted on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

#endif  // ROOFBENCH_NO_SM90A

#ifndef ROOFBENCH_NO_SM90A
// The block's shared memory: kStages stages of an A tile and BN/64 B boxes, then the full and
// empty mbarriers. The swizzle pattern is a function of address bits, so tiles start 1024-byte
// aligned.
template <int BN>
struct Stages {
  unsigned char* base;
  std::uint64_t* full;
  std::uint64_t* empty;
  __device__ explicit Stages(unsigned char* smem_raw)
      : base(reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                              ~static_cast<std::uintptr_t>(1023))),
        full(reinterpret_cast<std::uint64_t*>(base + kStages * Tile<BN>::kStageBytes)),
        empty(full + kStages) {}
  __device__ unsigned char* a(int s) const { return base + s * Tile<BN>::kStageBytes; }
  __device__ unsigned char* b(int s) const { return base + s * Tile<BN>::kStageBytes + kTileABytes; }

  // Every thread of the block: thread 0 sets the barriers up, the others wait for it.
  __device__ void init() const {
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) {
        mbar_init(&full[s], 1);                // the producer's expect_tx arrival (+ the bytes)
        mbar_init(&empty[s], 4 * kConsumers);  // one arrival per consumer warp
      }
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();
  }
};

// `it` counts k-tiles over every tile the block takes, so stage it % kStages is in its
// (it / kStages)-th use: its full barrier's phase of that parity, its empty barrier's one before.

// The producer's thread: the TMA loads of one BM x BN tile, each stage once the consumers have
// handed it back. In the last column of tiles a B box may lie wholly past N (N = 1408 with
// BN = 256): it is not loaded. Its stale shared memory reaches only the accumulator columns past
// N, which are never stored.
template <int BN>
__device__ __forceinline__ void produce_tile(const Stages<BN>& st, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                             int bm, int bn, int N, int k_tiles, unsigned& it) {
  const int boxes = min(Tile<BN>::kBoxes, (N - bn + kBoxN - 1) / kBoxN);
  const unsigned bytes = kTileABytes + boxes * kBoxBytes;  // partly out-of-range boxes count whole
  for (int kt = 0; kt < k_tiles; ++kt, ++it) {
    const int s = it % kStages;
    if (it >= kStages) mbar_wait(&st.empty[s], ((it / kStages) - 1) & 1);  // consumers are done with it
    mbar_expect_tx(&st.full[s], bytes);
    tma_load_2d(st.a(s), map_a, kt * BK, bm, &st.full[s]);
    for (int box = 0; box < boxes; ++box)
      tma_load_2d(st.b(s) + box * kBoxBytes, map_b, bn + box * kBoxN, kt * BK, &st.full[s]);
  }
}

// A consumer warpgroup's k loop over one tile: its 64 rows' accumulators, overwritten by the
// first k-tile's first wgmma. One stage's wgmmas stay in flight while the next stage's are
// issued; a stage goes back to the producer once its wgmmas have finished. hand_back_last: the
// tile's last stage too, after the wait for all of them (a block that takes another tile needs
// it back; a block that takes one tile has no more loads to wait for it).
template <class D, int BN>
__device__ __forceinline__ void consume_tile(const Stages<BN>& st, float (&d)[BN / 2], int c, int k_tiles,
                                             unsigned& it, bool hand_back_last) {
  using namespace sm90a;
  const bool lane0 = threadIdx.x % 32 == 0;
  for (int kt = 0; kt < k_tiles; ++kt, ++it) {
    const int s = it % kStages;
    mbar_wait(&st.full[s], (it / kStages) & 1);
    const unsigned char* a = st.a(s) + c * 64 * 128;  // this warpgroup's 64 rows
    const unsigned char* b = st.b(s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
      wgmma_m64k16<BN, 1, D>(d, smem_desc(a + kk * 32, 16, 1024, Swizzle::b128),
                             smem_desc(b + kk * 16 * 128, kBoxBytes, 1024, Swizzle::b128), kt > 0 || kk > 0);
    wgmma_commit();
    // The previous stage's wgmmas are done once at most this stage's are in flight: hand it back.
    wgmma_wait<1>();
    if (kt > 0 && lane0) mbar_arrive(&st.empty[(it - 1) % kStages]);
  }
  wgmma_wait<0>();
  if (hand_back_last && lane0) mbar_arrive(&st.empty[(it - 1) % kStages]);
}

// The m64nNk16 accumulator layout: register j of thread t (warp w, lane l) holds row
// 16w + l/4 + 8·((j/2)%2), column 8·(j/4) + 2·(l%4) + j%2; pairs (j, j+1) are adjacent.
template <int BN>
__device__ __forceinline__ void store_tile(const float (&d)[BN / 2], float* __restrict__ C, int M, int N, int bm,
                                           int bn, int c) {
  const int tid = threadIdx.x % 128, w = tid / 32, l = tid % 32;
#pragma unroll
  for (int j = 0; j < BN / 2; j += 2) {
    const int r = bm + c * 64 + 16 * w + l / 4 + 8 * ((j / 2) % 2);
    const int col = bn + 8 * (j / 4) + 2 * (l % 4);
    if (r < M && col < N)  // N % 8 == 0 and col is even, so col + 1 < N as well
      *reinterpret_cast<float2*>(C + (long long)r * N + col) = make_float2(d[j], d[j + 1]);
  }
}
#endif  // ROOFBENCH_NO_SM90A

// One block a tile: blockIdx (x along N, y along M).
template <class D, int BN>
__global__ void __launch_bounds__(kThreads)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 float* __restrict__ C, int M, int N, int K) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  extern __shared__ unsigned char smem_raw[];
  const Stages<BN> st(smem_raw);
  const int wg = threadIdx.x / 128;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int k_tiles = (K - 1) / BK + 1;  // K >= 1; K + BK - 1 would overflow near 2^31
  st.init();

  unsigned it = 0;
  if (wg == 0) {  // the producer: one thread keeps up to kStages tiles in flight
    if (threadIdx.x == 0) produce_tile(st, &map_a, &map_b, bm, bn, N, k_tiles, it);
    return;
  }
  // Consumers. No zeroing: the first k-tile's first wgmma overwrites the accumulators. Zeroing
  // them with ordinary instructions would have ptxas serialize every wgmma of the loop (warning
  // C7515), as it cannot prove them finished before a later iteration's wgmmas.
  float d[BN / 2];
  consume_tile<D, BN>(st, d, wg - 1, k_tiles, it, false);
  store_tile<BN>(d, C, M, N, bm, bn, wg - 1);
#endif
}

// Persistent: a block per SM that it fits on (gridDim.x of them), each taking tiles
// blockIdx.x, blockIdx.x + gridDim.x, ... in the order the one-tile kernel's grid runs them
// (along N first). Why: Nsight Compute on an H200 (reports/baselines/h200-2026-11-29/profile/
// wgmma.txt) found the one-tile kernel's tensor pipe busy 90.7% of the time, its SMs 95.8%: one
// block fits an SM, so each tile's pipeline fill and epilogue leave the tensor cores idle. Here
// the producer loads the next tile while the consumers store this one, and their stores drain
// while the next tile's wgmmas run.
template <class D, int BN>
__global__ void __launch_bounds__(kThreads)
    wgmma_persistent_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                            float* __restrict__ C, int M, int N, int K) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  extern __shared__ unsigned char smem_raw[];
  const Stages<BN> st(smem_raw);
  const int wg = threadIdx.x / 128;
  // Rounded up as (x - 1) / b + 1: x + b - 1 would overflow for an M or N near 2^31.
  const int tiles_n = (N - 1) / BN + 1, tiles = ((M - 1) / BM + 1) * tiles_n;  // <= INT32_MAX (the host checks)
  const int k_tiles = (K - 1) / BK + 1;
  st.init();

  unsigned it = 0;
  if (wg == 0) {
    if (threadIdx.x == 0)
      for (int t = blockIdx.x; t < tiles; t += gridDim.x)
        produce_tile(st, &map_a, &map_b, (t / tiles_n) * BM, (t % tiles_n) * BN, N, k_tiles, it);
    return;
  }
  float d[BN / 2];
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int bm = (t / tiles_n) * BM, bn = (t % tiles_n) * BN;
    consume_tile<D, BN>(st, d, wg - 1, k_tiles, it, true);
    store_tile<BN>(d, C, M, N, bm, bn, wg - 1);
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

template <class T, int BN, bool kPersistent>
class WgmmaGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit WgmmaGemm(const Params& p) : GpuGemm<T>(p) {
    this->require_16_byte_rows(name(), "TMA needs 16-byte row strides");
    if (!kPersistent) this->require_grid_rows(name(), BM);
    // The persistent kernel takes its tiles by a 32-bit index (and has no grid axis to outgrow).
    if (kPersistent && std::int64_t{blocks_for(this->M, BM)} * blocks_for(this->N, BN) > INT32_MAX)
      throw InputError(fmt::format("gemm/{} numbers its {}x{} tiles in 32 bits, at most {} of them; got M={} N={} K={}",
                                   name(), BM, BN, INT32_MAX, this->M, this->N, this->K));
    require_sm90("gemm/" + name());
    CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(Tile<BN>::kSmemBytes)));
    if (kPersistent) {
      const WaveModel w = *waves();
      const std::int64_t tiles = std::int64_t{blocks_for(this->M, BM)} * blocks_for(this->N, BN);
      if (w.blocks_per_sm < 1) throw CudaError("gemm/" + name() + ": no block fits an SM");
      blocks_ = static_cast<unsigned>(std::min<std::int64_t>(tiles, std::int64_t{w.sms} * w.blocks_per_sm));
    }
  }

  // The variant's name: the 128x256 tile is the family's `wgmma`, the other is named by its BN,
  // and the persistent form by that.
  static std::string name() {
    if (kPersistent) return BN == 256 ? std::string("wgmma_persistent") : fmt::format("wgmma_persistent_bn{}", BN);
    return BN == 256 ? std::string("wgmma") : fmt::format("wgmma_bn{}", BN);
  }

  std::optional<WaveModel> waves() const override {
    return this->tile_waves(kernel(), kThreads, Tile<BN>::kSmemBytes, BM, BN);
  }

 private:
  static constexpr CUtensorMapDataType kType =
      std::is_same_v<T, bf16_t> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  static auto kernel() {
    if constexpr (kPersistent)
      return wgmma_persistent_kernel<D, BN>;
    else
      return wgmma_kernel<D, BN>;
  }

  void setup() override {
    map_a_ = make_map(this->device_a(), kType, this->M, this->K, BM, BK);
    map_b_ = make_map(this->device_b(), kType, this->K, this->N, BK, kBoxN);
  }
  void launch(const D*, const D*, float* C) override {
    const dim3 grid = kPersistent ? dim3(blocks_) : dim3(blocks_for(this->N, BN), blocks_for(this->M, BM));
    kernel()<<<grid, kThreads, Tile<BN>::kSmemBytes>>>(map_a_, map_b_, C, static_cast<int>(this->M),
                                                       static_cast<int>(this->N), static_cast<int>(this->K));
  }

  CUtensorMap map_a_{}, map_b_{};
  unsigned blocks_ = 0;  // persistent: the SMs times the blocks that fit one, at most the tiles
};

// ---------------------------------------------------------------- registration
template <class T, int BN, bool kPersistent = false>
Variant make() {
  Variant v = gpu_gemm_variant<T>(Unit::tensor);
  v.variant = WgmmaGemm<T, BN, kPersistent>::name();
  v.only_on = kSm90Only;
  v.summary = fmt::format(
      "TMA tile loads into 128B-swizzled smem, 64x{}x16 wgmma from 2 consumer warpgroups ({}x{} block tile), "
      "4-stage mbarrier pipeline{}",
      BN, BM, BN, kPersistent ? "; persistent: a block per SM takes tile after tile, the next tile's loads under this one's stores" : "");
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({2048});
  v.test_sizes = aligned_test_shapes();
  // More tiles (18 x 9 = 162, ragged in M, N and K) than a Hopper GPU has SMs, so that some
  // blocks take a second tile, and more k-tiles a block (7 a tile) than stages: the persistent
  // kernel's stages go round across a tile boundary.
  if (kPersistent) v.test_sizes.push_back({{"M", 2300}, {"N", 2056}, {"K", 392}});
  v.make = [](const Params& p) { return std::make_unique<WgmmaGemm<T, BN, kPersistent>>(p); };
  return v;
}
ROOFBENCH_REGISTER((make<half_t, 256>()));
ROOFBENCH_REGISTER((make<bf16_t, 256>()));
ROOFBENCH_REGISTER((make<half_t, 128>()));
ROOFBENCH_REGISTER((make<bf16_t, 128>()));
ROOFBENCH_REGISTER((make<half_t, 256, true>()));
ROOFBENCH_REGISTER((make<bf16_t, 256, true>()));

}  // namespace
}  // namespace roofbench::gemm
