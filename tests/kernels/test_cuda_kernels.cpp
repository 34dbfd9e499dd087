// Every CUDA variant in the registry against its reference at its test sizes (awkward shapes
// included). Label `gpu`: without a GPU every test is reported as skipped, with the reason.
#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "bench/device.h"
#include "bench/harness.h"
#include "kernels/gemm/reference.h"
#include "roofbench/cuda.h"
#include "tests/gpu_skip.h"
#include "tests/testing.h"

using namespace roofbench;

namespace {
std::vector<const Variant*> cuda_variants() {
  return roofbench::testing::variants_of(Backend::cuda);
}
std::vector<const Variant*> cuda_gemm_variants() {
  std::vector<const Variant*> out;
  for (const auto* v : cuda_variants())
    if (v->family == "gemm") out.push_back(v);
  return out;
}
// Why `v` does not run on this GPU (code built for another architecture), or "".
std::string not_on(const Variant& v, const Device& dev) {
  return not_here(v, dev.describe().value("compute_capability", std::string()));
}
}  // namespace

class CudaVariant : public ::testing::TestWithParam<const Variant*> {};

TEST_P(CudaVariant, MatchesItsReferenceAtEveryTestSize) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": CUDA kernels are not checked on this machine";
  const Variant& v = *GetParam();
  auto dev = make_cuda_device(0);
  if (const auto why = not_on(v, *dev); !why.empty()) GTEST_SKIP() << v.base_name() << ": " << why;
  for (const auto& p : v.test_sizes) {
    auto inst = v.make(p);
    const Verification r = prepare_and_verify(*dev, *inst, 1234);
    EXPECT_TRUE(r.ok) << v.name(p) << ": " << r.detail;
    EXPECT_GT(r.checked, 0) << v.name(p);
  }
}

// prepare() leaves every checked output poisoned (or zeroed where the kernel adds to it), so a
// kernel that wrote nothing fails its check instead of passing on what an earlier instance left in
// the same memory. A verify() that throws for want of a run has not passed either.
TEST_P(CudaVariant, FailsItsCheckWhenItDidNotRun) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": CUDA kernels are not checked on this machine";
  const Variant& v = *GetParam();
  auto dev = make_cuda_device(0);
  if (const auto why = not_on(v, *dev); !why.empty()) GTEST_SKIP() << v.base_name() << ": " << why;
  for (const auto& p : v.test_sizes) {
    auto inst = v.make(p);
    inst->prepare(1234);
    dev->synchronize();
    try {
      const Verification r = inst->verify();
      EXPECT_FALSE(r.ok) << v.name(p) << " passed its check without running: " << r.method;
    } catch (const std::exception& e) {
      SUCCEED() << v.name(p) << ": verify() refused without a run: " << e.what();
    }
  }
}

TEST_P(CudaVariant, IsMeasuredAfterVerification) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": CUDA kernels are not timed on this machine";
  const Variant& v = *GetParam();
  auto dev = make_cuda_device(0);
  if (const auto why = not_on(v, *dev); !why.empty()) GTEST_SKIP() << v.base_name() << ": " << why;
  MeasureOptions o = MeasureOptions::quick();
  o.min_samples = 3;
  o.min_time_s = 0;
  const BenchmarkResult r = run_benchmark(*dev, v, v.test_sizes.back(), o);
  ASSERT_TRUE(r.verified()) << r.error;
  EXPECT_EQ(r.measurement->timer, "cuda-events");
  EXPECT_TRUE(r.measurement->clock_before_hz.has_value());
}

INSTANTIATE_TEST_SUITE_P(Registry, CudaVariant, ::testing::ValuesIn(cuda_variants()),
                         roofbench::testing::VariantName());

// Every GEMM variant either computes each awkward shape correctly or refuses it, before touching
// the GPU, with an error that names the variant and what it needs.
class CudaGemmVariant : public ::testing::TestWithParam<const Variant*> {};

