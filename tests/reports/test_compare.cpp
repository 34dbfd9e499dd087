// roofbench compare on synthetic results with known changes and known noise.
#include <gtest/gtest.h>

#include <algorithm>

#include "reports/compare.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

// One kernel whose samples are `samples` (seconds), doing 1 GFLOP per run.
BenchmarkResult timed(const std::string& variant, std::vector<double> samples) {
  BenchmarkResult b = kernel(variant, 1e9, 1e6, 1.0);
  b.measurement = measurement_of(std::move(samples));
  return b;
}

Results with(std::vector<BenchmarkResult> kernels) {
  Results r = sample_results();
  r.benchmarks = std::move(kernels);
  return r;
}

const CompareRow& row(const Comparison& c, const std::string& variant) {
  for (const auto& r : c.kernels)
    if (r.name.find("/" + variant + "/") != std::string::npos) return r;
  throw std::runtime_error("no row for " + variant);
}

}  // namespace

TEST(Compare, SameResultsAreSameEverywhere) {
  const Results r = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1)), timed("b", noisy_samples(2e-3, 0.03, 30, 2)),
                          timed("c", noisy_samples(5e-3, 0.002, 8, 3))});
  const Comparison c = compare_results(r, r, {});
  ASSERT_EQ(c.kernels.size(), 3u);
  for (const auto& k : c.kernels) EXPECT_EQ(k.verdict, Verdict::same) << k.name << ": " << k.reason;
  EXPECT_EQ(c.exit_code(), 0);
  ASSERT_TRUE(c.geomean_change);
  EXPECT_DOUBLE_EQ(*c.geomean_change, 0.0);
  EXPECT_TRUE(c.environment.empty());
  // The machine ceilings are compared too, for context.
  EXPECT_EQ(c.ceilings.size(), 4u);
}

TEST(Compare, TenPercentSlowdownIsSlowerAndFailsTheComparison) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1)), timed("b", noisy_samples(1e-3, 0.01, 30, 2))});
  const Results slow = with({timed("a", noisy_samples(1.1e-3, 0.01, 30, 3)), timed("b", noisy_samples(1e-3, 0.01, 30, 4))});
  const Comparison c = compare_results(base, slow, {});
  const CompareRow& a = row(c, "a");
  EXPECT_EQ(a.verdict, Verdict::slower) << a.reason;
  EXPECT_NEAR(a.evidence->change, 1 / 1.1 - 1, 0.01);
  EXPECT_LT(a.evidence->change_ci.hi, -0.05);
  EXPECT_LT(a.evidence->q, 0.01);
  EXPECT_EQ(row(c, "b").verdict, Verdict::same) << row(c, "b").reason;
  EXPECT_EQ(c.exit_code(), 1);
  EXPECT_EQ(c.kernels.front().verdict, Verdict::slower);  // the worst first
}

TEST(Compare, OnePercentNoiseIsNeverSlower) {
  // 200 independent A/A pairs with 1% noise, and 200 more with a real 1% slowdown: neither is
  // ever called SLOWER (it is below the 5% threshold), and the plain A/A pairs are SAME.
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    for (double shift : {1.0, 1.01}) {
      const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 20, 2 * seed))});
      const Results fresh = with({timed("a", noisy_samples(1e-3 * shift, 0.01, 20, 2 * seed + 1))});
      const Comparison c = compare_results(base, fresh, {});
      const Verdict v = c.kernels[0].verdict;
      EXPECT_NE(v, Verdict::slower) << "seed " << seed << ": " << c.kernels[0].reason;
      EXPECT_EQ(c.exit_code(), 0);
      if (shift == 1.0) EXPECT_EQ(v, Verdict::same) << "seed " << seed << ": " << c.kernels[0].reason;
    }
  }
}

