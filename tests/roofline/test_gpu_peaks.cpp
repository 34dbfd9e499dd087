// Theoretical GPU peaks: SMs x FLOP/clock/SM x the measured clock.
#include <gtest/gtest.h>

#include "roofline/gpu_peaks.h"
#include "tests/testing.h"

using namespace roofbench;

namespace {
nlohmann::json h200() {
  return {{"kind", "cuda"}, {"name", "NVIDIA H200"}, {"compute_capability", "9.0"}, {"sm_count", 132}};
}
Ceiling compute(Precision p, Unit unit) {
  Ceiling c = roofbench::testing::compute_ceiling("x", p, 1.0);
  c.unit = unit;
  return c;
}
}  // namespace

TEST(GpuPeaks, HopperRatesPerSmPerClock) {
  EXPECT_EQ(gpu_flops_per_clock_per_sm("9.0", Precision::fp32, Unit::simt), 256.0);
  EXPECT_EQ(gpu_flops_per_clock_per_sm("9.0", Precision::fp64, Unit::simt), 128.0);
  EXPECT_EQ(gpu_flops_per_clock_per_sm("9.0", Precision::fp16, Unit::simt), 512.0);
  EXPECT_EQ(gpu_flops_per_clock_per_sm("9.0", Precision::bf16, Unit::tensor), 4096.0);
  EXPECT_FALSE(gpu_flops_per_clock_per_sm("7.5", Precision::fp32, Unit::simt));
  EXPECT_FALSE(gpu_flops_per_clock_per_sm("9.0", Precision::fp32, Unit::tensor));
}

TEST(GpuPeaks, H200Fp32AtBoostClockIsTheReferencePeak) {
  // ../shared/reference/kernels.md: 132 SMs x 1.98 GHz gives 66.9 TFLOP/s FP32, 989.4 dense BF16
  // at the 1.83 GHz tensor clock.
  const auto fp32 = gpu_theoretical(h200(), compute(Precision::fp32, Unit::simt), 1.98e9);
  ASSERT_TRUE(fp32);
  EXPECT_NEAR(fp32->value, 66.9e12, 0.05e12);
  EXPECT_NE(fp32->source.find("132 SMs"), std::string::npos) << fp32->source;
  EXPECT_NE(fp32->source.find("1.980 GHz"), std::string::npos) << fp32->source;
  const auto bf16 = gpu_theoretical(h200(), compute(Precision::bf16, Unit::tensor), 1.83e9);
  ASSERT_TRUE(bf16);
  EXPECT_NEAR(bf16->value, 989.4e12, 0.1e12);
}

TEST(GpuPeaks, NothingWithoutTheFactsItNeeds) {
  EXPECT_FALSE(gpu_theoretical(h200(), compute(Precision::fp32, Unit::simt), 0));
  nlohmann::json no_sms = h200();
  no_sms.erase("sm_count");
  EXPECT_FALSE(gpu_theoretical(no_sms, compute(Precision::fp32, Unit::simt), 1.98e9));
  Ceiling bw = roofbench::testing::bandwidth_ceiling("dram_copy", 1e12);
  EXPECT_FALSE(gpu_theoretical(h200(), bw, 1.98e9));
}

// The shared-memory ceiling's reference: 128 bytes per clock per SM (32 four-byte banks), the
// issue's "near 128 B/clk/SM" as a ratio in the ceilings table. No other memory level has one.
TEST(GpuPeaks, SharedMemoryMovesHundredTwentyEightBytesPerClockPerSm) {
  Ceiling smem = roofbench::testing::bandwidth_ceiling("smem_read", 30e12);
  smem.level = Level::smem;
  const auto t = gpu_theoretical(h200(), smem, 1.98e9);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->value, 132.0 * 128 * 1.98e9);  // 33.5 TB/s
  EXPECT_NE(t->source.find("128 B/clock/SM"), std::string::npos) << t->source;
  EXPECT_NE(t->source.find("1.980 GHz"), std::string::npos) << t->source;
  nlohmann::json blackwell = h200();
  blackwell["compute_capability"] = "10.0";  // not in the range the guide's figure is for
  EXPECT_FALSE(gpu_theoretical(blackwell, smem, 1.98e9));
  Ceiling l2 = roofbench::testing::bandwidth_ceiling("l2_read", 10e12);
  l2.level = Level::l2;
  EXPECT_FALSE(gpu_theoretical(h200(), l2, 1.98e9));
}
