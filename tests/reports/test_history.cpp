// roofbench history on synthetic series: a creep of small steps, one large step, steady noise.
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "bench/stats.h"
#include "reports/history.h"
#include "roofbench/splitmix.h"
#include "roofbench/version.h"
#include "roofline/model.h"
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

// ---- change points, on real noise -------------------------------------------------------------
// The noise is the committed AMD EPYC and Xeon (504 MiB L3) baselines' (written by the suite on
// those machines): each kernel timed at least 300 times has its samples cut, in the order taken, into 30 "runs" of equal count,
// the chunks put in an order shuffled from a seed (a series with no step of its own: its runs are
// exchangeable), and each run's rate the work over its chunk's median time.
namespace {

struct RealSeries {
  std::string file, name;
  std::vector<std::vector<double>> runs;  // each run's samples (seconds), in the shuffled order
  double work = 0;                        // FLOPs or bytes: what the rate counts
};

std::vector<RealSeries> real_noise_series(int runs, std::uint64_t seed) {
  std::vector<RealSeries> out;
  for (const char* baseline : {"cpu-amd-epyc-2c", "cpu-intel-xeon-2c-avx512-l3-504m"}) {
  const std::string file = std::string(ROOFBENCH_SOURCE_DIR) + "/reports/baselines/" + baseline + "/results.json.xz";
  const Results r = read_results(file);
  for (const auto& b : r.benchmarks) {
    if (!b.measurement || b.measurement->samples_s.size() < 10u * static_cast<std::size_t>(runs)) continue;
    const auto& s = b.measurement->samples_s;
    const std::size_t k = s.size() / static_cast<std::size_t>(runs);
    RealSeries x{file, b.name, {}, b.flops > 0 ? b.flops : b.bytes};
    for (int i = 0; i < runs; ++i)
      x.runs.emplace_back(s.begin() + static_cast<std::ptrdiff_t>(i * k), s.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
    std::uint64_t state = seed + out.size();
    for (std::size_t i = x.runs.size() - 1; i > 0; --i) std::swap(x.runs[i], x.runs[splitmix64(state) % (i + 1)]);
    out.push_back(std::move(x));
  }
  }
  return out;
}

std::vector<double> rates_of(const RealSeries& x, int step_at, double slower) {
  std::vector<double> rates;
  for (std::size_t i = 0; i < x.runs.size(); ++i) {
    std::vector<double> t = x.runs[i];
    std::sort(t.begin(), t.end());
    const double median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
    rates.push_back(x.work / (median * (static_cast<int>(i) >= step_at ? slower : 1.0)));
  }
  return rates;
}

}  // namespace

TEST(History, APlantedTenPercentStepInRealNoiseIsFoundAtTheRightRun) {
  const std::vector<RealSeries> all = real_noise_series(30, 2026);
  ASSERT_GE(all.size(), 15u) << "the two baselines have kernels timed 300 times and more";
  int judged = 0;
  for (const RealSeries& x : all) {
    // A kernel whose run-to-run noise is comparable to the step cannot show it: judged are those
    // whose 30 run medians spread (IQR / median) under 3%, a third of the step.
    const SampleStats spread = summarize(rates_of(x, 30, 1.0));
    if ((spread.q3 - spread.q1) / spread.median >= 0.03) continue;
    ++judged;
    const std::vector<ChangePoint> found = change_points(rates_of(x, 18, 1.10), 0.01);
    ASSERT_EQ(found.size(), 1u) << x.name << ": " << found.size() << " change points";
    EXPECT_EQ(found[0].index, 18) << x.name;  // the first run after the step
    EXPECT_LT(found[0].p, 0.01) << x.name;
    EXPECT_NEAR(found[0].after / found[0].before, 1 / 1.10, 0.03) << x.name;
  }
  std::printf("%d kernels judged: each found its planted step at run 19, and nothing else\n", judged);
  EXPECT_GE(judged, 5) << "too few kernels with real noise under 3% to judge";
}

TEST(History, ASeriesOfRealNoiseWithNoStepReportsNoneInAtLeast95Of100Shuffles) {
  // Every kernel that qualifies, each in 100 orders of its runs: at most 5 in 100 report a change.
  const std::vector<RealSeries> first = real_noise_series(30, 1);
  ASSERT_GE(first.size(), 15u);
  std::vector<int> false_alarms(first.size(), 0);
  for (std::uint64_t shuffle = 0; shuffle < 100; ++shuffle) {
    const std::vector<RealSeries> all = real_noise_series(30, 1000 + 97 * shuffle);
    for (std::size_t k = 0; k < all.size(); ++k)
      false_alarms[k] += !change_points(rates_of(all[k], 30, 1.0), 0.01, 499, 3, shuffle + 1).empty();
  }
  int total = 0;
  for (std::size_t k = 0; k < first.size(); ++k) {
    EXPECT_LE(false_alarms[k], 5) << first[k].name << ": a change point in " << false_alarms[k] << " of 100 shuffles";
    total += false_alarms[k];
  }
  std::printf("%d change points in %zu series of real noise with no step (100 shuffles of %zu kernels)\n", total,
              100 * first.size(), first.size());
  // Over every kernel together, about the significance level (0.01) a series.
  EXPECT_LE(total, static_cast<int>(0.03 * 100 * first.size())) << total << " false alarms in " << 100 * first.size();
}

TEST(History, HistoryNamesTheFirstRunAfterTheStepOverAFolderOfRealRuns) {
  // 30 runs of a baseline, one kernel's samples the chunks of its real noise, 10% slower
  // from run 19 (index 18): history names run 19 and its commit, and nothing for the others.
  const std::vector<RealSeries> all = real_noise_series(30, 2026);
  const RealSeries* x = nullptr;
  for (const auto& s : all) {
    const SampleStats spread = summarize(rates_of(s, 30, 1.0));
    if ((spread.q3 - spread.q1) / spread.median < 0.03) x = &s;
  }
  ASSERT_TRUE(x);
  const Results base = read_results(x->file);
  std::vector<HistoryRun> runs;
  for (int i = 0; i < 30; ++i) {
    HistoryRun run{fmt::format("run{}/results.json", i), fmt::format("c{:02}", i), fmt::format("t{:02}", i), {}};
    run.results.device = base.device;
    run.results.provenance = base.provenance;
    run.results.ceilings = base.ceilings;
    for (const auto& b : base.benchmarks)
      if (b.name == x->name) {
        BenchmarkResult c = b;
        c.measurement->samples_s = x->runs[static_cast<std::size_t>(i)];
        for (double& t : c.measurement->samples_s) t *= i >= 18 ? 1.10 : 1.0;
        c.measurement->sample_clock_hz.clear();
        c.measurement->throttled.clear();
        c.measurement->stats = summarize(c.measurement->samples_s);
        run.results.benchmarks.push_back(c);
      }
    apply_model(run.results);
    runs.push_back(std::move(run));
  }
  const History h = build_history(std::move(runs), {});
  ASSERT_EQ(h.benchmarks.size(), 1u);
  ASSERT_EQ(h.benchmarks[0].change_points.size(), 1u);
  EXPECT_EQ(h.benchmarks[0].change_points[0].index, 18);
  const std::string text = render_history_text(h);
  EXPECT_NE(text.find(x->name + ": run 19 (c18, t18): −"), std::string::npos) << text;
  const ChangePoint& c = h.benchmarks[0].change_points[0];
  EXPECT_NEAR(c.after / c.before, 1 / 1.10, 0.03);
  EXPECT_NE(text.find("Change points: where a kernel's rate stepped over the 30 runs"), std::string::npos) << text;
  const std::string md = render_history_markdown(h);
  EXPECT_NE(md.find("| 19 (`c18`, t18) |"), std::string::npos) << md;
}

TEST(History, ChangePointsAreNotSoughtInSeriesTooShortAndTheTextSaysNone) {
  std::vector<double> steady(5, 1.0);
  const History h = build_history(runs_of({{"steady", steady}}), {});
  EXPECT_TRUE(of(h, "steady").change_points.empty());
  EXPECT_NE(render_history_text(h).find("at least 3 runs a side): none"), std::string::npos);
  EXPECT_TRUE(change_points({1, 1, 1, 2, 2}, 0.05).empty());  // fewer than 2 × 3 values
  EXPECT_THROW(change_points({1, 2, 3}, 0.05, 499, 1), std::invalid_argument);
}