TEST(Compare, TooFewSamplesIsUnsure) {
  const Results base = with({timed("a", {1.0e-3, 1.01e-3, 0.99e-3})});
  const Results fresh = with({timed("a", {1.3e-3, 1.31e-3, 1.29e-3})});
  const Comparison c = compare_results(base, fresh, {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::unsure);
  EXPECT_NE(c.kernels[0].reason.find("too few samples (3 in BASE, 3 in NEW; at least 5 each): run more samples"),
            std::string::npos)
      << c.kernels[0].reason;
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, ALargeChangeInNoisySamplesIsUnsureNotSlower) {
  // 30% noise, 8% slower: the interval reaches past the threshold and the test is not sure.
  const Results base = with({timed("a", noisy_samples(1e-3, 0.3, 6, 1))});
  const Results fresh = with({timed("a", noisy_samples(1.08e-3, 0.3, 6, 2))});
  const Comparison c = compare_results(base, fresh, {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::unsure) << c.kernels[0].reason;
  // ...and says how: the option that makes a run take more samples.
  EXPECT_NE(c.kernels[0].reason.find("run more samples (run --min-samples N"), std::string::npos)
      << c.kernels[0].reason;
}

TEST(Compare, ImprovementsAreFasterAndNeverFail) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1))});
  const Results fast = with({timed("a", noisy_samples(0.8e-3, 0.01, 30, 2))});
  const Comparison c = compare_results(base, fast, {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::faster) << c.kernels[0].reason;
  EXPECT_NEAR(c.kernels[0].evidence->change, 0.25, 0.02);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, AFailureInNewFailsAndOneSidedBenchmarksAreListed) {
  BenchmarkResult broken = timed("a", {1e-3});
  broken.measurement.reset();
  broken.verification.ok = false;
  broken.error = "verification failed: [3]: got 2, want 1";
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 20, 1)), timed("gone", noisy_samples(1e-3, 0.01, 20, 2))});
  const Results fresh = with({broken, timed("added", noisy_samples(1e-3, 0.01, 20, 3))});
  const Comparison c = compare_results(base, fresh, {});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::failed);
  EXPECT_NE(c.kernels[0].reason.find("no number in NEW: verification failed"), std::string::npos);
  EXPECT_EQ(c.only_base, (std::vector<std::string>{"gemm/gone/fp32/n:1"}));
  EXPECT_EQ(c.only_new, (std::vector<std::string>{"gemm/added/fp32/n:1"}));
  EXPECT_EQ(c.exit_code(), 1);
}

// A number above its roof beyond its run's noise is no evidence of a change either way: NEW's is
// IMPLAUSIBLE, never FASTER, and fails the comparison; BASE's alone makes the row UNSURE, never
// SLOWER (a committed baseline with one must not fail every later comparison).
TEST(Compare, AnImplausibleNumberIsNeverFasterOrSlower) {
  // 1 GFLOP on a 1 TFLOP/s roof: 1.1 ms is 91% of it, 0.5 ms is 200%.
  Results base =
      with({timed("a", noisy_samples(1.1e-3, 0.002, 30, 1)), timed("b", noisy_samples(0.5e-3, 0.002, 30, 2))});
  Results fresh =
      with({timed("a", noisy_samples(0.5e-3, 0.002, 30, 3)), timed("b", noisy_samples(1.1e-3, 0.002, 30, 4))});
  apply_model(base);
  apply_model(fresh);
  ASSERT_TRUE(fresh.benchmarks[0].implausible());
  ASSERT_TRUE(base.benchmarks[1].implausible());
  const Comparison c = compare_results(base, fresh, {});
  EXPECT_EQ(row(c, "a").verdict, Verdict::implausible);
  EXPECT_NE(row(c, "a").reason.find("NEW at 200% of its roof"), std::string::npos) << row(c, "a").reason;
  EXPECT_EQ(row(c, "b").verdict, Verdict::unsure);
  EXPECT_NE(row(c, "b").reason.find("BASE at 200% of its roof"), std::string::npos) << row(c, "b").reason;
  EXPECT_EQ(c.count(Verdict::faster) + c.count(Verdict::slower), 0);
  EXPECT_EQ(c.exit_code(), 1);  // NEW's refused number
  EXPECT_NE(render_compare_markdown(c).find("**IMPLAUSIBLE**"), std::string::npos);
  EXPECT_EQ(compare_json(c)["summary"]["counts"]["IMPLAUSIBLE"], 1);
  EXPECT_EQ(c.geomean_n, 1);  // the refused row is no rate to average
  // BASE's alone does not fail it.
  Results fine = with({timed("b", noisy_samples(1.1e-3, 0.002, 30, 5))});
  apply_model(fine);
  Results base_only = base;
  base_only.benchmarks = {base.benchmarks[1]};
  EXPECT_EQ(compare_results(base_only, fine, {}).exit_code(), 0);
}

