#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "roofbench/splitmix.h"
#include "bench/stats.h"

using roofbench::quantile;
using roofbench::summarize;
using roofbench::paired_t;
using roofbench::PairedT;
using roofbench::student_t_quantile;
using roofbench::student_t_sf;

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

// Known values from scipy.stats.mannwhitneyu 1.10.1 (method "auto", two-sided).
TEST(MannWhitney, ExactSmallSamplesMatchScipy) {
  const auto r = roofbench::mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p, 0.004329004329004329, 1e-12);  // 2 / C(11, 5)

  const auto u = roofbench::mann_whitney({0.5, 2.5, 7.1, 3.3}, {1.2, 4.4, 6.6, 8.8, 9.9, 0.1, 5.5, 2.2, 3.9, 7.7, 11.0, 12.5});
  EXPECT_TRUE(u.exact);
  EXPECT_DOUBLE_EQ(u.u, 14);
  EXPECT_NEAR(u.p, 0.26153846153846155, 1e-12);

  // Eight a side is still exact in scipy's "auto" (the smaller sample <= 8): 2 / C(16, 8), where
  // the normal approximation would say about 0.0009.
  const auto eight = roofbench::mann_whitney({1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16});
  EXPECT_TRUE(eight.exact);
  EXPECT_NEAR(eight.p, 2.0 / 12870, 1e-15);
}

// The exact U tail against scipy.stats.mannwhitneyu(a, b, method="exact") of SciPy 1.10.1, to full
// precision: unequal sizes, a small sample against a large one, and mixed orders.
TEST(MannWhitney, ExactTailMatchesScipyToFullPrecision) {
  struct Case {
    std::vector<double> a, b;
    double p;
  };
  const std::vector<Case> cases = {
      {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}, 0.004329004329004329},
      {{3.1, 1.2, 7.7, 4.4}, {2.0, 5.5, 6.1, 8.3, 9.0, 0.7, 4.9}, 0.5272727272727272},
      {{1, 2, 3, 4, 5, 6, 7, 8}, {4.5, 9, 10, 11, 12, 13, 14, 15.5}, 0.0018648018648018648},
      {{1, 2, 3}, {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, 0.001129305477131564},
      {{5, 1, 9, 3, 7, 2}, {4, 8, 6, 10, 12, 11, 0.5}, 0.23426573426573427},
  };
  for (const Case& c : cases) {
    const auto r = roofbench::mann_whitney(c.a, c.b);
    EXPECT_TRUE(r.exact);
    EXPECT_NEAR(r.p, c.p, 1e-14 * c.p) << "sizes " << c.a.size() << " and " << c.b.size();
  }
}

TEST(MannWhitney, NormalApproximationMatchesScipy) {
  const auto r = roofbench::mann_whitney({1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8, 9.9, 10.5},
                                         {3.1, 4.1, 5.9, 6.2, 11.1, 12.2, 13.3, 14.4, 15.5, 16.6});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 25);
  EXPECT_NEAR(r.p, 0.06402210128302689, 1e-12);
}

TEST(MannWhitney, TiesUseMidranksAndTheTieCorrection) {
  const auto r = roofbench::mann_whitney({1, 2, 2, 3, 3, 3, 4}, {2, 3, 4, 4, 5, 5, 6});
  EXPECT_FALSE(r.exact);  // ties: no exact distribution
  EXPECT_DOUBLE_EQ(r.u, 8.5);
  EXPECT_NEAR(r.p, 0.043051432728945134, 1e-12);
}

TEST(MannWhitney, IsSymmetricInItsArguments) {
  const std::vector<double> a = {3, 9, 4, 1, 7}, b = {8, 2, 6, 10, 12, 11};
  const auto ab = roofbench::mann_whitney(a, b), ba = roofbench::mann_whitney(b, a);
  EXPECT_DOUBLE_EQ(ab.p, ba.p);
  EXPECT_DOUBLE_EQ(ab.u + ba.u, 30);  // U_a + U_b = n·m
}

TEST(MannWhitney, IdenticalSamplesAreNotDifferent) {
  EXPECT_DOUBLE_EQ(roofbench::mann_whitney({1, 1, 1}, {1, 1, 1, 1}).p, 1.0);
  EXPECT_THROW(roofbench::mann_whitney({}, {1}), std::invalid_argument);
}

