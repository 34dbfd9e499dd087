// GPU bandwidth ceilings inside the chip, for the hierarchical roofline: L2 (a working set that
// fits in the L2, read over and over with loads that skip the L1) and shared memory (each block
// reading its own 24 KiB over and over). The same technique as the HBM read, at other levels.
// Run only these: roofbench ceilings --device cuda:0
#include <fmt/format.h>

#include <memory>

#include "kernels/ceilings/stream_ceilings.h"
#include "roofbench/cuda.h"

namespace roofbench::ceilings {
namespace {

constexpr int kThreads = 256;

// ---------------------------------------------------------------- kernels
// __ldcg: cache at L2 only, so every pass after the first (cold, after the harness's flush) is
// served by the L2 and not by the L1. Small-integer inputs: exact sums, as in the HBM read.
// Four loads in flight per thread, issued (predicated) before any of them is summed: the compiler's
// own unrolling checked the bound and summed after each load, one 16-byte load in flight per
// thread (32 KiB per SM), thin cover for the L2's loaded latency at 9.5 TB/s.
//
// The passes are one index space, passes x n4 float4s long, element g % n4 at index g: a thread's
// four loads run on across the end of a pass into the next. With a loop per pass, a thread had
// about four float4s a pass at 16 MiB (one batch), and each pass began only when the last one's
// loads had all come back; on the H200 (reports/baselines/h200-2026-11-29/profile/l2_read.txt)
// the L2's return path to the crossbar was 84% busy and the warps waited 43 cycles an instruction
// on their loads. At a quarter of the working set a pass would be one load a thread.
__global__ void l2_read_kernel(const float4* __restrict__ x, long long n4, int passes, unsigned long long* sum) {
  const long long stride = (long long)gridDim.x * blockDim.x, total = n4 * passes;
  const long long step = stride % n4;  // what `stride` moves an element index by, modulo n4
  long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long e = g % n4;  // the element index g reads
  float acc = 0;
  for (; g < total; g += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      v[k] = g + k * stride < total ? __ldcg(x + e) : make_float4(0, 0, 0, 0);
      e += step;
      if (e >= n4) e -= n4;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, static_cast<unsigned long long>(acc));
}

// Word j of block b's shared memory: four pseudo-random bits (0.0 or 1.0), so that the sum tells
// which words were read, not only how many: a load from the wrong address (every lane reading the
// same word, a broadcast four times cheaper) changes it. Small integers: exact sums.
__host__ __device__ inline unsigned smem_word_bits(unsigned block, unsigned j) {
  unsigned h = block * 0x9E3779B1u ^ (j + 1) * 0x85EBCA77u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

// Each lane reads consecutive 16-byte words, so a warp's 512 bytes hit all 32 banks four times
// without conflicts. The loads are volatile asm: the compiler may not keep the block's values
// in registers across passes (the words never change, so it otherwise could).
__global__ void smem_read_kernel(int float4s, int passes, unsigned long long* sum) {
  extern __shared__ float4 buf[];
  for (int j = threadIdx.x; j < float4s; j += blockDim.x) {
    const unsigned h = smem_word_bits(blockIdx.x, static_cast<unsigned>(j));
    buf[j] = make_float4(static_cast<float>(h & 1u), static_cast<float>(h >> 1 & 1u), static_cast<float>(h >> 2 & 1u),
                         static_cast<float>(h >> 3 & 1u));
  }
  __syncthreads();
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(buf));
  float acc = 0;
  for (int p = 0; p < passes; ++p) {
#pragma unroll 4
    for (int j = threadIdx.x; j < float4s; j += blockDim.x) {
      float a, b, c, d;
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
                   : "r"(base + 16 * j));
      acc += (a + b) + (c + d);
    }
  }
  for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, static_cast<unsigned long long>(acc));
}

// ---------------------------------------------------------------- launchers
class GpuL2Read final : public Instance {
 public:
  explicit GpuL2Read(const Params& p) : n_(param(p, "n")), passes_(static_cast<int>(param(p, "passes"))) {
    if (n_ <= 0 || n_ % 4 != 0 || passes_ <= 0)
      throw InputError("the L2 ceiling needs n a positive multiple of 4 and passes > 0");
    blocks_ = grid_stride_blocks(n_ / 4 * passes_, kThreads);  // the passes are one index space
    x_ = DeviceBuffer<float>(n_);
    sum_ = DeviceBuffer<unsigned long long>(1);
  }
  void prepare(std::uint64_t seed) override {
    hx_.resize(n_);
    fill_small_ints(hx_.data(), n_, seed);
    x_.upload(hx_);
    sum_.zero();
  }
  void run() override {
    l2_read_kernel<<<blocks_, kThreads>>>(reinterpret_cast<const float4*>(x_.get()), n_ / 4, passes_, sum_.get());
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto s = sum_.download();
    return check_sum(static_cast<double>(s[0]), passes_ * exact_sum(hx_.data(), n_), n_ * passes_);
  }

 private:
  std::int64_t n_;
  int passes_;
  unsigned blocks_ = 1;
  DeviceBuffer<float> x_;
  DeviceBuffer<unsigned long long> sum_;
  std::vector<float> hx_;
};