TEST(Compare, ThresholdsCanBeSetPerFamilyOrBenchmark) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.005, 30, 1)), timed("b", noisy_samples(1e-3, 0.005, 30, 2))});
  const Results fresh = with({timed("a", noisy_samples(1.08e-3, 0.005, 30, 3)), timed("b", noisy_samples(1.08e-3, 0.005, 30, 4))});
  CompareOptions opt;
  opt.thresholds = {{"^gemm/a/", 0.10}, {"^gemm/", 0.02}};  // both match a: the larger wins
  const Comparison c = compare_results(base, fresh, opt);
  EXPECT_DOUBLE_EQ(row(c, "a").threshold, 0.10);
  EXPECT_EQ(row(c, "a").verdict, Verdict::same) << row(c, "a").reason;  // −7.4%, inside ±10%
  EXPECT_DOUBLE_EQ(row(c, "b").threshold, 0.02);
  EXPECT_EQ(row(c, "b").verdict, Verdict::slower) << row(c, "b").reason;

  opt.thresholds = {{"([", 0.1}};
  EXPECT_THROW(compare_results(base, fresh, opt), InputError);
}

TEST(Compare, AChangeTheClockExplainsIsUnsure) {
  // 10% longer times, but every NEW sample ran at a 10% lower clock: the same work per cycle.
  Results base = with({timed("a", noisy_samples(1e-3, 0.005, 30, 1))});
  Results fresh = with({timed("a", noisy_samples(1.1e-3, 0.005, 30, 2))});
  base.benchmarks[0].measurement->sample_clock_hz.assign(30, 1.98e9);
  fresh.benchmarks[0].measurement->sample_clock_hz.assign(30, 1.80e9);
  const Comparison c = compare_results(base, fresh, {});
  EXPECT_EQ(c.kernels[0].verdict, Verdict::unsure) << c.kernels[0].reason;
  EXPECT_NE(c.kernels[0].reason.find("the clock went from 1.98 GHz to 1.80 GHz"), std::string::npos)
      << c.kernels[0].reason;
  ASSERT_TRUE(c.kernels[0].evidence->cycle_change);
  EXPECT_NEAR(*c.kernels[0].evidence->cycle_change, 0.0, 0.01);
}

TEST(Compare, DifferentDevicesAreRefusedUnlessAsked) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 20, 1))});
  Results other = base;
  other.device["name"] = "Other CPU";
  EXPECT_THROW(compare_results(base, other, {}), InputError);
  CompareOptions opt;
  opt.allow_device_mismatch = true;
  const Comparison c = compare_results(base, other, opt);
  EXPECT_FALSE(c.same_device);
  ASSERT_FALSE(c.environment.empty());
  EXPECT_EQ(c.environment[0].what, "device");
}

TEST(Compare, EnvironmentDifferencesAreReported) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 20, 1))});
  Results fresh = base;
  fresh.device["driver_version"] = "13.1";
  fresh.settings["quick"] = false;
  for (auto& b : fresh.benchmarks) b.measurement->clock_before_hz = 1.5e9;  // base: 2.0 GHz
  const Comparison c = compare_results(base, fresh, {});
  std::vector<std::string> what;
  for (const auto& d : c.environment) what.push_back(d.what);
  EXPECT_NE(std::find(what.begin(), what.end(), "driver_version"), what.end());
  EXPECT_NE(std::find(what.begin(), what.end(), "settings.quick"), what.end());
  EXPECT_NE(std::find(what.begin(), what.end(), "measured clock (median before the samples)"), what.end());
}

