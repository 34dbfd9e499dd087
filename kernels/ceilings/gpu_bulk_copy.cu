// GPU HBM copy ceiling through the tensor memory accelerator (sm_90a): bulk copies global ->
// shared -> global of 16 KiB chunks, one thread a block issuing them, instead of a load and a
// store per 16 bytes per thread.
// Run only this: roofbench ceilings --device cuda:0 --filter dram_copy_bulk
#include <fmt/format.h>

#include <memory>

#include "kernels/ceilings/stream_ceilings.h"
#include "kernels/sm90a.cuh"
#include "roofbench/cuda.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- kernel
// Why another copy: Nsight Compute on an H200 (reports/baselines/h200-2026-11-29/profile/
// dram_copy.txt) found the float4 copy's warps stalled 226 cycles an instruction on their loads
// and 170 on a full load/store queue ("LG throttle"), HBM 82% busy, and the copy 0.93x
// cudaMemcpy's device-to-device rate in the same run. A bulk copy (cp.async.bulk) moves a whole
// chunk per instruction through the TMA, out of the SM's load/store queues.
//
// A block is one warp; its lane 0 keeps kStages chunks in flight: each chunk lands in shared
// memory (completion counted on the stage's mbarrier), then goes back out by a bulk store (a
// bulk group). A stage is loaded again once its store has finished reading it
// (cp.async.bulk.wait_group.read), one chunk after the store was issued, so that loads and stores
// overlap. Chunks go to blocks round robin; the last chunk may be short (n a multiple of 4 floats,
// so every chunk is a whole number of 16 bytes, as bulk copies need).
constexpr int kChunkBytes = 16 * 1024, kStages = 4, kBlocksPerSm = 3;
constexpr std::size_t kSmemBytes = std::size_t{kStages} * kChunkBytes + kStages * sizeof(std::uint64_t);
static_assert(kBlocksPerSm * (kSmemBytes + 1024) <= 228 * 1024, "three blocks fit an SM's shared memory");

#ifndef ROOFBENCH_NO_SM90A
using namespace sm90a;

__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(smem_u32(src)),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Until at most N of this thread's bulk groups are still reading shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
#endif  // ROOFBENCH_NO_SM90A

__global__ void __launch_bounds__(32) bulk_copy_kernel(const unsigned char* __restrict__ x,
                                                       unsigned char* __restrict__ y, long long bytes) {
#ifdef ROOFBENCH_NO_SM90A
  __trap();
#else
  extern __shared__ __align__(128) unsigned char smem[];
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + kStages * kChunkBytes);
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the barriers, to the TMA's proxy

  const long long chunks = (bytes - 1) / kChunkBytes + 1;
  // This block's chunks: blockIdx.x + j * gridDim.x for j = 0 .. mine - 1.
  const long long mine = blockIdx.x < chunks ? (chunks - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  auto chunk_at = [&](long long j) { return (blockIdx.x + j * gridDim.x) * (long long)kChunkBytes; };
  auto size_at = [&](long long j) {
    const long long at = chunk_at(j);
    return static_cast<unsigned>(bytes - at < kChunkBytes ? bytes - at : kChunkBytes);
  };
  auto load = [&](long long j) {
    const int s = static_cast<int>(j % kStages);
    mbar_expect_tx(&full[s], size_at(j));
    bulk_load(smem + s * kChunkBytes, x + chunk_at(j), size_at(j), &full[s]);
  };

  for (long long j = 0; j < mine && j < kStages; ++j) load(j);
  for (long long j = 0; j < mine; ++j) {
    const int s = static_cast<int>(j % kStages);
    mbar_wait(&full[s], static_cast<unsigned>((j / kStages) & 1));
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the chunk, to the store's proxy
    bulk_store(y + chunk_at(j), smem + s * kChunkBytes, size_at(j));
    // The previous chunk's store has read its stage (at most this one's is still reading): that
    // stage takes the chunk kStages after it.
    if (j >= 1 && j - 1 + kStages < mine) {
      bulk_wait_read<1>();
      load(j - 1 + kStages);
    }
  }
  // Every store done (its writes performed, not only its reads of shared memory) before the
  // block's shared memory goes.
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------- launcher
class GpuBulkCopy final : public Instance {
 public:
  explicit GpuBulkCopy(const Params& p) : n_(param(p, "n")) {
    if (n_ <= 0 || n_ % 4 != 0) throw InputError("the bulk copy ceiling needs n a positive multiple of 4 floats");
    require_sm90("ceiling/dram_copy_bulk");
    CUDA_CHECK(cudaFuncSetAttribute(bulk_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kSmemBytes)));
    // A block per chunk, at most kBlocksPerSm an SM (the chunks go round the blocks).
    blocks_ = grid_stride_blocks((n_ * 4 - 1) / kChunkBytes + 1, 1, kBlocksPerSm);
    x_ = DeviceBuffer<float>(n_);
    y_ = DeviceBuffer<float>(n_);
  }
  void prepare(std::uint64_t seed) override {
    hx_.resize(n_);
    fill_small_ints(hx_.data(), n_, seed);
    x_.upload(hx_);
    y_.poison();
  }
  void run() override {
    bulk_copy_kernel<<<blocks_, 32, kSmemBytes>>>(reinterpret_cast<const unsigned char*>(x_.get()),
                                                  reinterpret_cast<unsigned char*>(y_.get()), n_ * 4);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto y = y_.download();
    return check_stream(StreamOp::copy, hx_.data(), nullptr, y.data(), n_, 0.0f);
  }

 private:
  std::int64_t n_;
  unsigned blocks_ = 1;
  DeviceBuffer<float> x_, y_;
  std::vector<float> hx_;
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = bandwidth_ceiling_variant(
      "dram_copy_bulk", Backend::cuda, Level::dram,
      fmt::format("cp.async.bulk global -> shared -> global in {} KiB chunks, {} in flight a block, one warp a block, "
                  "{} blocks per SM, arrays of n floats (>= 5x the L2 each)",
                  kChunkBytes / 1024, kStages, kBlocksPerSm));
  v.work = stream_work(StreamOp::copy);
  v.only_on = kSm90Only;
  v.summary = "copy by TMA bulk copies through shared memory, 16 KiB a chunk";
  v.sizes = vector_sizes({1LL << 28});
  v.quick_sizes = v.sizes;  // as the float4 copy's (gpu_bandwidth.cu): the asymptote, not the ramp
  // 4 floats (16 bytes: one short chunk), a chunk and a short one, and 3841 chunks: 9 or 10 a
  // block on a 132-SM GPU's 396 blocks, so that each stage is used thrice (its parity back to 0)
  // and the last chunk is short.
  v.test_sizes = vector_sizes({4, 4096 + 4, (15 << 20) + 12});
  v.make = [](const Params& p) { return std::make_unique<GpuBulkCopy>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::ceilings
