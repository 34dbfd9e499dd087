// roofbench fleet on synthetic results: groups by model, flags the low device with its figures.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "reports/fleet.h"
#include "reports/history.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

// A GPU of `model` at `host`/index with its DRAM ceiling at `dram` B/s and one kernel of 1 GFLOP
// taking `kernel_s`.
FleetMember gpu(const std::string& model, const std::string& host, int index, double dram, double kernel_s) {
  Results r = sample_results();
  r.device = {{"kind", "cuda"}, {"name", model}, {"index", index}, {"uuid", fmt::format("{:08x}aaaa", index + 1)},
              {"ecc", true}};
  r.provenance["host"] = host;
  r.ceilings[0].value = dram;  // dram_update
  r.benchmarks = {kernel("naive", 1e9, 1e6, kernel_s)};
  return {fmt::format("{}/gpu{}/results.json", host, index), "", r};
}

const FleetGroup& group(const Fleet& f, const std::string& model) {
  for (const auto& g : f.groups)
    if (g.model == model) return g;
  throw std::runtime_error("no group " + model);
}

}  // namespace

TEST(Fleet, FlagsExactlyTheDeviceBelowTheMedianWithTheFiguresThatFlagIt) {
  std::vector<FleetMember> m;
  for (int i = 0; i < 8; ++i) m.push_back(gpu("NVIDIA H100 80GB HBM3", "node1", i, i == 5 ? 80e9 : 100e9 + i * 1e8, 1e-3));
  m[5].results.benchmarks[0].measurement->clock_limits = {"SW power cap"};
  const Fleet f = build_fleet(std::move(m), FleetOptions{});
  ASSERT_EQ(f.groups.size(), 1u);
  const FleetGroup& g = f.groups[0];
  EXPECT_TRUE(g.judged);
  EXPECT_EQ(f.flagged(), 1);
  EXPECT_EQ(f.exit_code(), 1);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(g.why[i].empty(), i != 5) << i;
  ASSERT_EQ(g.why[5].size(), 1u);
  EXPECT_NE(g.why[5][0].find("ceiling dram_update: 80.0 GB/s against the median 100 GB/s, 20."), std::string::npos)
      << g.why[5][0];
  EXPECT_EQ(g.members[5].label, "node1 cuda:5 00000006");
  EXPECT_EQ(g.state[5], "ECC on; clock limits: SW power cap (1 measurement)");
  EXPECT_EQ(g.state[0], "ECC on");
  // Every report says which device and why.
  EXPECT_NE(render_fleet_text(f).find("OUTLIER  node1 cuda:5 00000006"), std::string::npos) << render_fleet_text(f);
  EXPECT_NE(render_fleet_markdown(f).find("| **OUTLIER** | node1 cuda:5 00000006 |"), std::string::npos);
  EXPECT_NE(render_fleet_html(f).find("class=\"low\">80.0 GB/s"), std::string::npos);
  const auto j = fleet_json(f);
  EXPECT_EQ(j["flagged"], 1);
  EXPECT_EQ(j["groups"][0]["devices"][5]["outlier"], true);
  EXPECT_EQ(j["groups"][0]["devices"][4]["outlier"], false);
}

TEST(Fleet, ModelsAreGroupedNeverComparedAndGroupsOfTwoAreNotJudged) {
  std::vector<FleetMember> m;
  for (int i = 0; i < 3; ++i) m.push_back(gpu("NVIDIA H100 80GB HBM3", "a", i, 100e9, 1e-3));
  for (int i = 0; i < 2; ++i) m.push_back(gpu("NVIDIA H200", "b", i, i ? 140e9 : 100e9, 1e-3));  // 29% apart
  const Fleet f = build_fleet(std::move(m), FleetOptions{});
  ASSERT_EQ(f.groups.size(), 2u);
  EXPECT_TRUE(group(f, "cuda: NVIDIA H100 80GB HBM3").judged);
  EXPECT_FALSE(group(f, "cuda: NVIDIA H200").judged);
  EXPECT_EQ(f.flagged(), 0);
  EXPECT_EQ(f.exit_code(), 0);
  EXPECT_NE(render_fleet_text(f).find("NVIDIA H200: 2 devices (fewer than three: shown, not judged)"),
            std::string::npos);
}