TEST(Compare, ABenchmarkTimedColdOnOneSideAndWarmOnTheOtherSaysSo) {
  // A baseline made before its variant was declared warm (the launch lesson): the row says why
  // the two sides may differ, and a row timed alike on both sides says nothing of it.
  const Results base = with({timed("a", noisy_samples(2e-3, 0.01, 30, 1)), timed("b", noisy_samples(1e-3, 0.01, 30, 2))});
  Results fresh = with({timed("a", noisy_samples(1e-3, 0.01, 30, 3)), timed("b", noisy_samples(1e-3, 0.01, 30, 4))});
  fresh.benchmarks[0].measurement->cold_cache = false;
  const Comparison c = compare_results(base, fresh, {});
  auto says = [](const CompareRow& r) {
    return std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
      return n == "BASE was timed cold, NEW warm: not like for like";
    });
  };
  EXPECT_TRUE(says(row(c, "a")));
  EXPECT_FALSE(says(row(c, "b")));
}

TEST(Compare, NothingInCommonIsAnInputError) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 20, 1))});
  const Results fresh = with({timed("z", noisy_samples(1e-3, 0.01, 20, 1))});
  EXPECT_THROW(compare_results(base, fresh, {}), InputError);
}

TEST(Compare, GeometricMeanOfRates) {
  const Results base = with({timed("a", std::vector<double>(10, 1e-3)), timed("b", std::vector<double>(10, 1e-3))});
  const Results fresh = with({timed("a", std::vector<double>(10, 1e-3 / 0.9)), timed("b", std::vector<double>(10, 1e-3 / 1.1))});
  const Comparison c = compare_results(base, fresh, {});
  ASSERT_TRUE(c.geomean_change);
  EXPECT_NEAR(*c.geomean_change, std::sqrt(0.9 * 1.1) - 1, 1e-12);
  EXPECT_EQ(c.geomean_n, 2);
}

TEST(Compare, BenjaminiHochbergKeepsManyNearMissesFromBeingCalledSignificant) {
  // One clear regression among many unchanged benchmarks: q is adjusted over all of them.
  std::vector<BenchmarkResult> b, n;
  for (int i = 0; i < 40; ++i) {
    b.push_back(timed("k" + std::to_string(i), noisy_samples(1e-3, 0.01, 20, 100 + i)));
    n.push_back(timed("k" + std::to_string(i), noisy_samples(i == 0 ? 1.2e-3 : 1e-3, 0.01, 20, 200 + i)));
  }
  const Comparison c = compare_results(with(b), with(n), {});
  EXPECT_EQ(c.count(Verdict::slower), 1);
  EXPECT_EQ(c.count(Verdict::same), 39);
  for (const auto& r : c.kernels) EXPECT_GE(r.evidence->q, r.evidence->p);
}

TEST(Compare, PrintersCarryTheVerdicts) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1)), timed("b", noisy_samples(1e-3, 0.01, 30, 2))});
  const Results slow = with({timed("a", noisy_samples(1.2e-3, 0.01, 30, 3)), timed("b", noisy_samples(1e-3, 0.01, 30, 4))});
  const Comparison c = compare_results(base, slow, {}, "base/results.json", "new/results.json");

  const std::string text = render_compare_text(c);
  EXPECT_NE(text.find("SLOWER  gemm/a/fp32/n:1"), std::string::npos) << text;
  EXPECT_NE(text.find("1 SLOWER, 0 UNSURE, 1 SAME; geometric mean of the kernels' rates"), std::string::npos) << text;
  EXPECT_NE(text.find("exit 1"), std::string::npos);

  const std::string md = render_compare_markdown(c);
  EXPECT_EQ(md.rfind("### roofbench compare: regression — 1 SLOWER, 0 UNSURE, 1 SAME", 0), 0u) << md;
  EXPECT_NE(md.find("| **SLOWER** | `gemm/a/fp32/n:1` | 997 GFLOP/s | 832 GFLOP/s | −16.6% | \\[−17.0%, −16.1%\\] | "
                    "beyond ±5% and significant: p = 3e-11"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("<details><summary>1 SAME</summary>"), std::string::npos);

  const nlohmann::json j = compare_json(c);
  EXPECT_EQ(j.at("schema"), "roofbench.compare.v1");
  EXPECT_EQ(j.at("summary").at("exit_code"), 1);
  EXPECT_EQ(j.at("summary").at("counts").at("SLOWER"), 1);
  EXPECT_EQ(j.at("benchmarks")[0].at("verdict"), "SLOWER");
  EXPECT_EQ(j.at("benchmarks")[0].at("metric"), "FLOP/s");
  EXPECT_TRUE(j.at("benchmarks")[0].at("higher_is_better").get<bool>());
  EXPECT_EQ(j.at("base").at("path"), "base/results.json");
}

