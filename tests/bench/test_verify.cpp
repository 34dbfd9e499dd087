// Verification on every core gives what checking one element after another gives: the same
// counts and the same first mismatches, in element order (roofbench/verify.h).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "roofbench/half.h"
#include "roofbench/verify.h"

using namespace roofbench;

namespace {

// got[i] = i, except at `bad` indices; the reference is i.
Verification serial(const std::vector<double>& got) {
  Checker chk(tolerance_for(Precision::fp32), "test");
  for (std::size_t i = 0; i < got.size(); ++i) chk.check(got[i], static_cast<double>(i), static_cast<std::int64_t>(i));
  return chk.finish();
}

std::vector<double> with_mismatches(std::size_t n, const std::vector<std::size_t>& bad) {
  std::vector<double> got(n);
  for (std::size_t i = 0; i < n; ++i) got[i] = static_cast<double>(i);
  for (std::size_t b : bad) got[b] = b % 2 ? std::nan("") : got[b] + 1000;
  return got;
}

}  // namespace

TEST(CheckAll, GivesTheSameOutcomeAsCheckingInOrder) {
  // Mismatches spread over many chunks, more than the ten a report names, in no thread's order.
  const std::vector<std::size_t> bad = {3, 16383, 16384, 40000, 70001, 70002, 99999, 120000, 150001, 160000, 199999, 200001};
  const std::vector<double> got = with_mismatches(250000, bad);
  const Verification want = serial(got);
  omp_set_num_threads(4);  // more threads than this machine may have cores: chunks finish out of order
  const Verification par = check_all(tolerance_for(Precision::fp32), "test", static_cast<std::int64_t>(got.size()),
                                     [&](Checker& chk, std::int64_t i) { chk.check(got[i], static_cast<double>(i), i); });
  EXPECT_EQ(par.checked, 250000);
  EXPECT_EQ(par.mismatches, static_cast<std::int64_t>(bad.size()));
  EXPECT_FALSE(par.ok);
  EXPECT_EQ(par.detail, want.detail);
  EXPECT_EQ(par.detail.rfind("[3]: got nan, expected 3", 0), 0u) << par.detail;  // the first, first
  EXPECT_NE(par.detail.find("and 2 more"), std::string::npos) << par.detail;
  EXPECT_DOUBLE_EQ(par.max_abs_error, want.max_abs_error);
}

TEST(CheckAll, PassesWhenEveryElementMatchesAndFailsWhenNoneIsChecked) {
  const std::vector<double> got = with_mismatches(70000, {});
  const Verification ok = check_all(tolerance_for(Precision::fp32), "test", 70000,
                                    [&](Checker& chk, std::int64_t i) { chk.check(got[i], static_cast<double>(i), i); });
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.checked, 70000);
  EXPECT_EQ(ok.detail, "");
  const Verification none = check_all(tolerance_for(Precision::fp32), "test", 0, [](Checker&, std::int64_t) {});
  EXPECT_FALSE(none.ok);
  EXPECT_EQ(none.detail, "nothing was checked");
}

TEST(Checker, FailRecordsAMismatchThatNeedsNoComparison) {
  Checker chk(Tolerance{0, 0}, "test");
  chk.check(1.0, 1.0, 0);
  chk.fail([] { return std::string("[1]: the reference cannot judge it"); });
  chk.check(2.0, 2.0, 2);
  const Verification v = chk.finish();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.checked, 3);
  EXPECT_EQ(v.mismatches, 1);
  EXPECT_EQ(v.detail, "[1]: the reference cannot judge it");
}

TEST(CheckAll, SharesTheElementsOutOverTheThreads) {
  omp_set_num_threads(4);
  std::vector<int> by_thread(4, 0);
  check_all(Tolerance{0, 0}, "test", 1 << 18, [&](Checker& chk, std::int64_t i) {
#pragma omp atomic
    ++by_thread[static_cast<std::size_t>(omp_get_thread_num())];
    chk.check(0.0, 0.0, i);
  });
  int busy = 0;
  for (int n : by_thread) busy += n > 0;
  EXPECT_GT(busy, 1) << "the references ran on one thread";
}

// Few elements with long references (a GEMM's sampled entries) go to every thread in smaller
// tasks, with the same outcome as in the default ones.
TEST(CheckAll, SmallerTasksShareFewElementsOutWithTheSameOutcome) {
  omp_set_num_threads(4);
  const std::vector<double> got = with_mismatches(64, {5, 40});
  std::vector<int> by_thread(4, 0);
  auto one = [&](Checker& chk, std::int64_t i) {
#pragma omp atomic
    ++by_thread[static_cast<std::size_t>(omp_get_thread_num())];
    chk.check(got[i], static_cast<double>(i), i);
  };
  const Verification small = check_all(tolerance_for(Precision::fp32), "test", 64, one, 4);
  int busy = 0;
  for (int n : by_thread) busy += n > 0;
  EXPECT_GT(busy, 1) << "64 elements in tasks of 4 ran on one thread";
  const Verification whole = check_all(tolerance_for(Precision::fp32), "test", 64, one);
  EXPECT_EQ(small.checked, 64);
  EXPECT_EQ(small.mismatches, 2);
  EXPECT_EQ(small.detail, whole.detail);
  EXPECT_EQ(check_all(tolerance_for(Precision::fp32), "test", 64, one, 0).checked, 64);  // 0: tasks of 1
}

// Each format's unit roundoff, which scales every tolerance, is half the gap between 1 and the next
// number the format holds, found here by storing 1 + 2^-k (the 16-bit formats through the suite's
// own round-to-nearest conversions).
namespace {
template <class T>
double gap_above_one() {
  double g = 1;
  while (static_cast<double>(T(1.0 + g / 2)) != 1.0) g /= 2;
  return g;
}
}  // namespace

TEST(Tolerance, TheUnitRoundoffIsHalfTheGapAboveOne) {
  EXPECT_EQ(unit_roundoff(Precision::fp64), gap_above_one<double>() / 2);
  EXPECT_EQ(unit_roundoff(Precision::fp32), gap_above_one<float>() / 2);
  EXPECT_EQ(unit_roundoff(Precision::fp16), gap_above_one<half_t>() / 2);
  EXPECT_EQ(unit_roundoff(Precision::bf16), gap_above_one<bf16_t>() / 2);
}
