// The FMA ceilings' chains (kernels/ceilings/fma_chain.h) move at every step of every size the
// ceilings run at, so their exact checks count every step; the old contractions, which stalled,
// would be refused; the 16-bit model that stands for the GPU's HFMA2 does not round in FP32.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "bench/registry.h"
#include "kernels/ceilings/fma_chain.h"

using namespace roofbench;
using namespace roofbench::ceilings;

namespace {

constexpr Precision kAll[] = {Precision::fp64, Precision::fp32, Precision::fp16, Precision::bf16};

bool is_fma_ceiling(const Variant& v) {
  return v.family == "ceiling" && v.variant == to_string(v.precision) + "_fma";
}

// The fewest steps any of `chains` chains moved, from the starts the ceiling uses.
std::int64_t fewest_moved(const Variant& v, std::int64_t iters) {
  std::int64_t fewest = iters;
  if (v.backend == Backend::cuda) {
    for (int r = 0; r < 8; ++r)
      fewest = std::min(fewest, gpu_fma_chain(v.precision).run(gpu_fma_chain_start(r), iters).moved);
  } else {
    // The widest CPU kernel has 12 chains; the scalar one 8.
    for (int r = 0; r < 12; ++r) {
      const double start = v.precision == Precision::fp32 ? static_cast<double>(cpu_fma_chain_start<float>(r))
                                                          : cpu_fma_chain_start<double>(r);
      fewest = std::min(fewest, cpu_fma_chain(v.precision).run(start, iters).moved);
    }
  }
  return fewest;
}

}  // namespace

TEST(FmaChains, EveryChainMovesAtEveryStepOfEveryRegisteredSize) {
  std::set<std::string> seen;
  for (const auto& v : registry()) {
    if (!is_fma_ceiling(v)) continue;
    seen.insert(v.base_name() + (v.backend == Backend::cuda ? " (cuda)" : " (cpu)"));
    for (const auto* sizes : {&v.sizes, &v.quick_sizes, &v.test_sizes})
      for (const auto& p : *sizes) {
        const std::int64_t iters = param(p, "iters");
        EXPECT_EQ(fewest_moved(v, iters), iters) << v.name(p) << ": a chain stops moving, so its check would not "
                                                 << "count every step";
      }
  }
  std::set<std::string> expected = {"ceiling/fp32_fma/fp32 (cpu)", "ceiling/fp64_fma/fp64 (cpu)"};
#ifdef ROOFBENCH_HAVE_CUDA
  for (const char* n :
       {"ceiling/fp32_fma/fp32", "ceiling/fp64_fma/fp64", "ceiling/fp16_fma/fp16", "ceiling/bf16_fma/bf16"})
    expected.insert(std::string(n) + " (cuda)");
#endif
  EXPECT_EQ(seen, expected);
}

TEST(FmaChains, EveryGpuThreadsSumCountsEveryStepOfEveryRegisteredSize) {
  int sizes = 0;
  for (const auto& v : registry()) {
    if (!is_fma_ceiling(v) || v.backend != Backend::cuda) continue;
    for (const auto* list : {&v.sizes, &v.quick_sizes, &v.test_sizes})
      for (const auto& p : *list) {
        ++sizes;
        EXPECT_EQ(gpu_fma_uncounted(v.precision, param(p, "iters")), "") << v.name(p);
      }
  }
#ifdef ROOFBENCH_HAVE_CUDA
  EXPECT_GE(sizes, 12);
#else
  EXPECT_EQ(sizes, 0);
#endif
  // The thread's sum is exact, so it grows with every step, in every type: no step count from 1 to
  // 512 gives the sum of another.
  for (const Precision p : kAll) {
    double last = gpu_fma_thread(p, 0).sum;
    EXPECT_EQ(last, 0) << to_string(p);
    for (std::int64_t n = 1; n <= 512; ++n) {
      const double sum = gpu_fma_thread(p, n).sum;
      ASSERT_GT(sum, last) << to_string(p) << " at " << n;
      last = sum;
    }
  }
  EXPECT_NE(gpu_fma_uncounted(Precision::fp16, 13100).find("stops moving"), std::string::npos);
}