TEST(Compare, AChangeThatItsRoofsShowTooIsTheMachines) {
  // A memory-bound kernel 1.5x slower, in runs where the DRAM ceiling was 1.5x slower too.
  auto run = [](double kernel_s, double roof_s, std::uint64_t seed) {
    Results r = with({timed("a", noisy_samples(kernel_s, 0.005, 30, seed))});
    Placement p;
    p.bound = "memory";
    p.bandwidth_ceiling = "dram_update";
    r.benchmarks[0].placement = p;
    Ceiling& c = r.ceilings[0];  // dram_update
    c.measurement = measurement_of(noisy_samples(roof_s, 0.005, 30, seed + 1));
    c.value_start = 1e9 / c.measurement.stats.median;  // 1 GB per run
    return r;
  };
  const Results base = run(1e-3, 1e-2, 1);
  const Comparison machine = compare_results(base, run(1.5e-3, 1.5e-2, 10), {});
  EXPECT_EQ(machine.kernels[0].verdict, Verdict::unsure) << machine.kernels[0].reason;
  EXPECT_NE(machine.kernels[0].reason.find("−33.3%, but its roofs (bandwidth/dram) moved −33.2% between the same runs: the machine changed"), std::string::npos)
      << machine.kernels[0].reason;
  EXPECT_EQ(machine.exit_code(), 0);

  const Comparison code = compare_results(base, run(1.5e-3, 1e-2, 20), {});  // the roof held: the code
  EXPECT_EQ(code.kernels[0].verdict, Verdict::slower) << code.kernels[0].reason;
}

// ---------------------------------------------------------------- judged by the share of the roof

namespace {
// A memory-bound kernel (1 FLOP per 100 bytes) and the DRAM roof of its run.
Results memory_run(double kernel_s, double dram_bytes_per_s, std::uint64_t seed) {
  Results r = sample_results();
  for (auto& c : r.ceilings)
    if (c.name == "dram_update") c.value = dram_bytes_per_s;
  BenchmarkResult b = kernel("stream", 1e7, 1e9, kernel_s);
  b.measurement = measurement_of(noisy_samples(kernel_s, 0.01, 30, seed));
  r.benchmarks = {b};
  apply_model(r);
  return r;
}
}  // namespace

TEST(CompareByRoof, AMachineWideBandwidthDropCancelsInTheShareOfTheRoof) {
  // NEW's machine had 20% less DRAM bandwidth, and the kernel took 25% longer: same share of its roof.
  const Results base = memory_run(0.01, 100e9, 1), fresh = memory_run(0.0125, 80e9, 2);
  CompareOptions by_rate;
  const Comparison rate = compare_results(base, fresh, by_rate);
  ASSERT_EQ(rate.kernels.size(), 1u);
  EXPECT_NE(rate.kernels[0].verdict, Verdict::same);  // by rate: a 20% drop (SLOWER, or UNSURE by the roofs)
  EXPECT_EQ(rate.kernels[0].decided_by, "rate");
  ASSERT_TRUE(rate.kernels[0].other_change);  // the share's change shown beside it
  EXPECT_NEAR(*rate.kernels[0].other_change, 0.0, 0.02);

  CompareOptions by_roof;
  by_roof.by_roof = true;
  const Comparison roof = compare_results(base, fresh, by_roof);
  const CompareRow& k = roof.kernels[0];
  EXPECT_EQ(k.verdict, Verdict::same) << k.reason;
  EXPECT_EQ(k.decided_by, "roof share");
  EXPECT_EQ(k.metric, "roof share");
  ASSERT_TRUE(k.other_change);
  EXPECT_NEAR(*k.other_change, -0.2, 0.02);  // the rate's change, beside it
  const std::string text = render_compare_text(roof);
  EXPECT_NE(text.find("decided by each kernel's share of its roof"), std::string::npos) << text;
  EXPECT_NE(text.find("% of roof"), std::string::npos) << text;
  const auto j = compare_json(roof);
  EXPECT_EQ(j["options"]["by"], "roof share");
  EXPECT_EQ(j["benchmarks"][0]["decided_by"], "roof share");
}

