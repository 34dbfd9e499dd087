// Hopper wgmma GEMM (sm_90a), BF16 and FP16 inputs with FP32 accumulation: from wmma, the tensor
// memory accelerator (TMA) copies whole tiles into swizzled shared memory, and each consumer
// warpgroup issues asynchronous 64x128x16 warpgroup MMAs straight from shared memory.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/wgmma'
#include <cuda.h>
#include <cudaTypedefs.h>
#include <fmt/format.h>

#include "bench/sm90a.cuh"
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
// each stage); warpgroups 1 and 2 are consumers, each computing 64 rows of the 128x128 tile with
// a 64x128 accumulator (64 FP32 registers per thread). Full/empty mbarriers per stage hand the
// kStages buffers back and forth. TMA fills out-of-range elements with zeros, so ragged M, N and
// K need no special case; TMA does need 16-byte row strides, so K and N must be multiples of 8.
//
// Shared layouts (128-byte swizzle, the pattern TMA writes and wgmma reads):
//  A tile: 128 rows (M) x 64 elements (K) = 128 bytes per row; "K-major". wgmma's descriptor
//          steps 8-row groups 1024 bytes apart (SBO); each k16 slice starts 32 bytes further.
//  B tile: B is row-major K x N, so its tile is "MN-major": two TMA boxes of 64 K-rows x 64
//          N-elements (128 bytes), the second 8 KiB after the first. The descriptor steps 64-wide
//          N chunks 8 KiB apart (LBO) and 8-row K groups 1024 bytes apart (SBO), with the
//          transpose flag for B set; each k16 slice starts 16 rows = 2048 bytes further.
constexpr int BM = 128, BN = 128, BK = 64, kStages = 4, kConsumers = 2;
constexpr int kThreads = 128 * (kConsumers + 1);
constexpr int kBoxN = 64;                                // N elements per B box (128 bytes)
constexpr int kTileABytes = BM * BK * 2, kTileBBytes = BK * BN * 2;
constexpr int kStageBytes = kTileABytes + kTileBBytes;
constexpr std::size_t kSmemBytes = kStages * kStageBytes + 2 * kStages * sizeof(std::uint64_t) + 1024;  // + alignment
static_assert(BK * 2 == 128, "a K-major A row is exactly one 128-byte swizzle row");
static_assert(kBoxN * 2 == 128 && BN == 2 * kBoxN, "B is two 128-byte-wide boxes");
static_assert(BM == 64 * kConsumers, "each consumer warpgroup owns 64 rows (one m64 wgmma)");
static_assert(kTileABytes % 1024 == 0 && kTileBBytes % 1024 == 0, "tiles stay 1024-byte aligned for the swizzle");

// For other entries of the architecture list the kernel is a trap (bench/sm90a.cuh); the launcher
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
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA: one 2D box, coordinates innermost first, completion counted on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// ---- wgmma
// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4)
// and the 128-byte swizzle mode (1 in bits 62-63).
__device__ __forceinline__ std::uint64_t smem_desc(const void* p, unsigned lbo_bytes, unsigned sbo_bytes) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((smem_u32(p) & 0x3FFFF) >> 4);
  d |= static_cast<std::uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16;
  d |= static_cast<std::uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32;
  d |= 1ull << 62;
  return d;
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

// D(64x128, FP32) += A(64x16, K-major) · B(16x128, MN-major: transpose flag 1).
template <class D>
__device__ __forceinline__ void wgmma_64x128x16(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b);
template <>
__device__ __forceinline__ void wgmma_64x128x16<__nv_bfloat16>(float (&d)[64], std::uint64_t desc_a,
                                                               std::uint64_t desc_b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(1));
}
template <>
__device__ __forceinline__ void wgmma_64x128x16<__half>(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(1));
}

#endif  // ROOFBENCH_NO_SM90A

template <class D>
__global__ void __launch_bounds__(kThreads)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 float* __restrict__ C, int M, int N, int K) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  extern __shared__ unsigned char smem_raw[];
  // The swizzle pattern is a function of address bits, so tiles must start 1024-byte aligned.
  unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                         ~static_cast<std::uintptr_t>(1023));
  auto tile_a = [&](int s) { return smem + s * kStageBytes; };
  auto tile_b = [&](int s) { return smem + s * kStageBytes + kTileABytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + kStages * kStageBytes);
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
    // Producer: one thread keeps up to kStages tiles in flight.
    if (tid == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);  // consumers are done with it
        mbar_expect_tx(&full[s], kStageBytes);  // out-of-range zeros count as bytes too
        tma_load_2d(tile_a(s), &map_a, kt * BK, bm, &full[s]);
        tma_load_2d(tile_b(s), &map_b, bn, kt * BK, &full[s]);
        tma_load_2d(tile_b(s) + kTileBBytes / 2, &map_b, bn + kBoxN, kt * BK, &full[s]);
      }
    }
    return;
  }

  // Consumers.
  const int c = wg - 1;
  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.0f;
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], (kt / kStages) & 1);
    const unsigned char* a = tile_a(s) + c * 64 * 128;  // this warpgroup's 64 rows
    const unsigned char* b = tile_b(s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
      wgmma_64x128x16<D>(d, smem_desc(a + kk * 32, 16, 1024), smem_desc(b + kk * 16 * 128, kTileBBytes / 2, 1024));
    wgmma_commit();
    wgmma_wait_all();  // this stage's operands have been read
    if (tid % 32 == 0) mbar_arrive(&empty[s]);
  }

  // Epilogue: the m64nNk16 accumulator layout. Register j of thread t (warp w, lane l) holds
  // row 16w + l/4 + 8·((j/2)%2), column 8·(j/4) + 2·(l%4) + j%2; pairs (j, j+1) are adjacent.
  const int w = tid / 32, l = tid % 32;
#pragma unroll
  for (int j = 0; j < 64; j += 2) {
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

template <class T>
class WgmmaGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit WgmmaGemm(const Params& p) : GpuGemm<T>(p) {
    this->require_16_byte_rows("wgmma", "TMA needs 16-byte row strides");
    require_sm90("gemm/wgmma");
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kSmemBytes)));
  }

  std::optional<WaveModel> waves() const override {
    return this->tile_waves(wgmma_kernel<D>, kThreads, kSmemBytes, BM, BN);
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
    wgmma_kernel<D><<<grid, kThreads, kSmemBytes>>>(map_a_, map_b_, C, static_cast<int>(this->M),
                                                    static_cast<int>(this->N), static_cast<int>(this->K));
  }

  CUtensorMap map_a_{}, map_b_{};
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>("tensor");
  v.variant = "wgmma";
  v.only_on = kSm90Only;
  v.summary = "TMA tile loads into 128B-swizzled smem, 64x128x16 wgmma from 2 consumer warpgroups, 4-stage mbarrier pipeline";
  v.source = __FILE__;
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({2048});
  v.test_sizes = aligned_test_shapes();
  v.make = [](const Params& p) { return std::make_unique<WgmmaGemm<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::gemm
