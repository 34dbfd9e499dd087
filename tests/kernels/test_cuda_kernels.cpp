// Every CUDA variant in the registry against its reference at its test sizes (awkward shapes
// included). Label `gpu`: without a GPU every test is reported as skipped, with the reason.
#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "bench/device.h"
#include "bench/harness.h"
#include "tests/testing.h"

using namespace roofbench;

namespace {
std::vector<const Variant*> cuda_variants() {
  return roofbench::testing::variants_of(Backend::cuda);
}
}  // namespace

class CudaVariant : public ::testing::TestWithParam<const Variant*> {};

TEST_P(CudaVariant, MatchesItsReferenceAtEveryTestSize) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU visible: CUDA kernels are not checked on this machine";
  const Variant& v = *GetParam();
  auto dev = make_cuda_device(0);
  for (const auto& p : v.test_sizes) {
    auto inst = v.make(p);
    const Verification r = prepare_and_verify(*dev, *inst, 1234);
    EXPECT_TRUE(r.ok) << v.name(p) << ": " << r.detail;
    EXPECT_GT(r.checked, 0) << v.name(p);
  }
}

TEST_P(CudaVariant, IsMeasuredAfterVerification) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA GPU visible: CUDA kernels are not timed on this machine";
  const Variant& v = *GetParam();
  auto dev = make_cuda_device(0);
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

TEST(CudaRegistry, HasTheFoundationFamilies) {
  std::set<std::string> names;
  for (const auto* v : cuda_variants()) names.insert(v->base_name());
  for (const char* n :
       {"gemm/naive/fp32", "gemm/smem_tiled/fp32", "stream/saxpy/fp32", "ceiling/dram_read/fp32",
        "ceiling/dram_write/fp32", "ceiling/dram_copy/fp32", "ceiling/dram_triad/fp32", "ceiling/fp32_fma/fp32"})
    EXPECT_TRUE(names.count(n)) << n;
}