TEST(CompareByRoof, ASlowerKernelUnderAnUnchangedRoofIsStillSlower) {
  const Results base = memory_run(0.01, 100e9, 1), fresh = memory_run(0.012, 100e9, 2);
  CompareOptions opt;
  opt.by_roof = true;
  const Comparison c = compare_results(base, fresh, opt);
  EXPECT_EQ(c.kernels[0].verdict, Verdict::slower) << c.kernels[0].reason;
  EXPECT_EQ(c.exit_code(), 1);
}

TEST(CompareByRoof, AnUnplacedKernelIsJudgedByItsRateAndSaysSo) {
  Results base = memory_run(0.01, 100e9, 1), fresh = memory_run(0.01, 100e9, 2);
  fresh.benchmarks[0].placement.reset();
  CompareOptions opt;
  opt.by_roof = true;
  const Comparison c = compare_results(base, fresh, opt);
  EXPECT_EQ(c.kernels[0].decided_by, "rate");
  ASSERT_FALSE(c.kernels[0].notes.empty());
  EXPECT_NE(c.kernels[0].notes[0].find("judged by its rate"), std::string::npos);
}

TEST(CompareNoise, ACalibratedNoiseRaisesTheThresholdNeverLowersIt) {
  CompareOptions opt;
  opt.noise = {{"gemm/a/fp32/n:1", 0.04}, {"gemm/b/fp32/n:1", 0.001}};
  EXPECT_NEAR(opt.calibrated_threshold("gemm/a/fp32/n:1"), 0.12, 1e-12);            // 3 sigma
  EXPECT_NEAR(opt.calibrated_threshold("gemm/a/fp32/n:1", 4), 0.06, 1e-12);         // 3 sigma / sqrt(4 rounds)
  EXPECT_DOUBLE_EQ(opt.calibrated_threshold("gemm/a/fp32/n:1", 100), opt.threshold);  // never below the minimum
  EXPECT_DOUBLE_EQ(opt.calibrated_threshold("gemm/b/fp32/n:1"), opt.threshold);     // the global minimum
  EXPECT_DOUBLE_EQ(opt.calibrated_threshold("gemm/unknown/fp32/n:1"), opt.threshold);
  // In a comparison: a 10% slowdown of a benchmark whose runs differ by 4% (sd) is within its noise.
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1))});
  const Results slow = with({timed("a", noisy_samples(1.1e-3, 0.01, 30, 3))});
  const Comparison c = compare_results(base, slow, opt);
  EXPECT_NEAR(c.kernels[0].threshold, 0.12, 1e-12);
  EXPECT_NE(c.kernels[0].verdict, Verdict::slower) << c.kernels[0].reason;
}

TEST(Compare, AChangeOfDeclaredWorkIsJudgedByARateBothSidesHave) {
  // NEW declares no FLOPs: both sides are judged in B/s, never BASE's FLOP/s against NEW's B/s.
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1)), timed("b", noisy_samples(1e-3, 0.01, 30, 2))});
  Results fresh = base;
  fresh.benchmarks[0].flops = 0;
  const Comparison c = compare_results(base, fresh, {});
  const CompareRow& a = row(c, "a");
  EXPECT_EQ(a.metric, "B/s");
  EXPECT_EQ(a.verdict, Verdict::same) << a.reason;
  ASSERT_TRUE(a.evidence);
  EXPECT_NEAR(a.evidence->change, 0.0, 1e-12);
  EXPECT_EQ(row(c, "b").metric, "FLOP/s");
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(Compare, APartialNewRunFailsTheComparisonAndSaysSo) {
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1)), timed("b", noisy_samples(1e-3, 0.01, 30, 2))});
  Results fresh = with({timed("a", noisy_samples(1e-3, 0.01, 30, 1))});
  fresh.partial = Partial{1, 2, "stopped by SIGINT"};
  const Comparison c = compare_results(base, fresh, {});
  EXPECT_EQ(row(c, "a").verdict, Verdict::same);
  EXPECT_EQ(c.exit_code(), 1);  // what did not finish could hide a regression
  EXPECT_NE(render_compare_text(c).find("NEW is a partial run"), std::string::npos) << render_compare_text(c);
  EXPECT_NE(render_compare_markdown(c).find("NEW is incomplete"), std::string::npos);
  EXPECT_TRUE(compare_json(c).at("new").at("partial").is_string());
  EXPECT_TRUE(compare_json(c).at("base").at("partial").is_null());
  // A partial BASE is said, and NEW whole judges as usual.
  const Comparison back = compare_results(fresh, with({timed("a", noisy_samples(1e-3, 0.01, 30, 1))}), {});
  EXPECT_EQ(back.exit_code(), 0);
  EXPECT_NE(render_compare_text(back).find("BASE is a partial run"), std::string::npos);
}

