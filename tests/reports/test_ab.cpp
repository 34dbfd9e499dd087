// roofbench ab's paired verdicts (reports/ab.h) on synthetic rounds with known drift and changes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "reports/ab.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

// One run holding kernels "a" and "b" with median times `a_s` and `b_s` (1 GFLOP each).
Results run_of(double a_s, double b_s, std::uint64_t seed) {
  Results r = sample_results();
  for (auto [v, s] : {std::pair{"a", a_s}, std::pair{"b", b_s}}) {
    BenchmarkResult k = kernel(v, 1e9, 1e6, s);
    k.measurement = measurement_of(noisy_samples(s, 0.01, 20, seed++));
    r.benchmarks.push_back(k);
  }
  return r;
}

// `n` rounds in which the machine's speed drifts by up to ±30% from round to round (both builds
// see the same drift within a round) and NEW's "a" takes `a_factor` as long.
std::vector<AbRound> rounds_with(int n, double a_factor, double jitter = 0.01) {
  std::vector<AbRound> out;
  for (int i = 0; i < n; ++i) {
    const double drift = 1 + 0.3 * std::sin(1.7 * i);
    const double j = 1 + jitter * std::cos(2.9 * i);  // what pairing does not cancel
    AbRound r;
    r.base = run_of(1e-3 * drift, 2e-3 * drift, 10 * i + 1);
    r.fresh = run_of(1e-3 * drift * a_factor * j, 2e-3 * drift / j, 10 * i + 5);
    r.base_path = "r" + std::to_string(i) + "/base";
    r.new_path = "r" + std::to_string(i) + "/new";
    r.base_first = i % 2 == 0;
    out.push_back(r);
  }
  return out;
}

const CompareRow& row(const Comparison& c, const std::string& variant) {
  for (const auto& r : c.kernels)
    if (r.name.find("/" + variant + "/") != std::string::npos) return r;
  throw std::runtime_error("no row for " + variant);
}

}  // namespace

TEST(Ab, DriftSharedByBothBuildsCancelsAndTheSameBuildIsSame) {
  const Comparison c = compare_rounds(rounds_with(10, 1.0), {});
  ASSERT_EQ(c.kernels.size(), 2u);
  for (const auto& k : c.kernels) {
    EXPECT_EQ(k.verdict, Verdict::same) << k.name << ": " << k.reason;
    EXPECT_EQ(k.evidence->n_base, 10);
    EXPECT_EQ(k.evidence->unit, "rounds");
  }
  EXPECT_EQ(c.rounds, 10);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Ab, ATenPercentSlowdownUnderThirtyPercentDriftIsSlower) {
  const Comparison c = compare_rounds(rounds_with(10, 1.1), {});
  const CompareRow& a = row(c, "a");
  EXPECT_EQ(a.verdict, Verdict::slower) << a.reason;
  EXPECT_NEAR(a.evidence->change, 1 / 1.1 - 1, 0.01);
  EXPECT_LT(a.evidence->change_ci.hi, -0.05);
  EXPECT_LT(a.evidence->change_ci.lo, a.evidence->change);
  EXPECT_EQ(row(c, "b").verdict, Verdict::same) << row(c, "b").reason;
  EXPECT_EQ(c.exit_code(), 1);
  const std::string text = render_compare_text(c);
  EXPECT_NE(text.find("paired over 10 rounds"), std::string::npos) << text;
  const auto j = ab_json(c, rounds_with(10, 1.1));
  EXPECT_EQ(j["schema"], "roofbench.ab.v1");
  EXPECT_EQ(j["rounds"].size(), 10u);
  EXPECT_EQ(j["rounds"][1]["first"], "new");
}

TEST(Ab, UnpairedSamplesOfTheSameRunsCannotTellTheSlowdownFromTheDrift) {
  // What two separate runs see: one run of each build, with the machine's drift between them.
  std::vector<AbRound> r = rounds_with(10, 1.1);
  const Results base = r[1].base, fresh = r[3].fresh;  // drift 1.30 then 0.72: NEW looks far *faster*
  const Comparison c = compare_results(base, fresh, {});
  EXPECT_EQ(row(c, "a").verdict, Verdict::faster) << row(c, "a").reason;
  EXPECT_EQ(compare_rounds(r, {}).exit_code(), 1);  // the paired rounds see it
}

TEST(Ab, TooFewRoundsAreUnsureAndSaySo) {
  const Comparison c = compare_rounds(rounds_with(3, 1.2), {});
  EXPECT_EQ(row(c, "a").verdict, Verdict::unsure);
  EXPECT_NE(row(c, "a").reason.find("too few rounds"), std::string::npos) << row(c, "a").reason;
}

TEST(Ab, AKernelThatFailsInAnyRoundOfNewIsFailed) {
  std::vector<AbRound> r = rounds_with(6, 1.0);
  BenchmarkResult& a = r[4].fresh.benchmarks[0];
  a.measurement.reset();
  a.verification.ok = false;
  a.error = "verification failed: y[3]";
  const Comparison c = compare_rounds(r, {});
  EXPECT_EQ(row(c, "a").verdict, Verdict::failed);
  EXPECT_NE(row(c, "a").reason.find("fails in 1 of 6 rounds of NEW (round 5: verification failed"), std::string::npos)
      << row(c, "a").reason;
  EXPECT_EQ(c.exit_code(), 1);
}