TEST(MannWhitney, SmallestReachablePIsTwoOverTheBinomial) {
  EXPECT_NEAR(roofbench::min_two_sided_p(3, 3), 0.1, 1e-15);  // scipy: 3 vs 3 fully separated, p = 0.1
  EXPECT_DOUBLE_EQ(roofbench::mann_whitney({3, 1, 2}, {6, 5, 4}).p, 0.1);
  EXPECT_NEAR(roofbench::min_two_sided_p(5, 6), 2.0 / 462, 1e-15);
  EXPECT_LT(roofbench::min_two_sided_p(20, 20), 1e-10);
  EXPECT_DOUBLE_EQ(roofbench::min_two_sided_p(1, 1), 1.0);
}

TEST(BenjaminiHochberg, MatchesTheStepUpProcedure) {
  // Sorted p = 0.005, 0.01, 0.03, 0.04 times m/rank = 0.02, 0.02, 0.04, 0.04; the running minimum
  // from the largest down leaves them so: q = [0.02, 0.04, 0.04, 0.02] in the input order.
  const auto q = roofbench::benjamini_hochberg({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(q.size(), 4u);
  EXPECT_NEAR(q[0], 0.02, 1e-15);
  EXPECT_NEAR(q[1], 0.04, 1e-15);
  EXPECT_NEAR(q[2], 0.04, 1e-15);
  EXPECT_NEAR(q[3], 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(roofbench::benjamini_hochberg({0.9, 0.8})[0], 0.9);
  EXPECT_TRUE(roofbench::benjamini_hochberg({}).empty());
}

// The step-up's running minimum matters where a smaller p adjusts above a larger one:
// p = {0.02, 0.03}: 0.02 * 2 / 1 = 0.04 but 0.03 * 2 / 2 = 0.03, and q of the first is the
// minimum over the ranks above it, 0.03 (scipy.stats.false_discovery_control gives [0.03, 0.03]).
TEST(BenjaminiHochberg, TheRunningMinimumCarriesALargerPsAdjustmentDown) {
  const auto q = roofbench::benjamini_hochberg({0.02, 0.03});
  ASSERT_EQ(q.size(), 2u);
  EXPECT_DOUBLE_EQ(q[0], 0.03);
  EXPECT_DOUBLE_EQ(q[1], 0.03);
  // In either order, and with a third p that sets the minimum for both below it.
  const auto r = roofbench::benjamini_hochberg({0.03, 0.02, 0.035});
  EXPECT_DOUBLE_EQ(r[0], 0.035);
  EXPECT_DOUBLE_EQ(r[1], 0.035);
  EXPECT_DOUBLE_EQ(r[2], 0.035);
}

TEST(Bootstrap, IntervalHoldsTheTrueRatioAndIsReproducible) {
  std::vector<double> base, fresh;
  std::uint64_t s = 7;
  for (int i = 0; i < 200; ++i) {
    const double noise = 1 + 0.01 * (static_cast<double>(roofbench::splitmix64(s) >> 11) * 0x1.0p-53 - 0.5);
    base.push_back(1.0 * noise);
    fresh.push_back(1.1 * noise);
  }
  const auto ci = roofbench::bootstrap_median_ratio(base, fresh, 0.95, 2000, 1);
  EXPECT_LT(ci.lo, 1.1);
  EXPECT_GT(ci.hi, 1.1);
  EXPECT_GT(ci.lo, 1.09);  // ±0.5% noise: the interval is narrow
  EXPECT_LT(ci.hi, 1.11);
  const auto again = roofbench::bootstrap_median_ratio(base, fresh, 0.95, 2000, 1);
  EXPECT_DOUBLE_EQ(ci.lo, again.lo);
  EXPECT_DOUBLE_EQ(ci.hi, again.hi);
  EXPECT_THROW(roofbench::bootstrap_median_ratio({}, fresh, 0.95, 100, 1), std::invalid_argument);
}

// Each resample's median is one of the sample's own values when the count is odd: resamples of
// {1..5} have median 5 (three or more 5s) 5.8% of the time and median 1 as often, so a 95%
// interval over 2000 resamples ends at exactly 1 and 5 (against a constant base). A median that
// averaged two middle values of an odd count would end near 1.5 and 4.5.
TEST(Bootstrap, ResampledMediansOfAnOddCountAreSampleValues) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const auto ci = roofbench::bootstrap_median_ratio({1, 1, 1, 1, 1}, {1, 2, 3, 4, 5}, 0.95, 2000, seed);
    EXPECT_EQ(ci.lo, 1.0) << seed;
    EXPECT_EQ(ci.hi, 5.0) << seed;
  }
}

// The resampled median drawn from order statistics has the bootstrap's own distribution. Odd n:
// P(median <= v_k) = P(Binomial(n, (k+1)/n) >= (n+1)/2), exactly; each atom's share over 400,000
// draws within 5 standard errors of it. Even n: against resamples drawn one value at a time.
TEST(Bootstrap, ResampledMedianHasTheBootstrapDistribution) {
  const int draws = 400000;
  {
    const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7};
    const int n = 7, m = 4;
    std::map<double, int> seen;
    std::uint64_t state = 11;
    for (int i = 0; i < draws; ++i) ++seen[roofbench::resampled_median(v, state)];
    auto binom_sf = [](int n, double p, int m) {  // P(Bin(n, p) >= m)
      double s = 0;
      for (int j = m; j <= n; ++j) s += std::tgamma(n + 1.0) / (std::tgamma(j + 1.0) * std::tgamma(n - j + 1.0)) *
                                        std::pow(p, j) * std::pow(1 - p, n - j);
      return s;
    };
    double below = 0;
    for (int k = 0; k < n; ++k) {
      const double cdf = binom_sf(n, (k + 1.0) / n, m), p = cdf - below;
      below = cdf;
      const double share = seen[v[k]] / static_cast<double>(draws);
      EXPECT_NEAR(share, p, 5 * std::sqrt(p * (1 - p) / draws) + 1e-9) << "median " << v[k];
    }
    EXPECT_EQ(seen.size(), 7u);  // every value, and nothing else
  }
  {
    const std::vector<double> v = {1, 2, 4, 8, 16, 32};  // every pair has its own mean
    std::map<double, int> fast, slow;
    std::uint64_t a = 12, b = 13;
    std::vector<double> scratch(v.size());
    for (int i = 0; i < draws; ++i) {
      ++fast[roofbench::resampled_median(v, a)];
      for (auto& x : scratch) x = v[roofbench::splitmix64(b) % v.size()];
      std::sort(scratch.begin(), scratch.end());
      ++slow[0.5 * (scratch[2] + scratch[3])];
    }
    for (const auto& [median, count] : slow) {
      const double p = count / static_cast<double>(draws), q = fast[median] / static_cast<double>(draws);
      EXPECT_NEAR(q, p, 5 * std::sqrt(2 * p * (1 - p) / draws) + 1e-9) << "median " << median;
    }
    for (const auto& [median, count] : fast) EXPECT_TRUE(slow.count(median)) << "median " << median << " cannot occur";
  }
}

