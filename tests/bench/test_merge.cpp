// roofbench merge: the parts of one machine's run of one build become one results file; parts of
// another machine or build, and a benchmark measured twice, are refused (bench/merge.h).
#include <gtest/gtest.h>

#include "bench/merge.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

Results part(const std::vector<std::string>& kernels) {
  Results r = sample_results();
  for (const auto& k : kernels) r.benchmarks.push_back(kernel(k, 1e9, 1e6, 1e-3));
  return r;
}

std::string merge_error(const std::vector<Results>& parts) {
  try {
    merge_results(parts, {"a.json", "b.json", "c.json"});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Merge, JoinsThePartsBenchmarksAndTakesIdenticalCeilingsOnce) {
  const Results m = merge_results({part({"a"}), part({"b", "c"})}, {"a.json", "b.json"});
  ASSERT_EQ(m.benchmarks.size(), 3u);
  EXPECT_EQ(m.benchmarks[0].variant, "a");
  EXPECT_EQ(m.benchmarks[2].variant, "c");
  EXPECT_EQ(m.ceilings.size(), sample_results().ceilings.size());  // --ceilings-from copies: one each
  EXPECT_FALSE(m.partial);
  ASSERT_EQ(m.provenance.at("merged_from").size(), 2u);
  EXPECT_EQ(m.provenance["merged_from"][1].at("path"), "b.json");
}

TEST(Merge, EachPartKeepsItsWallTimeAndHostContentionAndTheMergeClaimsNone) {
  Results a = part({"a"}), b = part({"b"});
  a.provenance["wall_s"] = 12.5;
  b.provenance["wall_s"] = 40.0;
  a.provenance["host_contention"] = {{"steal_s", 0.5}, {"steal_share", 0.02}};
  b.provenance["host_contention"] = {{"steal_s", 4.0}, {"steal_share", 0.05}};
  const Results m = merge_results({a, b}, {"a.json", "b.json"});
  EXPECT_FALSE(m.provenance.contains("wall_s")) << m.provenance.dump();
  EXPECT_FALSE(m.provenance.contains("host_contention")) << m.provenance.dump();
  EXPECT_EQ(m.provenance["merged_from"][0].at("wall_s"), 12.5);
  EXPECT_EQ(m.provenance["merged_from"][1].at("wall_s"), 40.0);
  EXPECT_EQ(m.provenance["merged_from"][1].at("host_contention").at("steal_s"), 4.0);
  // A part written before wall_s was recorded has none.
  const Results old = merge_results({part({"a"}), b}, {"a.json", "b.json"});
  EXPECT_FALSE(old.provenance["merged_from"][0].contains("wall_s"));
  EXPECT_FALSE(old.provenance["merged_from"][0].contains("host_contention"));
}

TEST(Merge, ACeilingMeasuredInTwoPartsKeepsTheBetterValueAndSaysSo) {
  Results a = part({"a"}), b = part({"b"});
  b.ceilings[0].value = b.ceilings[0].value_start = a.ceilings[0].value * 1.2;
  b.ceilings[0].measurement = measurement_of({0.5});
  const Results m = merge_results({a, b}, {"a.json", "b.json"});
  ASSERT_EQ(m.ceilings.size(), a.ceilings.size());
  EXPECT_DOUBLE_EQ(m.ceilings[0].value, a.ceilings[0].value * 1.2);
  ASSERT_FALSE(m.ceilings[0].warnings.empty());
  EXPECT_NE(m.ceilings[0].warnings.back().find("also measured in another part"), std::string::npos);
}

TEST(Merge, APartialPartMakesAPartialMerge) {
  Results b = part({"b"});
  b.partial = Partial{1, 5, "stopped by SIGTERM"};
  const Results m = merge_results({part({"a"}), b}, {"a.json", "b.json"});
  ASSERT_TRUE(m.partial);
  EXPECT_EQ(m.partial->completed, 2u);
  EXPECT_EQ(m.partial->planned, 6u);
  EXPECT_NE(m.partial->reason.find("b.json: stopped by SIGTERM"), std::string::npos) << m.partial->reason;
}

TEST(Merge, RefusesOtherMachinesOtherBuildsTwiceMeasuredBenchmarksAndASingleFile) {
  Results other_cpu = part({"b"});
  other_cpu.device["name"] = "Other CPU";
  EXPECT_NE(merge_error({part({"a"}), other_cpu}).find("b.json was measured on cpu Other CPU"), std::string::npos);
  Results other_host = part({"b"});
  other_host.provenance["host"] = "elsewhere";
  EXPECT_NE(merge_error({part({"a"}), other_host}).find("on host elsewhere"), std::string::npos);
  Results gpu_a = part({"a"}), gpu_b = part({"b"});
  gpu_a.device = {{"kind", "cuda"}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "aaaa"}};
  gpu_b.device = {{"kind", "cuda"}, {"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "bbbb"}};  // a second H100
  EXPECT_NE(merge_error({gpu_a, gpu_b}).find("merge joins parts of one machine's run"), std::string::npos);
  Results other_build = part({"b"});
  other_build.provenance["git_commit"] = "def";
  EXPECT_NE(merge_error({part({"a"}), other_build}).find("built from commit def"), std::string::npos);
  EXPECT_NE(merge_error({part({"a"}), part({"a"})}).find("gemm/a/fp32/n:1 is in both a.json and b.json"),
            std::string::npos);
  EXPECT_NE(merge_error({part({"a"})}).find("two or more"), std::string::npos);
}