// ---------------------------------------------------------------- each rule, on evidence built by hand

namespace {
// 20% slower, every sample of 30 a side saying so.
Evidence clearly_slower() {
  Evidence e;
  e.n_base = e.n_new = 30;
  e.change = -0.20;
  e.change_ci = {-0.25, -0.15};
  e.p = e.q = 1e-6;
  e.p_min = 1e-15;
  return e;
}
}  // namespace

TEST(CompareDecide, SignificanceIsTheAdjustedQNotTheRawP) {
  const CompareOptions opt;  // alpha 0.01
  EXPECT_EQ(decide(clearly_slower(), 0.05, opt).first, Verdict::slower);
  Evidence near = clearly_slower();
  near.p = 0.001;  // below alpha alone, but not over the 40 other benchmarks of its comparison
  near.q = 0.04;
  const auto [verdict, reason] = decide(near, 0.05, opt);
  EXPECT_EQ(verdict, Verdict::unsure) << reason;
  EXPECT_NE(reason.find("not significant"), std::string::npos) << reason;
}

TEST(CompareDecide, TooFewSamplesOnEitherSideIsUnsure) {
  const CompareOptions opt;  // at least 5 a side
  for (const auto& [n_base, n_new] : {std::pair<int, int>{3, 30}, std::pair<int, int>{30, 3}}) {
    Evidence e = clearly_slower();
    e.n_base = n_base;
    e.n_new = n_new;
    const auto [verdict, reason] = decide(e, 0.05, opt);
    EXPECT_EQ(verdict, Verdict::unsure) << n_base << " and " << n_new;
    EXPECT_NE(reason.find("too few samples"), std::string::npos) << reason;
  }
}

TEST(CompareDecide, TheClockExplainsAChangeOnlyWhenPerCycleItIsUnderHalfTheThreshold) {
  const CompareOptions opt;
  Evidence e = clearly_slower();
  e.base_clock_hz = 2.0e9;
  e.new_clock_hz = 1.7e9;
  e.cycle_change = -0.03;  // 3% per cycle, past half of the 5% threshold: the code's
  EXPECT_EQ(decide(e, 0.05, opt).first, Verdict::slower) << decide(e, 0.05, opt).second;
  e.cycle_change = -0.02;  // under half of it: the machine's
  EXPECT_EQ(decide(e, 0.05, opt).first, Verdict::unsure);
  EXPECT_NE(decide(e, 0.05, opt).second.find("the machine changed, not the code"), std::string::npos);
}

TEST(CompareDecide, ARoofExplainsAKernelOnlyWithinHalfTheThresholdOfHowItMoved) {
  CompareRow kernel;
  kernel.verdict = Verdict::slower;
  kernel.roof_group = "bandwidth/dram";
  kernel.threshold = 0.05;
  kernel.evidence = clearly_slower();
  CompareRow roof = kernel;
  roof.evidence->change = -0.20;
  kernel.evidence->change = -0.21;  // 1 point past its roof
  EXPECT_TRUE(roof_explanation(kernel, {roof}));
  kernel.evidence->change = -0.27;  // 7 points past it: more than half the threshold (2.5)
  EXPECT_FALSE(roof_explanation(kernel, {roof}));
  kernel.evidence->change = -0.13;  // and 7 points short of it
  EXPECT_FALSE(roof_explanation(kernel, {roof}));
}