// Reference values from scipy.stats (t.sf, t.ppf, ttest_1samp) and the Cauchy distribution (df 1).
TEST(PairedT, StudentTDistributionMatchesKnownValues) {
  EXPECT_NEAR(student_t_sf(1.0, 1), 0.25, 1e-12);  // Cauchy: 1/2 - atan(1)/pi
  EXPECT_NEAR(student_t_sf(2.0, 5), 0.0509697, 1e-6);
  EXPECT_NEAR(student_t_sf(-2.0, 5), 1 - 0.0509697, 1e-6);
  EXPECT_NEAR(student_t_sf(0.0, 7), 0.5, 1e-12);
  EXPECT_NEAR(student_t_quantile(0.025, 10), 2.2281389, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.025, 1), 12.7062047, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.025, 1e6), 1.959966, 1e-4);  // the normal's, far out
  EXPECT_THROW(student_t_sf(1, 0), std::invalid_argument);
}

// Reference values from SciPy 1.10.1 (Debian's python3-scipy): scipy.stats.t.isf and t.sf. SciPy's
// own t quantile (Cephes' stdtri) holds 8 to 11 digits (at df 3, tail 0.005, its t is 1.7e-9 off
// the closed form below), so these hold to 1e-8 relative; the closed forms hold to 1e-12. Together they hold the calls' argument order
// and tails (upper, not lower), far into the tail, and at a fractional df.
TEST(PairedT, StudentTQuantileAndTailMatchScipy) {
  struct Q {
    double tail, df, t;
  };
  for (const Q& q : {Q{0.025, 10, 2.2281388519649385}, Q{0.025, 1, 12.706204736432102}, Q{0.005, 3, 5.840909299756432},
                     Q{0.05, 29, 1.6991270265334977}, Q{0.1, 2.5, 1.7302509288071768}, Q{1e-6, 4, 41.577854150453575}}) {
    EXPECT_NEAR(student_t_quantile(q.tail, q.df), q.t, 1e-8 * q.t) << "tail " << q.tail << ", df " << q.df;
    EXPECT_NEAR(student_t_sf(q.t, q.df), q.tail, 1e-8 * q.tail) << "t " << q.t << ", df " << q.df;
  }
  EXPECT_NEAR(student_t_sf(3.5, 7), 0.004996520440942772, 1e-12);
  EXPECT_NEAR(student_t_sf(-1.3, 12), 0.8909914144582428, 1e-12);
  EXPECT_NEAR(student_t_sf(10, 2), 0.004926228511662846, 1e-12);
  EXPECT_NEAR(student_t_sf(40, 30) / 6.863022597203181e-28, 1.0, 1e-9);  // relative: far in the tail
  EXPECT_THROW(student_t_quantile(0, 5), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1, 5), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.1, -1), std::invalid_argument);
}