TEST(Fleet, ASlowKernelFlagsItsDeviceAndTheMadRuleCatchesWhatTheThresholdMisses) {
  std::vector<FleetMember> m;
  for (int i = 0; i < 6; ++i) m.push_back(gpu("H", "n", i, 100e9, i == 2 ? 1.04e-3 : 1e-3 * (1 + 0.001 * i)));
  // 4% slower: within 5% of the median, but far outside the others' spread (0.1% apart).
  FleetOptions plain;
  EXPECT_EQ(build_fleet(m, plain).flagged(), 0);
  FleetOptions mad;
  mad.mad_k = 5;
  const Fleet f = build_fleet(m, mad);
  EXPECT_EQ(f.flagged(), 1);
  ASSERT_FALSE(f.groups[0].why[2].empty());
  EXPECT_NE(f.groups[0].why[2][0].find("kernel gemm/naive/fp32/n:1"), std::string::npos) << f.groups[0].why[2][0];
  EXPECT_NE(f.groups[0].why[2][0].find("robust sigmas"), std::string::npos);
  FleetOptions bad;
  bad.threshold = 0;
  EXPECT_THROW(build_fleet(m, bad), InputError);
}

// The MAD rule in robust sigmas (1.4826 MAD, the normal's sd): DRAM ceilings of 98-102 GB/s and
// one more device; the median is 100 GB/s and the MAD 1 GB/s, so k = 2 flags 2.97 GB/s below it,
// not 2.5 (which 2 raw MADs would).
TEST(Fleet, TheMadRuleCountsRobustSigmasNotRawDeviations) {
  FleetOptions opt;
  opt.mad_k = 2;
  for (const double last : {97.5e9, 96.5e9}) {
    std::vector<FleetMember> m;
    const std::vector<double> dram = {98e9, 99e9, 100e9, 100e9, 101e9, 102e9, last};
    for (std::size_t i = 0; i < dram.size(); ++i) m.push_back(gpu("H", "n", static_cast<int>(i), dram[i], 1e-3));
    const Fleet f = build_fleet(std::move(m), opt);
    const auto& why = f.groups[0].why[6];
    if (last == 97.5e9) {
      EXPECT_TRUE(why.empty()) << why[0];  // 2.5 GB/s below: 1.7 robust sigmas, and 2.5% (under 5%)
    } else {
      ASSERT_EQ(why.size(), 1u);
      EXPECT_NE(why[0].find("(2.4 robust sigmas)"), std::string::npos) << why[0];  // 3.5 / 1.4826
    }
  }
}

// A device low in several figures is one flagged device, with a reason for each.
TEST(Fleet, ADeviceLowInTwoFiguresIsFlaggedOnce) {
  std::vector<FleetMember> m;
  for (int i = 0; i < 5; ++i) m.push_back(gpu("H", "n", i, i == 1 ? 80e9 : 100e9, i == 1 ? 1.3e-3 : 1e-3));
  const Fleet f = build_fleet(std::move(m), FleetOptions{});
  EXPECT_EQ(f.groups[0].why[1].size(), 2u);
  EXPECT_EQ(f.flagged(), 1);
  EXPECT_EQ(fleet_json(f)["flagged"], 1);
}

TEST(Fleet, RunsOfOneDeviceAreToldApartByTheirFolders) {
  std::vector<FleetMember> m;
  for (const char* dir : {"x/run-a", "x/run-b", "x/run-c"}) {
    FleetMember one = gpu("H", "same-host", 0, 100e9, 1e-3);
    one.path = std::string(dir) + "/results.json";
    m.push_back(one);
  }
  const Fleet f = build_fleet(std::move(m), FleetOptions{});
  EXPECT_EQ(f.groups[0].members[1].label, "run-b");
}

TEST(Fleet, LoadsFilesAndFoldersAndRefusesFewerThanTwo) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("roofbench-fleet-{}", ::getpid());
  fs::remove_all(dir);
  // A run folder's hidden generations (.roofbench/gen-*/results.json, which its visible files link
  // to) are the same run again: never a device of their own.
  for (const char* sub : {"n1/gpu0", "n1/gpu1", "n2/gpu0", "n1/gpu0/.roofbench/gen-1"}) {
    fs::create_directories(dir / sub);
    Results r = sample_results();
    apply_model(r);
    std::ofstream(dir / sub / "results.json") << dump_results(r);
  }
  EXPECT_EQ(load_fleet({dir.string()}).size(), 3u);
  EXPECT_EQ(load_fleet({(dir / "n1/gpu0").string(), (dir / "n2").string()}).size(), 2u);
  EXPECT_THROW(load_fleet({(dir / "n2").string()}), InputError);
  EXPECT_THROW(load_fleet({(dir / "nowhere").string(), (dir / "n1").string()}), InputError);
  // A file named twice (itself, its folder, a folder above it) is one device, counted once.
  const std::string one = (dir / "n1/gpu0/results.json").string();
  EXPECT_EQ(load_fleet({one, one, (dir / "n1/gpu0").string(), (dir / "n1").string()}).size(), 2u);
  EXPECT_THROW(load_fleet({one, one, one}), InputError);  // one device is no fleet
  // history reads a folder the same way.
  EXPECT_EQ(load_history({dir.string()}).size(), 3u);
  fs::remove_all(dir);
}