class GpuSmemRead final : public Instance {
 public:
  explicit GpuSmemRead(const Params& p)
      : blocks_(static_cast<unsigned>(param(p, "blocks"))),
        float4s_(static_cast<int>(param(p, "kib_per_block") * 1024 / 16)),
        passes_(static_cast<int>(param(p, "passes"))) {
    if (blocks_ == 0 || float4s_ <= 0 || passes_ <= 0 || param(p, "kib_per_block") > 48)
      throw InputError("the shared-memory ceiling needs blocks > 0, 1 to 48 KiB per block and passes > 0");
    // A warp's sum, at most 4 per word, stays exact in FP32.
    const std::int64_t words_per_thread = (float4s_ + kThreads - 1) / kThreads;
    if (32 * 4 * words_per_thread * passes_ >= (std::int64_t{1} << 24))
      throw InputError(
          fmt::format("the shared-memory ceiling's sums are exact only below 2^24: {} passes over {} KiB "
                      "per block is too many",
                      passes_, param(p, "kib_per_block")));
    sum_ = DeviceBuffer<unsigned long long>(1);
  }
  void prepare(std::uint64_t) override { sum_.zero(); }
  void run() override {
    smem_read_kernel<<<blocks_, kThreads, static_cast<std::size_t>(float4s_) * 16>>>(float4s_, passes_, sum_.get());
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    // Every word's bits, every pass.
    const auto s = sum_.download();
    double per_pass = 0;
    for (unsigned b = 0; b < blocks_; ++b)
      for (int j = 0; j < float4s_; ++j)
        per_pass += __builtin_popcount(smem_word_bits(b, static_cast<unsigned>(j)) & 15u);
    const double expected = per_pass * static_cast<double>(passes_);
    return check_sum(static_cast<double>(s[0]), expected, static_cast<std::int64_t>(float4s_) * 4 * passes_ * blocks_);
  }

 private:
  unsigned blocks_;
  int float4s_, passes_;
  DeviceBuffer<unsigned long long> sum_;
};

// ---------------------------------------------------------------- registration
// The L2 read at working sets from 4 to 32 MiB, each a ceiling of its own: the L2's roof is the
// fastest (issue 51: the H200 read 8.6 to 8.7 TB/s at 16 MiB on two visits, where public
// measurements reach 9.7 to 10.2, and which working set gives the L2's best is a fact of the
// GPU, measured, not assumed). Every size reads 4 GiB a run (passes x the working set). `l2_read`
// keeps its name at 16 MiB, so that its history reads on.
Variant make_l2(int mib) {
  const std::string name = mib == 16 ? "l2_read" : fmt::format("l2_read_{}mib", mib);
  const std::int64_t n = std::int64_t{mib} << 18, passes = 4096 / mib;  // floats; 4 GiB a run
  Variant v = bandwidth_ceiling_variant(
      name, Backend::cuda, Level::l2,
      fmt::format("{} MiB (inside the L2 of an H100/H200) read passes times with ld.global.cg, 256 threads x 8 "
                  "blocks per SM, the passes one index space; the first pass is cold",
                  mib));
  v.work = Work().read<float>("x, summed (the adds are not counted)", Count::param("n"), Count::param("passes"));
  v.summary = fmt::format("float4 reads that skip the L1 (ld.global.cg) over {} MiB, read again and again", mib);
  v.sizes = {{{"n", n}, {"passes", passes}}};
  v.quick_sizes = {{{"n", n}, {"passes", passes / 4}}};
  // One float4; a ragged pass; and 8 passes of 300,000 float4s over 8 blocks of 256 threads an
  // SM (about 9 loads a thread on 132 SMs: two batches of four and a part), so that a thread's
  // loads run on across the end of a pass and its element index wraps.
  v.test_sizes = {{{"n", 4}, {"passes", 3}}, {{"n", 4096 + 4}, {"passes", 2}}, {{"n", 1200000}, {"passes", 8}}};
  v.make = [](const Params& p) { return std::make_unique<GpuL2Read>(p); };
  return v;
}

Variant make_smem() {
  Variant v =
      bandwidth_ceiling_variant("smem_read", Backend::cuda, Level::smem,
                                "ld.shared.v4.f32 by consecutive lanes (no bank conflicts), 256 threads, 24 KiB "
                                "per block, 1056 blocks (8 per SM on 132 SMs)");
  v.work = Work().read("each block's own slice of shared memory, summed",
                       Count::param("blocks") * Count::param("kib_per_block"), 1024, Count::param("passes"));
  // 8 blocks of 24 KiB (and the 1 KiB the hardware reserves per block) fit in an SM's 228 KiB,
  // as 8 of 32 KiB did not: 6 were resident, and a second round of 264 blocks was spread unevenly.
  v.summary = "conflict-free 16-byte ld.shared over 24 KiB per block, again and again";
  v.sizes = {{{"blocks", 1056}, {"kib_per_block", 24}, {"passes", 4096}}};
  v.quick_sizes = {{{"blocks", 1056}, {"kib_per_block", 24}, {"passes", 1024}}};
  v.test_sizes = {{{"blocks", 1}, {"kib_per_block", 1}, {"passes", 3}},
                  {{"blocks", 7}, {"kib_per_block", 32}, {"passes", 2}}};
  v.make = [](const Params& p) { return std::make_unique<GpuSmemRead>(p); };
  return v;
}
ROOFBENCH_REGISTER(make_l2(4));
ROOFBENCH_REGISTER(make_l2(8));
ROOFBENCH_REGISTER(make_l2(16));
ROOFBENCH_REGISTER(make_l2(32));
ROOFBENCH_REGISTER(make_smem());

}  // namespace
}  // namespace roofbench::ceilings