// Closed forms. df 1 is the Cauchy: P(T > t) = 1/2 - atan(t)/pi, so the t with upper tail p is
// cot(pi p). df 2: P(T > t) = 1/2 - t / (2 sqrt(2 + t^2)), so t = (1 - 2p) / sqrt(2p (1 - p)).
// df 3: P(T > t) = 1/2 - (atan(t/sqrt 3) + (t/sqrt 3) / (1 + t^2/3)) / pi.
TEST(PairedT, StudentTMatchesItsClosedFormsToFullPrecision) {
  const double pi = std::acos(-1.0);
  for (double p : {0.4, 0.1, 0.025, 0.005, 1e-4, 1e-8}) {
    const double cauchy = 1 / std::tan(pi * p);
    EXPECT_NEAR(student_t_quantile(p, 1), cauchy, 1e-13 * cauchy) << "df 1, tail " << p;
    EXPECT_NEAR(student_t_sf(cauchy, 1), p, 1e-13 * p) << "df 1, t " << cauchy;
    const double two = (1 - 2 * p) / std::sqrt(2 * p * (1 - p));
    EXPECT_NEAR(student_t_quantile(p, 2), two, 1e-13 * two) << "df 2, tail " << p;
    EXPECT_NEAR(student_t_sf(two, 2), p, 1e-12 * p) << "df 2, t " << two;
  }
  for (double t : {0.5, 2.0, 5.840909309733357, 30.0}) {
    const double x = t / std::sqrt(3.0), three = 0.5 - (std::atan(x) + x / (1 + x * x)) / pi;
    EXPECT_NEAR(student_t_sf(t, 3), three, 1e-12 * three) << "df 3, t " << t;
    EXPECT_NEAR(student_t_quantile(three, 3), t, 1e-12 * t) << "df 3, tail " << three;
  }
}

TEST(PairedT, OneSampleTestOfTheDifferences) {
  const PairedT t = paired_t({1, 2, 3, 4, 5}, 0.95);  // t = 4.2426 with 4 df
  EXPECT_EQ(t.n, 5);
  EXPECT_DOUBLE_EQ(t.mean, 3);
  EXPECT_NEAR(t.sd, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(t.p, 0.0132356, 1e-6);
  const double half = 2.7764451 * std::sqrt(2.5 / 5);  // t.ppf(0.975, 4) x se
  EXPECT_NEAR(t.mean_ci.lo, 3 - half, 1e-5);
  EXPECT_NEAR(t.mean_ci.hi, 3 + half, 1e-5);
  // Symmetric differences: no evidence either way.
  EXPECT_NEAR(paired_t({-1, 1, -2, 2}, 0.95).p, 1.0, 1e-12);
  // Every round the same change: certain (p 0) and a zero-width interval.
  const PairedT same = paired_t({0.1, 0.1, 0.1}, 0.95);
  EXPECT_LT(same.p, 1e-12);
  EXPECT_NEAR(same.mean_ci.lo, 0.1, 1e-12);
  // Exactly equal differences (no rounding spread: 0.5 is exact), where se is 0: certain when
  // they are not zero, no evidence when they are.
  EXPECT_EQ(paired_t({0.5, 0.5, 0.5, 0.5}, 0.95).p, 0.0);
  EXPECT_EQ(paired_t({0.0, 0.0, 0.0}, 0.95).p, 1.0);
  // One round: no spread to judge by.
  EXPECT_EQ(paired_t({0.3}, 0.95).p, 1.0);
  EXPECT_THROW(paired_t({}, 0.95), std::invalid_argument);
}
