#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "bench/stats.h"

using roofbench::quantile;
using roofbench::summarize;

TEST(Stats, OddCountMedianIsTheMiddleValue) {
  const auto s = summarize({5, 1, 3});
  EXPECT_EQ(s.n, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
}

TEST(Stats, EvenCountMedianIsTheMeanOfTheTwoMiddleValues) {
  // The off-by-one that gpu-benches' MeasurementSeries has: data[n/2] and data[n/2+1].
  EXPECT_DOUBLE_EQ(summarize({4, 1, 3, 2}).median, 2.5);
}

TEST(Stats, QuartilesInterpolateBetweenClosestRanks) {
  // numpy.percentile([1..8], [25, 75]) == [2.75, 6.25]
  const auto s = summarize({8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.q1, 2.75);
  EXPECT_DOUBLE_EQ(s.q3, 6.25);
  EXPECT_DOUBLE_EQ(s.iqr(), 3.5);
  EXPECT_DOUBLE_EQ(s.rel_iqr(), 3.5 / 4.5);
}

TEST(Stats, SampleStandardDeviationUsesNMinusOne) {
  // {2,4,4,4,5,5,7,9}: sum of squared deviations 32, n-1 = 7.
  EXPECT_NEAR(summarize({2, 4, 4, 4, 5, 5, 7, 9}).stddev, std::sqrt(32.0 / 7.0), 1e-12);
}

TEST(Stats, SingleSampleHasZeroSpread) {
  const auto s = summarize({0.25});
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_DOUBLE_EQ(s.iqr(), 0);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(Stats, EmptyInputIsAnError) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(quantile({}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile({1.0}, 1.5), std::invalid_argument);
}

TEST(Stats, QuantileEndpointsAreMinAndMax) {
  EXPECT_DOUBLE_EQ(quantile({3, 9, 1}, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile({3, 9, 1}, 1.0), 9);
}