TEST(Compare, AMillionSamplesASideAreReadEvenlySpacedAndTheRowSaysSo) {
  // 1,000,000 samples a benchmark (the 71 MB file that took compare 93 s): the statistics read
  // every 100th, 10,000 a side, and still see a planted 10% slowdown and its absence.
  const Results base = with({timed("a", noisy_samples(1e-3, 0.01, 1000000, 1)),
                             timed("b", noisy_samples(1e-3, 0.01, 1000000, 2))});
  Results fresh = with({timed("a", noisy_samples(1.1e-3, 0.01, 1000000, 3)),
                        timed("b", noisy_samples(1e-3, 0.01, 1000000, 4))});
  fresh.benchmarks[1].measurement->sample_clock_hz.assign(1000000, 2e9);  // NEW reads its clock; BASE does not
  const Comparison c = compare_results(base, fresh, {});
  const CompareRow& a = row(c, "a");
  EXPECT_EQ(a.verdict, Verdict::slower) << a.reason;
  EXPECT_NEAR(a.evidence->change, 1 / 1.1 - 1, 0.01);
  EXPECT_EQ(a.evidence->n_base, static_cast<int>(kMaxComparedSamples));
  EXPECT_EQ(a.evidence->base_samples, 1000000);
  const CompareRow& b = row(c, "b");
  EXPECT_EQ(b.verdict, Verdict::same) << b.reason;
  EXPECT_FALSE(b.evidence->cycle_change);  // clocks on one side only: no change per cycle
  int said = 0;
  for (const auto& n : a.notes)
    if (n.find("the statistics read 10000 of its 1000000 samples, evenly spaced") != std::string::npos) ++said;
  EXPECT_EQ(said, 2) << "BASE and NEW each say so";
  // Up to the cap, every sample is read and nothing is said.
  const Comparison small = compare_results(with({timed("a", noisy_samples(1e-3, 0.01, 10000, 1))}),
                                           with({timed("a", noisy_samples(1e-3, 0.01, 10000, 2))}), {});
  EXPECT_EQ(row(small, "a").evidence->n_base, 10000);
  for (const auto& n : row(small, "a").notes) EXPECT_EQ(n.find("the statistics read"), std::string::npos) << n;
}

TEST(Compare, ManyKernelsShareOneSampleBudgetAndEachRowSaysSo) {
  // 250 kernels of 6,000 samples a side: 1,000,000 / 250 = 4,000 each (every 2nd sample, 3,000),
  // and a planted 10% slowdown on one of them is still found among 249 unchanged.
  std::vector<BenchmarkResult> base_b, fresh_b;
  for (int i = 0; i < 250; ++i) {
    const std::string name = "k" + std::to_string(i);
    base_b.push_back(timed(name, noisy_samples(1e-3, 0.01, 6000, 2 * i + 1)));
    fresh_b.push_back(timed(name, noisy_samples(i == 7 ? 1.1e-3 : 1e-3, 0.01, 6000, 2 * i + 2)));
  }
  const Comparison c = compare_results(with(base_b), with(fresh_b), {});
  ASSERT_EQ(c.kernels.size(), 250u);
  EXPECT_EQ(row(c, "k7").verdict, Verdict::slower) << row(c, "k7").reason;
  EXPECT_EQ(c.count(Verdict::slower), 1);
  const CompareRow& r = row(c, "k3");
  EXPECT_EQ(r.evidence->n_base, 3000);
  EXPECT_EQ(r.evidence->base_samples, 6000);
  bool said = false;
  for (const auto& n : r.notes)
    said = said || n.find("the statistics read 3000 of its 6000 samples, evenly spaced (at most 4000 a side: "
                          "1000000 a side over the whole comparison)") != std::string::npos;
  EXPECT_TRUE(said) << "the row says what it read and why";
  // Fewer than 100 kernels: each reads up to kMaxComparedSamples, as before.
  const Comparison few = compare_results(with({base_b[0], base_b[1]}), with({fresh_b[0], fresh_b[1]}), {});
  EXPECT_EQ(row(few, "k0").evidence->n_base, 6000);
}
