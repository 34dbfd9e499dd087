// A quick run of every built-in kernel with every ceiling, through the roofbench binary: its own
// binary, run alone (SERIAL): its verdict, no kernel IMPLAUSIBLE, rests on timing, and beside
// another timing test's run on 2 cores the launch lesson's OpenMP regions came out at 142% of a
// launch roof measured while both cores were taken, in all four of its passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bench/results.h"
#include "tests/cli/cli_testing.h"

using namespace roofbench::testing::cli;
namespace fs = std::filesystem;

// A quick run of every built-in kernel, with every ceiling: every output is written, and every
// roof holds. None is above its roof by more than the run's noise (the run would exit 1 and call
// it IMPLAUSIBLE), none above it by more than 3% on a quiet machine (here, beside other tests on a
// 2-core VM, the allowance is the measured noise, placement.noise), and none stops sampling at the
// sample cap: the least sampling time is wall time, so the tiny ones stop by their noise rules.
TEST(Cli, QuickCpuRunWritesEveryOutputAndReportReRendersThem) {
  const fs::path d = fresh("rb_cli_run");
  const auto t0 = std::chrono::steady_clock::now();
  // With sustained passes held 0.3 s: the whole pipeline of burst and sustained roofs.
  const CmdResult r = rb("run --device cpu --quick --budget 0.4 --sustain 0.3 --out " + d.string());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("[1/"), std::string::npos);
  EXPECT_NE(r.out.find("stream/saxpy/fp32"), std::string::npos);
  for (const char* f : {"results.json", "gbench.json", "roofline.svg", "report.html", "summary.md"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  const roofbench::Results res = roofbench::load_results((d / "results.json").string());
  EXPECT_EQ(res.device.at("kind"), "cpu");
  EXPECT_GE(res.ceilings.size(), 6u);
  int sustained = 0;
  for (const auto& c : res.ceilings) {  // measured at the start and again at the end; the roof is the best
    ASSERT_TRUE(c.measurement_end) << c.name;
    EXPECT_DOUBLE_EQ(c.value, std::max({c.value_start, *c.value_end, c.value_again.value_or(0),
                                        c.value_brief.value_or(0), c.value_sustained.value_or(0)}))
        << c.name;
    if (!c.measurement_sustained) continue;
    ++sustained;  // and the FP32 FMA and DRAM read roofs held under load first
    EXPECT_GE(c.measurement_sustained->held_s, 0.3) << c.name;
    EXPECT_NE(c.method.find("sustained"), std::string::npos) << c.method;
  }
  EXPECT_EQ(sustained, 2);
  EXPECT_NE(r.out.find("sustained: FP32 FMA"), std::string::npos) << r.out;
  EXPECT_NE(slurp(d / "summary.md").find("**Burst and sustained roofs**"), std::string::npos);
  EXPECT_NE(slurp(d / "roofline.svg").find("class=\"sustained-roof\""), std::string::npos);
  int placed = 0;
  for (const auto& b : res.benchmarks) {
    ASSERT_TRUE(b.verified()) << b.name << ": " << b.error;
    EXPECT_TRUE(b.recheck && b.recheck->ok) << b.name;
    EXPECT_NE(b.measurement->stop_reason, "max_samples") << b.name;
    if (!b.placement) continue;
    ++placed;
    EXPECT_FALSE(b.implausible()) << b.name;
    EXPECT_LE(b.placement->roof_pct, 100 * (1 + std::max(0.03, b.placement->noise))) << b.name;
  }
  EXPECT_GE(placed, 20);  // every family placed (23 kernels of a quick run here)
  EXPECT_FALSE(res.provenance.at("command_line").get<std::string>().empty());
  // The run's own length, in the file: most of the command's time (ceilings twice, the kernels),
  // and never more than it.
  const double wall = res.provenance.at("wall_s").get<double>();
  EXPECT_GT(wall, 0.5 * took) << took;
  EXPECT_LE(wall, took);
  const auto gb = nlohmann::json::parse(slurp(d / "gbench.json"));
  EXPECT_GE(gb.at("benchmarks").size(), res.benchmarks.size());
  EXPECT_TRUE(gb["benchmarks"].back().contains("FLOP/s"));

  // report: from results.json alone, into another folder, byte for byte the same reports.
  const fs::path d2 = fresh("rb_cli_rerender");
  const CmdResult rep = rb("report " + (d / "results.json").string() + " --out " + d2.string());
  ASSERT_EQ(rep.code, 0) << rep.err;
  for (const char* f : {"roofline.svg", "report.html", "summary.md"}) EXPECT_EQ(slurp(d / f), slurp(d2 / f)) << f;
}