// The change is exp(mean of the rounds' log rate ratios) - 1: a NEW 1.25x as long in every round,
// whatever the drift, is exactly -20% (not the mean log ratio, -22.3%). A round whose NEW lacks a
// benchmark that other rounds have (not failed: absent) pairs nothing for it and fails nothing.
TEST(Ab, TheChangeIsTheGeometricMeanRatioAndARoundWithoutTheBenchmarkIsLeftOut) {
  std::vector<AbRound> rounds;
  for (int i = 0; i < 7; ++i) {
    const double drift = 1 + 0.1 * i;
    AbRound r;
    r.base = sample_results();
    r.fresh = sample_results();
    r.base.benchmarks = {kernel("a", 1e9, 1e6, 1e-3 * drift), kernel("b", 1e9, 1e6, 2e-3)};
    r.fresh.benchmarks = {kernel("a", 1e9, 1e6, 1.25e-3 * drift), kernel("b", 1e9, 1e6, 2e-3)};
    if (i == 3) r.fresh.benchmarks.erase(r.fresh.benchmarks.begin());  // no "a" in this round of NEW
    r.base_path = "r" + std::to_string(i) + "/base";
    r.new_path = "r" + std::to_string(i) + "/new";
    r.base_first = i % 2 == 0;
    rounds.push_back(r);
  }
  const Comparison c = compare_rounds(rounds, {});
  const CompareRow& a = row(c, "a");
  EXPECT_EQ(a.verdict, Verdict::slower) << a.reason;
  ASSERT_TRUE(a.evidence);
  EXPECT_NEAR(a.evidence->change, -0.2, 1e-12);
  EXPECT_EQ(a.evidence->n_new, 6);
}

TEST(Ab, BenchmarksOfOneBuildOnlyAreListedNotJudged) {
  std::vector<AbRound> r = rounds_with(5, 1.0);
  for (auto& round : r) round.fresh.benchmarks.pop_back();  // NEW lost "b"
  const Comparison c = compare_rounds(r, {});
  EXPECT_EQ(c.kernels.size(), 1u);
  ASSERT_EQ(c.only_base.size(), 1u);
  EXPECT_EQ(c.only_base[0], "gemm/b/fp32/n:1");
}

TEST(Ab, RoundsOfDifferentDevicesAreRefused) {
  std::vector<AbRound> r = rounds_with(5, 1.0);
  r[2].fresh.device["name"] = "Other CPU";
  EXPECT_THROW(compare_rounds(r, {}), InputError);
}

TEST(Ab, TheNoiseFileRoundTripsAndIsRefusedOnAnotherDevice) {
  const std::vector<AbRound> r = rounds_with(8, 1.0, 0.05);
  const nlohmann::json j = noise_json(r, {"--quick"});
  EXPECT_EQ(j["schema"], "roofbench.noise.v1");
  EXPECT_EQ(j["rounds"], 8);
  const auto ratios = round_log_ratios(r);
  ASSERT_EQ(ratios.at("gemm/a/fp32/n:1").size(), 8u);
  const double sd = j["benchmarks"]["gemm/a/fp32/n:1"]["sd_log_ratio"].get<double>();
  EXPECT_GT(sd, 0.01);  // the 5% jitter pairing cannot cancel
  EXPECT_LT(sd, 0.1);
  const auto path = roofbench::testing::scratch_path("roofbench-test-noise.json").string();
  std::ofstream(path) << j.dump();
  const auto noise = load_noise(path, device_id(r[0].base));
  EXPECT_NEAR(noise.at("gemm/a/fp32/n:1"), sd, 1e-12);
  EXPECT_THROW(load_noise(path, "cuda: NVIDIA H200"), InputError);
  std::ofstream(path) << R"({"schema": "roofbench.results.v1"})";
  EXPECT_THROW(load_noise(path, ""), InputError);
  std::filesystem::remove(path);
}

// Fields of another type than the schema's are refused in one line, never an escaped
// nlohmann::json::type_error (the first input tests/fuzz/fuzz_noise.cpp found).
TEST(Ab, ANoiseFileWhoseFieldsHaveTheWrongTypeIsRefused) {
  for (const char* text : {R"({"schema":9.99999})", R"({"schema":"roofbench.noise.v1","device":7,"benchmarks":{}})",
                           R"({"schema":"roofbench.noise.v1","benchmarks":{"a":3}})",
                           R"({"schema":"roofbench.noise.v1","benchmarks":{"a":{"sd_log_ratio":"x"}}})"}) {
    try {
      (void)parse_noise(text, "noise.json", "cpu: X");
      ADD_FAILURE() << text << " was taken";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("noise.json"), std::string::npos) << e.what();
    }
  }
  // A negative spread is no spread; none at all (a benchmark that never moved) is one.
  EXPECT_THROW((void)parse_noise(R"({"schema":"roofbench.noise.v1","benchmarks":{"a":{"sd_log_ratio":-0.1}}})",
                                 "noise.json", ""),
               InputError);
  EXPECT_EQ(parse_noise(R"({"schema":"roofbench.noise.v1","benchmarks":{"a":{"sd_log_ratio":0}}})", "noise.json", "")
                .at("a"),
            0.0);
}