TEST_P(CudaGemmVariant, HandlesOrRejectsEveryAwkwardShape) {
  const Variant& v = *GetParam();
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": CUDA kernels are not checked on this machine";
  auto dev = make_cuda_device(0);
  if (const auto why = not_on(v, *dev); !why.empty()) GTEST_SKIP() << v.base_name() << ": " << why;
  int computed = 0;
  for (const auto& p : gemm::test_shapes()) {
    std::unique_ptr<Instance> inst;
    try {
      inst = v.make(p);
    } catch (const InputError& e) {
      // Refused only for the reason given: rows that are not whole 16-byte chunks.
      EXPECT_TRUE(param(p, "K") % 8 != 0 || param(p, "N") % 8 != 0) << v.name(p) << " refused: " << e.what();
      EXPECT_NE(std::string(e.what()).find("gemm/" + v.variant + " "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("multiples of"), std::string::npos) << e.what();
      continue;
    }
    const Verification r = prepare_and_verify(*dev, *inst, 99);
    EXPECT_TRUE(r.ok) << v.name(p) << ": " << r.detail;
    ++computed;
  }
  // A variant that refused every shape would have checked nothing: each computes at least the
  // aligned ones, and the SIMT rungs and cuBLAS every one.
  EXPECT_GT(computed, 0) << v.base_name() << " refused every shape";
  if (v.unit != Unit::tensor || v.vendor_reference)
    EXPECT_EQ(computed, static_cast<int>(gemm::test_shapes().size())) << v.base_name();
}

INSTANTIATE_TEST_SUITE_P(Registry, CudaGemmVariant, ::testing::ValuesIn(cuda_gemm_variants()),
                         roofbench::testing::VariantName());

TEST(CudaGemm, TensorCoreVariantsRefuseRowsThatAreNot16ByteMultiplesBeforeTouchingTheGpu) {
  // Runs without a GPU: the shape check comes before any CUDA call.
  const Params bad = {{"M", 64}, {"N", 45}, {"K", 64}};
  int checked = 0;
  for (const auto* v : cuda_variants()) {
    if (v->family != "gemm" || (v->variant != "wmma" && v->variant != "mma_sync" && v->variant.rfind("wgmma", 0) != 0))
      continue;
    ++checked;
    try {
      v->make(bad);
      ADD_FAILURE() << v->base_name() << " accepted N = 45";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("K and N to be multiples of 8"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("N=45"), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(checked, 4);  // wmma and mma_sync, fp16 and bf16, at least
}

TEST(CudaGemm, TiledVariantsRefuseAnMBeyondTheGridsYAxisBeforeTouchingTheGpu) {
  // Runs without a GPU: M = 2^31 - 1 would need more than 65535 blocks of rows on the grid's y
  // axis in every rung but cuBLAS; each refuses it in its constructor, naming the largest M.
  const Params tall = {{"M", INT32_MAX}, {"N", 64}, {"K", 64}};
  int checked = 0;
  for (const auto* v : cuda_variants()) {
    // cuBLAS has its own limits; the persistent wgmma and mma_sync number their tiles on a 1-D
    // grid (next test).
    if (v->family != "gemm" || v->variant == "cublas" || v->variant == "wgmma_persistent" || v->variant == "mma_sync")
      continue;
    ++checked;
    try {
      v->make(tall);
      ADD_FAILURE() << v->base_name() << " accepted M = 2^31 - 1";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("gemm/" + v->variant + " puts M in blocks of"), std::string::npos) << what;
      EXPECT_NE(what.find("M <= "), std::string::npos) << what;
      EXPECT_NE(what.find("got M=2147483647"), std::string::npos) << what;
    }
  }
  EXPECT_GE(checked, 8);  // naive and smem_tiled in three precisions, register and warp tiled, wmma
}

TEST(CudaGemm, ThePersistentWgmmaRefusesMoreTilesThanItsIndexCountsBeforeTouchingTheGpu) {
  // Runs without a GPU: 2^24 x 2^23 tiles of 128x256 do not fit the kernel's 32-bit tile index.
  const Params huge = {{"M", INT32_MAX}, {"N", INT32_MAX - 7}, {"K", 64}};
  int checked = 0;
  for (const auto* v : cuda_variants()) {
    if (v->family != "gemm" || v->variant != "wgmma_persistent") continue;
    ++checked;
    try {
      v->make(huge);
      ADD_FAILURE() << v->base_name() << " accepted M = N = 2^31 - 8";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("numbers its 128x256 tiles in 32 bits"), std::string::npos) << e.what();
    }
  }
#ifdef ROOFBENCH_HAVE_SM90A
  EXPECT_EQ(checked, 2);  // FP16 and BF16
#endif
}

TEST(CudaGemm, TheMmaSyncGemmRefusesMoreTilesThanItsOneDimensionalGridHoldsBeforeTouchingTheGpu) {
  // Runs without a GPU: a block per 128x256 tile, 2^24 x 2^23 of them, is more than the 2^31 - 1
  // blocks of a grid's x axis; a tall M alone (2^24 tiles) is not.
  int checked = 0;
  for (const auto* v : cuda_variants()) {
    if (v->family != "gemm" || v->variant != "mma_sync") continue;
    ++checked;
    try {
      v->make({{"M", INT32_MAX}, {"N", INT32_MAX - 7}, {"K", 64}});
      ADD_FAILURE() << v->base_name() << " accepted M = 2^31 - 1, N = 2^31 - 8";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("gemm/mma_sync launches a block per 128x256 tile of C, at most 2147483647"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("N=2147483640"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(checked, 2);  // FP16 and BF16
}

// The other side of the refusal above: a tall M that the rungs with M on the grid's y axis refuse
// (65535 blocks of rows at most) fits mma_sync's 1-D grid, 2^24 tiles. Making the instance
// touches the GPU (its shared-memory attribute), allocating nothing until prepare().
TEST(CudaGemm, TheMmaSyncGemmTakesAnMThatTheGridsYAxisWouldNotHold) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": a CUDA variant is not made on this machine";
  int checked = 0;
  for (const auto* v : cuda_variants()) {
    if (v->family != "gemm" || v->variant != "mma_sync") continue;
    ++checked;
    EXPECT_NO_THROW(v->make({{"M", INT32_MAX}, {"N", 64}, {"K", 64}})) << v->base_name();
  }
  EXPECT_EQ(checked, 2);  // FP16 and BF16
}

TEST(CudaGrid, BlocksForRefusesAGridLongerThanTheXAxisInsteadOfTruncatingIt) {
  // Pure arithmetic: no CUDA call.
  EXPECT_EQ(blocks_for(1, 256), 1u);
  EXPECT_EQ(blocks_for(256, 256), 1u);
  EXPECT_EQ(blocks_for(257, 256), 2u);
  EXPECT_EQ(blocks_for(0x7fffffffLL * 256, 256), 0x7fffffffu);  // the largest grid
  try {
    blocks_for(0x7fffffffLL * 256 + 1, 256);
    ADD_FAILURE() << "a grid of 2^31 blocks was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("n = 549755813633"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("grid-stride"), std::string::npos) << e.what();
  }
  // 2^40 items at 256 per block is 2^32 blocks: once silently cut to 0.
  EXPECT_THROW(blocks_for(1LL << 40, 256), InputError);
  // No item: a grid of no block, which the launch would refuse without saying why.
  try {
    blocks_for(0, 256);
    ADD_FAILURE() << "a grid of no block was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("n = 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(blocks_for(-5, 256), InputError);
}

TEST(CudaCeilings, LaunchAndPcieCeilingsRefuseAnEmptySizeBeforeTouchingTheGpu) {
  // Runs without a GPU: reps and n are checked before any buffer, graph or CUDA call.
  int launch = 0, pcie = 0;
  for (const auto* v : cuda_variants()) {
    if (v->family != "ceiling") continue;
    const bool is_launch = v->variant.rfind("launch_", 0) == 0, is_pcie = v->variant.rfind("pcie_", 0) == 0;
    if (!is_launch && !is_pcie) continue;
    (is_launch ? launch : pcie) += 1;
    for (std::int64_t bad : {0, -3}) {
      try {
        v->make(Params{{is_launch ? "reps" : "n", bad}});
        ADD_FAILURE() << v->base_name() << " accepted " << bad;
      } catch (const std::exception& e) {  // the size's own message, not a CUDA error
        const std::string said = std::string(is_launch ? "reps = " : "n = ") + std::to_string(bad);
        EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << v->base_name() << ": " << e.what();
      }
    }
  }
  EXPECT_EQ(launch, 3);  // kernel, graph_node, graph
  EXPECT_GE(pcie, 3);    // h2d and d2h pinned, duplex at least
}

TEST(CudaRegistry, HasTheGemmLadderInEveryPrecision) {
  std::set<std::string> names;
  for (const auto* v : cuda_variants()) names.insert(v->base_name());
  for (const char* n :
       {"gemm/naive/fp32", "gemm/naive/fp16", "gemm/naive/bf16", "gemm/smem_tiled/fp32", "gemm/smem_tiled/fp16",
        "gemm/smem_tiled/bf16", "gemm/register_tiled/fp32", "gemm/warp_tiled/fp32", "gemm/wmma/fp16", "gemm/wmma/bf16",
        "gemm/mma_sync/fp16", "gemm/mma_sync/bf16",
        "gemm/cublas/fp32", "gemm/cublas/fp16", "gemm/cublas/bf16", "ceiling/fp64_fma/fp64", "ceiling/fp16_fma/fp16",
        "ceiling/bf16_fma/bf16", "ceiling/fp16_mma_sync/fp16", "ceiling/bf16_mma_sync/bf16"})
    EXPECT_TRUE(names.count(n)) << n;
#ifdef ROOFBENCH_HAVE_SM90A
  for (const char* n : {"gemm/wgmma/fp16", "gemm/wgmma/bf16", "gemm/wgmma_bn128/fp16", "gemm/wgmma_bn128/bf16",
                        "gemm/wgmma_persistent/fp16", "gemm/wgmma_persistent/bf16",
                        "ceiling/fp16_wgmma/fp16", "ceiling/bf16_wgmma/bf16", "ceiling/dram_copy_bulk/fp32"})
    EXPECT_TRUE(names.count(n)) << n;
#endif
  // Only the sm_90a code (wgmma, TMA) is tied to one architecture; everything else runs on any
  // GPU built for.
  for (const auto* v : cuda_variants()) {
    const bool sm90a = v->variant.find("wgmma") != std::string::npos || v->variant == "dram_copy_bulk";
    EXPECT_EQ(v->only_on, sm90a ? "9.0" : "") << v->base_name();
  }
}

TEST(CudaRegistry, EachGemmIsPlacedAgainstTheUnitItRunsOn) {
  for (const auto* v : cuda_variants()) {
    if (v->family != "gemm") continue;
    const bool tensor = v->variant == "wmma" || v->variant == "mma_sync" || v->variant.rfind("wgmma", 0) == 0 ||
                        (v->variant == "cublas" && v->precision != Precision::fp32);
    EXPECT_EQ(v->unit, tensor ? Unit::tensor : Unit::simt) << v->base_name();
    // 16-bit inputs on CUDA cores are widened and accumulated on the FP32 pipe.
    EXPECT_EQ(v->math.has_value(), !tensor && v->precision != Precision::fp32) << v->base_name();
  }
}

TEST(CudaRegistry, HasTheFoundationFamilies) {
  std::set<std::string> names;
  for (const auto* v : cuda_variants()) names.insert(v->base_name());
  for (const char* n :
       {"gemm/naive/fp32", "gemm/smem_tiled/fp32", "stream/saxpy/fp32", "ceiling/dram_read/fp32",
        "ceiling/dram_write/fp32", "ceiling/dram_copy/fp32", "ceiling/dram_triad/fp32", "ceiling/fp32_fma/fp32",
        "launch/per_op/fp32", "launch/graph/fp32", "launch/fused/fp32", "ceiling/launch_kernel/fp64",
        "ceiling/launch_graph_node/fp64", "ceiling/launch_graph/fp64"})
    EXPECT_TRUE(names.count(n)) << n;
}

// Every ceiling an overlap form is placed against is one this registry measures: the copy
// passes' one-way ceilings and, for the pipelined forms, the link both ways their copies share
// (serial's copies never run at once: no link).
TEST(CudaRegistry, EachOverlapFormNamesCeilingsTheRunMeasures) {
  std::set<std::string> ceilings;
  for (const auto* v : cuda_variants())
    if (v->family == "ceiling") ceilings.insert(v->variant);
  int forms = 0;
  for (const auto* v : cuda_variants()) {
    if (v->family != "overlap") continue;
    ++forms;
    const Params& p = v->quick_sizes.at(0);
    for (const WorkPhase& ph : v->work.phases(p))
      if (!ph.ceiling.empty()) EXPECT_TRUE(ceilings.count(ph.ceiling)) << v->base_name() << ": " << ph.ceiling;
    const std::string& link = v->work.pipeline_link();
    if (v->variant == "serial") {
      EXPECT_EQ(link, "") << v->base_name();
    } else {
      EXPECT_EQ(link, "pcie_duplex_pinned") << v->base_name();
      EXPECT_TRUE(ceilings.count(link)) << link;
    }
  }
  EXPECT_EQ(forms, 4);
}

// The shared-memory ceiling is sized for 8 resident blocks per SM on 132 SMs: each block's
// shared memory and the 1 KiB the hardware reserves per block must fit in Hopper's 228 KiB, with
// 2048 threads at most (8 blocks of 32 KiB did not: 6 were resident, then a ragged second round).
TEST(CudaRegistry, TheSharedMemoryCeilingsBlocksAreAllResidentOnAHopperSm) {
  constexpr std::int64_t kSms = 132, kSmemKiB = 228, kReservedKiB = 1, kThreadsPerSm = 2048, kThreads = 256;
  int found = 0;
  for (const auto* v : cuda_variants()) {
    if (v->base_name() != "ceiling/smem_read/fp32") continue;
    ++found;
    std::vector<Params> all = v->sizes;
    all.insert(all.end(), v->quick_sizes.begin(), v->quick_sizes.end());
    for (const Params& p : all) {
      const std::int64_t blocks = param(p, "blocks"), kib = param(p, "kib_per_block");
      ASSERT_EQ(blocks % kSms, 0) << blocks;
      const std::int64_t per_sm = blocks / kSms;
      EXPECT_LE(per_sm * (kib + kReservedKiB), kSmemKiB) << per_sm << " blocks of " << kib << " KiB";
      EXPECT_LE(per_sm * kThreads, kThreadsPerSm) << per_sm << " blocks";
    }
  }
  EXPECT_EQ(found, 1);
}

// The graph form of the launch lesson really is one graph of one kernel node per step (it is
// replayed with one cudaGraphLaunch: kernels/launch/launch.cu).
namespace roofbench::launch {
std::size_t graph_form_kernel_nodes(const Params& p);
}
TEST(CudaLaunch, TheGraphFormIsOneGraphOfOneKernelNodePerStep) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": the graph is captured on a GPU";
  for (std::int64_t ops : {1, 7, 1000})
    EXPECT_EQ(roofbench::launch::graph_form_kernel_nodes(Params{{"n", 1024}, {"ops", ops}}),
              static_cast<std::size_t>(ops));
}
