// The host FP16/BF16 storage types: bit patterns and round-to-nearest-even at the edges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "roofbench/half.h"

using namespace roofbench;

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(0.125f), 0x3000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): rounds up.
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above a tie rounds up.
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  // The largest finite half's upper neighbour rounds to infinity from 65520 on.
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);
  // Subnormals: 1.5·2^-24 is a tie between 1 and 2 units: 2 (even).
  EXPECT_EQ(float_to_half_bits(1.5f * std::ldexp(1.0f, -24)), 0x0002);
}

TEST(Half, SpecialValuesSurvive) {
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
  EXPECT_TRUE(std::isinf(half_bits_to_float(0xfc00)));
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float f = half_bits_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half_bits(f), h) << std::hex << b;
  }
}

TEST(Bf16, KnownBitPatternsAndRounding) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(0.125f), 0x3e00);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0); 1 + 3·2^-8 rounds up to even.
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float f = bf16_bits_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16_bits(f), h) << std::hex << b;
  }
}

TEST(Half, StorageTypesConvertExplicitly) {
  EXPECT_EQ(static_cast<double>(half_t(0.1)), static_cast<double>(half_bits_to_float(float_to_half_bits(0.1f))));
  EXPECT_EQ(static_cast<double>(bf16_t(-3.0)), -3.0);
  EXPECT_EQ(precision_of<half_t>(), Precision::fp16);
  EXPECT_EQ(precision_of<bf16_t>(), Precision::bf16);
}
