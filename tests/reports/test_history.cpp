// roofbench history on synthetic series: a creep of small steps, one large step, steady noise.
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include "reports/history.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

// Runs in order; benchmark "v" of each run takes times[v][run] ms, with 1% noise.
std::vector<HistoryRun> runs_of(const std::vector<std::pair<std::string, std::vector<double>>>& series) {
  std::vector<HistoryRun> runs;
  const std::size_t n = series.front().second.size();
  for (std::size_t i = 0; i < n; ++i) {
    HistoryRun run;
    run.path = "run" + std::to_string(i) + "/results.json";
    run.commit = "c" + std::to_string(i);
    run.results = sample_results();
    for (const auto& [variant, ms] : series) {
      BenchmarkResult b = kernel(variant, 1e9, 1e6, 1e-3);
      b.measurement = measurement_of(noisy_samples(ms[i] * 1e-3, 0.01, 30, 1000 * i + variant.size() + variant[0]));
      run.results.benchmarks.push_back(b);
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

const BenchmarkHistory& of(const History& h, const std::string& variant) {
  for (const auto& b : h.benchmarks)
    if (b.name == "gemm/" + variant + "/fp32/n:1") return b;
  throw std::runtime_error("no history for " + variant);
}

}  // namespace

TEST(History, ACreepOfSmallStepsIsFlaggedThoughNoStepIs) {
  // 2.5% slower on every run: no step passes the 5% threshold, the sum does.
  std::vector<double> creep, steady;
  for (int i = 0; i < 6; ++i) {
    creep.push_back(std::pow(1.025, i));
    steady.push_back(1.0);
  }
  const History h = build_history(runs_of({{"creep", creep}, {"steady", steady}}), {});
  const BenchmarkHistory& c = of(h, "creep");
  for (const auto& s : c.steps) EXPECT_NE(s.verdict, Verdict::slower) << s.from << "→" << s.to;
  EXPECT_EQ(c.flag, "CREEP");
  EXPECT_EQ(c.best, 0);
  EXPECT_EQ(c.vs_best_verdict, Verdict::slower) << c.vs_best_reason;
  EXPECT_NEAR(c.vs_best->change, std::pow(1.025, -5) - 1, 0.01);
  EXPECT_EQ(of(h, "steady").flag, "ok");
  EXPECT_EQ(h.exit_code(), 1);
  EXPECT_EQ(h.benchmarks.front().flag, "CREEP");  // flagged first

  const std::string text = render_history_text(h);
  EXPECT_NE(text.find("CREEP     gemm/creep/fp32/n:1"), std::string::npos) << text;
  EXPECT_NE(text.find("no step since the best was beyond ±5%"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 benchmarks flagged; exit 1"), std::string::npos) << text;
}

TEST(History, OneLargeStepIsAStepAndThenARegressionUntilRecovered) {
  const History step = build_history(runs_of({{"a", {1, 1, 1, 1.12}}}), {});
  EXPECT_EQ(of(step, "a").flag, "STEP");

  const History later = build_history(runs_of({{"a", {1, 1, 1.12, 1.12, 1.12}}}), {});
  EXPECT_EQ(of(later, "a").flag, "REGRESSED");
  EXPECT_NE(render_history_text(later).find("SLOWER at run 3 (c2: "), std::string::npos) << render_history_text(later);

  // The step straight out of the best run (run 2, 2% faster than run 1) is the regression too.
  const History from_best = build_history(runs_of({{"a", {1.02, 1, 1.12, 1.12}}}), {});
  EXPECT_EQ(of(from_best, "a").best, 1);
  EXPECT_EQ(of(from_best, "a").flag, "REGRESSED");

  const History recovered = build_history(runs_of({{"a", {1, 1, 1.12, 1.0}}}), {});
  EXPECT_EQ(of(recovered, "a").flag, "ok");
  EXPECT_EQ(recovered.exit_code(), 0);
}

TEST(History, AStepItsRoofsMadeTooIsTheMachinesNotTheCodes) {
  // Run 3 was on a slower machine: its DRAM ceiling 1.5x slower, and the memory-bound kernel
  // with it. A compute-bound kernel that slowed as much in the same run, with its roof steady,
  // is the code's.
  const std::vector<double> roof_ms = {10, 10, 15}, memory_ms = {1, 1, 1.5}, compute_ms = {1, 1, 1.5};
  std::vector<HistoryRun> runs = runs_of({{"memory", memory_ms}, {"compute", compute_ms}});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Results& r = runs[i].results;
    Ceiling& dram = r.ceilings[0];  // dram_update
    dram.measurement = measurement_of(noisy_samples(roof_ms[i] * 1e-3, 0.005, 30, 77 + i));
    dram.value_start = 1e9 / dram.measurement.stats.median;  // 1 GB per run
    Ceiling& fma = r.ceilings[2];                            // fp32_fma, steady
    fma.measurement = measurement_of(noisy_samples(1e-3, 0.005, 30, 88 + i));
    fma.value_start = 1e9 / fma.measurement.stats.median;
    Placement memory, compute;
    memory.bound = "memory";
    memory.bandwidth_ceiling = "dram_update";
    compute.bound = "compute";
    compute.compute_ceiling = "fp32_fma";
    r.benchmarks[0].placement = memory;
    r.benchmarks[1].placement = compute;
  }
  const History h = build_history(std::move(runs), {});
  EXPECT_EQ(of(h, "memory").flag, "ok") << render_history_text(h);
  EXPECT_EQ(of(h, "memory").steps.back().verdict, Verdict::unsure);
  EXPECT_EQ(of(h, "compute").flag, "STEP");
  EXPECT_EQ(h.exit_code(), 1);
  const std::string text = render_history_text(h);
  EXPECT_NE(text.find("UNSURE, against the best: −33.8%, but its roofs (bandwidth/dram) moved −33.2% between the same "
                      "runs: the machine changed, not the code"),
            std::string::npos)
      << text;
}

TEST(History, AStepAcrossAChangeFromColdToWarmTimingIsNotTheCodes) {
  // Twice as fast in the last run, which timed it warm (a variant declared warm since): not a
  // verdict on the code. The same step timed alike is FASTER.
  std::vector<HistoryRun> runs = runs_of({{"launch", {2, 2, 1}}, {"other", {2, 2, 1}}});
  for (auto& b : runs.back().results.benchmarks)
    if (b.variant == "launch") b.measurement->cold_cache = false;
  const History h = build_history(runs, {});
  const BenchmarkHistory& l = of(h, "launch");
  EXPECT_EQ(l.steps.back().verdict, Verdict::unsure);
  EXPECT_EQ(l.vs_best_verdict, Verdict::unsure);  // the best (run 1) was timed cold too
  EXPECT_EQ(l.vs_best_reason, "timed cold in run 1 and warm in run 3: not like for like");
  EXPECT_EQ(of(h, "other").steps.back().verdict, Verdict::faster);
  // And slower across the change: no STEP flag for it.
  runs = runs_of({{"launch", {1, 1, 2}}});
  runs.back().results.benchmarks[0].measurement->cold_cache = false;
  const History s = build_history(runs, {});
  EXPECT_EQ(of(s, "launch").flag, "ok");
  EXPECT_EQ(of(s, "launch").steps.back().verdict, Verdict::unsure);
}

TEST(History, SteadyNoiseAndImprovementsAreNotFlagged) {
  const History h = build_history(runs_of({{"noise", {1, 1.01, 0.99, 1.005, 1}}, {"better", {1, 0.9, 0.8, 0.8, 0.8}}}), {});
  EXPECT_EQ(of(h, "noise").flag, "ok");
  EXPECT_EQ(of(h, "better").flag, "ok");
  EXPECT_EQ(h.exit_code(), 0);
}

TEST(History, RunsOfAnotherDeviceAreLeftOutAndListed) {
  auto runs = runs_of({{"a", {1, 1, 1}}});
  runs[0].results.device["name"] = "Other CPU";
  const History h = build_history(runs, {});
  EXPECT_EQ(h.runs.size(), 2u);
  ASSERT_EQ(h.other_device.size(), 1u);
  EXPECT_NE(h.other_device[0].find("Other CPU"), std::string::npos);
  runs[1].results.device["name"] = "Other CPU";
  EXPECT_THROW(build_history(runs, {}), InputError);  // one run of the latest device is no history
}

TEST(History, ChartsParseAndDrawOneLinePerBenchmark) {
  const History h = build_history(runs_of({{"a", {1, 1.02, 1.1}}, {"b", {1, 1, 1}}}), {});
  const auto svgs = render_history_svgs(h);
  ASSERT_EQ(svgs.size(), 1u);
  EXPECT_EQ(svgs[0].first, "history-gemm.svg");
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(svgs[0].second.c_str()), tinyxml2::XML_SUCCESS);
  int lines = 0;
  for (auto* e = doc.RootElement()->FirstChildElement("polyline"); e; e = e->NextSiblingElement("polyline")) ++lines;
  EXPECT_EQ(lines, 2);
  const std::string md = render_history_markdown(h);
  EXPECT_EQ(md.rfind("### roofbench history: 1 of 2 benchmarks flagged", 0), 0u) << md;
  EXPECT_NE(md.find("| **STEP** | `gemm/a/fp32/n:1` |"), std::string::npos) << md;
}

TEST(History, Sparkline) {
  EXPECT_EQ(sparkline({1.0, 0.5, std::nullopt, 0.75}, 0.05), "█▁ ▅");
  EXPECT_EQ(sparkline({1.0, 0.999, 1.0}, 0.05), "███");  // inside the span: a ripple at most
}