TEST(FmaChains, OneStepFewerEndsElsewhere) {
  for (const Precision p : kAll) {
    const FmaChain gpu = gpu_fma_chain(p);
    EXPECT_NE(gpu.run(0.5, 4096).x, gpu.run(0.5, 4095).x) << to_string(p);
    EXPECT_NE(gpu.run(0.5, 4096).x, gpu.run(0.5, 4097).x) << to_string(p);
    EXPECT_EQ(gpu.run(0.5, 0).x, 0.5) << to_string(p);
  }
  for (const Precision p : {Precision::fp32, Precision::fp64}) {
    const FmaChain cpu = cpu_fma_chain(p);
    EXPECT_NE(cpu.run(0.5, 1 << 20).x, cpu.run(0.5, (1 << 20) - 1).x) << to_string(p);
  }
}

TEST(FmaChains, GrowthFactorIsTheSmallestValueAboveOneOfItsType) {
  EXPECT_EQ(growth_factor(Precision::fp64), std::nextafter(1.0, 2.0));
  EXPECT_EQ(growth_factor(Precision::fp32), static_cast<double>(std::nextafter(1.0f, 2.0f)));
  EXPECT_EQ(static_cast<double>(half_t(growth_factor(Precision::fp16))), 1.0 + 1.0 / 1024);
  EXPECT_EQ(static_cast<double>(bf16_t(growth_factor(Precision::bf16))), 1.0 + 1.0 / 128);
  // One unit less rounds back to 1: nothing between 1 and the factor in that type.
  EXPECT_EQ(static_cast<double>(half_t(1.0 + 1.0 / 4096)), 1.0);
  EXPECT_EQ(static_cast<double>(bf16_t(1.0 + 1.0 / 512)), 1.0);
}

TEST(FmaChains, TheOldContractionsStallAndWouldBeRefused) {
  // The coefficients the ceilings used before, as each type holds them: the stall count is what
  // verify() compares with iters.
  const FmaChain bf16_old{Precision::bf16, static_cast<double>(bf16_t(0.999)), static_cast<double>(bf16_t(1e-3))};
  EXPECT_EQ(bf16_old.run(0.5, 100).moved, 0) << "BF16: 0.999 rounds to 1 and +1e-3 rounds away";
  const FmaChain fp16_old{Precision::fp16, static_cast<double>(half_t(0.999)), static_cast<double>(half_t(1e-3))};
  const std::int64_t fp16_moved = fp16_old.run(0.5, 4096).moved;
  EXPECT_GT(fp16_moved, 100);
  EXPECT_LT(fp16_moved, 4096);
  const FmaChain cpu_fp32_old{Precision::fp32, static_cast<float>(0.999999), static_cast<float>(1e-4)};
  const std::int64_t fp32_moved = cpu_fp32_old.run(0.5, std::int64_t{1} << 22).moved;
  EXPECT_GT(fp32_moved, std::int64_t{1} << 21);
  EXPECT_LT(fp32_moved, std::int64_t{1} << 22);
}

TEST(FmaChains, GrowingChainsStopOnlyAtOverflow) {
  // From 0.5 the 16-bit chains move until x overflows, thousands of steps past the run's 4096;
  // once infinite they count as stopped.
  for (const Precision p : {Precision::fp16, Precision::bf16}) {
    const FmaChain::End e = gpu_fma_chain(p).run(0.5, 20000);
    EXPECT_GT(e.moved, 12000) << to_string(p);
    EXPECT_LT(e.moved, 20000) << to_string(p);
    EXPECT_TRUE(std::isinf(e.x)) << to_string(p);
  }
}

TEST(FmaChains, SixteenBitModelDoesNotRoundInFp32) {
  // The model rounds x·a + 0 once in FP32 and once to the 16-bit type; the device rounds once. They
  // agree because the FP32 rounding never happens: x·a, exact in FP64, is exact in FP32 at every
  // step until the chain overflows.
  for (const Precision p : {Precision::fp16, Precision::bf16}) {
    const FmaChain c = gpu_fma_chain(p);
    double x = gpu_fma_chain_start(7);
    int steps = 0;
    for (; std::isfinite(x) && steps < 20000; ++steps) {
      const double product = x * c.a;
      ASSERT_EQ(static_cast<double>(static_cast<float>(product)), product) << to_string(p) << " step " << steps;
      x = c.step(x);
    }
    EXPECT_GT(steps, 12000) << to_string(p);
  }
}
