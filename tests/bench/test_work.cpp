// Declared work as typed terms (roofbench/work.h): the FLOPs and bytes the rates use and the
// derivation results.json carries come from the same terms.
#include <gtest/gtest.h>

#include "roofbench/work.h"

using namespace roofbench;

TEST(Work, BytesAndFlopsAreTheTermsSummed) {
  const Count n = Count::param("n");
  const Work w = Work().read<float>("x", n).read<float>("y", n).write<float>("y = a·x + y", n).flops(2 * n, "a multiply and an add");
  const Params p = {{"n", 1000}};
  EXPECT_DOUBLE_EQ(w.bytes(p), 12000);
  EXPECT_DOUBLE_EQ(w.flops(p), 2000);
  EXPECT_EQ(w.derivation(), "reads x (n × 4 B), y (n × 4 B); writes y = a·x + y (n × 4 B): 12·n B; 2·n FLOPs (a multiply and an add)");
}

TEST(Work, TermsOverTheSameFactorsAddUpAndOthersStaySeparate) {
  const Count M = Count::param("M"), N = Count::param("N"), K = Count::param("K");
  const Work w = Work().read("A", M * K, Precision::fp16).read("B", K * N, Precision::fp16).write("C", M * N, Precision::fp32);
  EXPECT_NE(w.derivation().find(": 2·K·M + 2·K·N + 4·M·N B; no FLOPs counted"), std::string::npos) << w.derivation();
  const Work twice = Work().read<float>("x", Count::param("n")).read<float>("x again", Count::param("n"));
  EXPECT_NE(twice.derivation().find(": 8·n B"), std::string::npos) << twice.derivation();
}

TEST(Work, RepeatedReadsCountAsTrafficButTheHostMakesTheBufferOnce) {
  // A cache ceiling: one buffer of n floats, read `passes` times.
  const Work w = Work().read<float>("x", Count::param("n"), Count::param("passes"));
  const Params p = {{"n", 256}, {"passes", 100}};
  EXPECT_DOUBLE_EQ(w.bytes(p), 4.0 * 256 * 100);
  EXPECT_DOUBLE_EQ(w.host_bytes(p), 4.0 * 256);
  EXPECT_NE(w.derivation().find("x (n × 4 B, passes times): 4·n·passes B"), std::string::npos) << w.derivation();
}

TEST(Work, ConstantsKnownOnlyAtRunTimeAreNamed) {
  const Count c = Count::constant("threads", 8) * Count::param("kib") * 1024;
  EXPECT_DOUBLE_EQ(c.value({{"kib", 2}}), 8.0 * 2 * 1024);
  EXPECT_EQ(c.text(), "1024·kib·threads");
  EXPECT_THROW(c.value({{"n", 1}}), std::out_of_range);  // a parameter the size lacks
}
