// roofbench evidence: results held to their own model, on synthetic runs with known failures,
// and on every committed baseline (whose README entry must then say how it fares).
#include <gtest/gtest.h>

#include <filesystem>

#include "reports/evidence.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

// A lesson pair on sample_results()'s 100 GB/s roof: the unfused form moves 5e9 bytes, the fused
// 1e9, so the roofs predict 5x. `fused_s` sets how fast the fused one really ran.
Results lesson_run(double fused_s, const std::string& time) {
  Results r = sample_results();
  r.provenance["utc_time"] = time;
  BenchmarkResult unfused = kernel("unfused", 1e9, 5e9, 0.1);  // 50 ms of model time: 50% of its roof
  unfused.family = "fusion";
  unfused.name = "fusion/unfused/fp32/n:1";
  BenchmarkResult fused = kernel("fused", 1e9, 1e9, fused_s);  // 10 ms of model time
  fused.family = "fusion";
  fused.name = "fusion/fused/fp32/n:1";
  fused.compared_with = "fusion/unfused/fp32";
  r.benchmarks = {unfused, fused};
  apply_model(r);
  return r;
}

}  // namespace

TEST(Evidence, ALessonWithinItsToleranceOfThePredictionPasses) {
  const auto e = check_evidence({lesson_run(0.021, "2026-11-01T00:00:00Z")}, {"a"});  // 4.76x: 5% short of 5x
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(e[0].ok()) << render_evidence_text(e);
  EXPECT_EQ(e[0].lessons, 1);
  EXPECT_TRUE(e[0].previous.empty());
}

TEST(Evidence, ALessonFarFromItsPredictionFailsWithBothRatios) {
  const auto e = check_evidence({lesson_run(0.05, "2026-11-01T00:00:00Z")}, {"a"});  // 2.0x where 5.0x is predicted
  ASSERT_EQ(e[0].failures.size(), 1u);
  EXPECT_EQ(e[0].failures[0].check, "lesson");
  EXPECT_NE(e[0].failures[0].text.find("measured 2.00× where the run's roofs predict 5.00× (-60%"), std::string::npos)
      << e[0].failures[0].text;
}

TEST(Evidence, AnImplausibleKernelFailsItsFile) {
  Results r = lesson_run(0.021, "2026-11-01T00:00:00Z");
  r.benchmarks.push_back(kernel("fast", 2e9, 1e9, 0.005));  // 200% of its roof
  apply_model(r);
  const auto e = check_evidence({r}, {"a"});
  ASSERT_FALSE(e[0].ok());
  EXPECT_EQ(e[0].failures[0].check, "implausible");
  EXPECT_EQ(e[0].failures[0].benchmark, "gemm/fast/fp32/n:1");
}

TEST(Evidence, AShareOfTheRoofThatFellOnTheSameMachineClassFailsInRunOrder) {
  // Given newest first: the check orders by run time. The later run's unfused form fell from
  // 50% to 25% of its roof; its fused form fell as much, so the lesson itself still holds.
  const Results later = lesson_run(0.042, "2026-11-02T00:00:00Z");
  Results later_both = later;
  later_both.benchmarks[0].measurement = measurement_of({0.2, 0.2, 0.2});
  apply_model(later_both);
  const auto e = check_evidence({later_both, lesson_run(0.021, "2026-11-01T00:00:00Z")}, {"new", "old"});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].path, "old");
  EXPECT_TRUE(e[0].ok());
  EXPECT_EQ(e[1].previous, "old");
  EXPECT_EQ(e[1].kernels_compared, 2);
  ASSERT_EQ(e[1].failures.size(), 2u) << render_evidence_text(e);
  for (const auto& f : e[1].failures) EXPECT_EQ(f.check, "share");
  EXPECT_NE(e[1].failures[0].text.find("25.0% of its roof, down from 50.0%"), std::string::npos)
      << e[1].failures[0].text;
  // Another machine class is never compared with it: a full run against a quick one (the sample
  // runs are quick), or another device.
  Results full = later_both;
  full.settings["quick"] = false;
  const auto q = check_evidence({full, lesson_run(0.021, "2026-11-01T00:00:00Z")}, {"new", "old"});
  EXPECT_TRUE(q[1].previous.empty());
  EXPECT_TRUE(q[1].ok());
  Results other = later_both;
  other.device["name"] = "Another CPU";
  EXPECT_TRUE(check_evidence({other, lesson_run(0.021, "2026-11-01T00:00:00Z")}, {"new", "old"})[1].previous.empty());
}

TEST(Evidence, TheJsonAndMarkdownCarryEveryFinding) {
  const auto e = check_evidence({lesson_run(0.05, "2026-11-01T00:00:00Z")}, {"a"});
  const nlohmann::json j = evidence_json(e, {});
  EXPECT_EQ(j["schema"], "roofbench.evidence.v1");
  EXPECT_FALSE(j["files"][0]["ok"].get<bool>());
  EXPECT_EQ(j["files"][0]["failures"][0]["check"], "lesson");
  EXPECT_NE(render_evidence_markdown(e).find("**FAIL**"), std::string::npos);
}
