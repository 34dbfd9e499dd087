// What the host took from a run (bench/host_contention.h): /proc/stat's steal and a cgroup's CPU
// quota, read from trees laid out here as cgroup v1 and v2 lay them out (the machine's own are
// read by every run: Cli.QuickCpuRun… checks that its file carries the record), the differences
// and shares a run records, and the words the console and the reports give them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bench/host_contention.h"
#include "tests/testing.h"

using namespace roofbench;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

fs::path tree(const std::string& name) {
  const fs::path root = roofbench::testing::scratch_path("host_contention_" + name);
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

// /proc/stat of two CPUs whose aggregate line has `steal_ticks` in its eighth column.
std::string proc_stat(long steal_ticks) {
  return "cpu  3044052 3001 596779 1052982 7044 0 1100 " + std::to_string(steal_ticks) +
         " 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 1 2 3 4 5 6 7 8 0 0\nintr 1 2 3\n";
}

double ticks() { return static_cast<double>(::sysconf(_SC_CLK_TCK)); }

}  // namespace

TEST(HostContention, CgroupV1ReadsTheProcessGroupsThrottlingAndQuota) {
  const fs::path root = tree("v1");
  write(root / "proc/stat", proc_stat(250));
  write(root / "proc/self/cgroup", "4:memory:/job\n3:cpu,cpuacct:/ci/job7\n0::/\n");
  const fs::path dir = root / "sys/fs/cgroup/cpu,cpuacct/ci/job7";
  write(dir / "cpu.stat", "nr_periods 900\nnr_throttled 452\nthrottled_time 2568319577\n");
  write(dir / "cpu.cfs_quota_us", "5000\n");
  write(dir / "cpu.cfs_period_us", "8000\n");
  const ContentionReading r = read_contention(root.string());
  ASSERT_TRUE(r.steal_s);
  EXPECT_DOUBLE_EQ(*r.steal_s, 250 / ticks());
  EXPECT_EQ(r.steal_cpus, 2);
  ASSERT_TRUE(r.throttled_s && r.throttled_periods && r.quota_cpus) << r.cgroup_source;
  EXPECT_DOUBLE_EQ(*r.throttled_s, 2.568319577);
  EXPECT_EQ(*r.throttled_periods, 452);
  EXPECT_EQ(r.periods, 900);
  EXPECT_DOUBLE_EQ(*r.quota_cpus, 0.625);
  EXPECT_EQ(r.cgroup_source, "/sys/fs/cgroup/cpu,cpuacct/ci/job7/cpu.stat");
}

TEST(HostContention, AGroupNotVisibleIsReadAtTheMountsRootAndNoQuotaIsNone) {
  // In a container the group's path names the host's tree; what is mounted is its own.
  const fs::path root = tree("v1_root");
  write(root / "proc/stat", proc_stat(0));
  write(root / "proc/self/cgroup", "1:cpu:/docker/abc\n");
  write(root / "sys/fs/cgroup/cpu/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
  write(root / "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  write(root / "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  const ContentionReading r = read_contention(root.string());
  EXPECT_EQ(r.cgroup_source, "/sys/fs/cgroup/cpu/cpu.stat");
  ASSERT_TRUE(r.throttled_s);
  EXPECT_EQ(*r.throttled_s, 0);
  EXPECT_FALSE(r.quota_cpus);
}

TEST(HostContention, CgroupV2ReadsThrottledUsecAndCpuMax) {
  const fs::path root = tree("v2");
  write(root / "proc/stat", proc_stat(10));
  write(root / "proc/self/cgroup", "0::/runner.slice/job.scope\n");
  write(root / "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  const fs::path dir = root / "sys/fs/cgroup/runner.slice/job.scope";
  write(dir / "cpu.stat", "usage_usec 1000\nuser_usec 800\nsystem_usec 200\nnr_periods 10\nnr_throttled 4\n"
                          "throttled_usec 1500000\n");
  write(dir / "cpu.max", "150000 100000\n");
  const ContentionReading r = read_contention(root.string());
  ASSERT_TRUE(r.throttled_s && r.throttled_periods && r.quota_cpus) << r.cgroup_source;
  EXPECT_DOUBLE_EQ(*r.throttled_s, 1.5);
  EXPECT_EQ(*r.throttled_periods, 4);
  EXPECT_DOUBLE_EQ(*r.quota_cpus, 1.5);
  // "max": no quota.
  write(dir / "cpu.max", "max 100000\n");
  EXPECT_FALSE(read_contention(root.string()).quota_cpus);
  // A v2 group without the cpu controller has a cpu.stat without throttling counts: none read.
  write(dir / "cpu.stat", "usage_usec 1000\nuser_usec 800\nsystem_usec 200\n");
  write(root / "sys/fs/cgroup/cpu.stat", "usage_usec 1000\n");
  const ContentionReading none = read_contention(root.string());
  EXPECT_FALSE(none.throttled_s);
  EXPECT_EQ(none.cgroup_source.rfind("unavailable: no cgroup cpu.stat with throttling counts (cgroup v2", 0), 0u)
      << none.cgroup_source;
}

TEST(HostContention, WhatCannotBeReadIsSaidAndNeverMadeUp) {
  const fs::path root = tree("none");
  ContentionReading r = read_contention(root.string());
  EXPECT_FALSE(r.steal_s);
  EXPECT_FALSE(r.throttled_s);
  EXPECT_EQ(r.cgroup_source, "unavailable: no /proc/self/cgroup");
  // A /proc/stat without per-CPU lines: no steal (a share of no CPUs); a short aggregate line: none.
  write(root / "proc/stat", "cpu  1 2 3 4 5 6 7 8 0 0\n");
  EXPECT_FALSE(read_contention(root.string()).steal_s);
  write(root / "proc/stat", "cpu  1 2 3 4\ncpu0 1 2 3 4\n");
  EXPECT_FALSE(read_contention(root.string()).steal_s);
  write(root / "proc/stat", "cpu  1 2 3 4 5 6 7 800 0 0\ncpu0 1 2 3 4\n");
  EXPECT_TRUE(read_contention(root.string()).steal_s);  // (the two checks above can fail)
  // A malformed quota: no quota figure; the group's counts are still read.
  write(root / "proc/self/cgroup", "1:cpu:/\n");
  write(root / "sys/fs/cgroup/cpu/cpu.stat", "nr_periods 9\nnr_throttled 3\nthrottled_time 7\n");
  write(root / "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "lots\n");
  write(root / "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  r = read_contention(root.string());
  EXPECT_FALSE(r.quota_cpus);
  EXPECT_EQ(r.throttled_periods, 3);
  EXPECT_EQ(r.cgroup_source, "/sys/fs/cgroup/cpu/cpu.stat");
  // A count no integer holds: none.
  write(root / "sys/fs/cgroup/cpu/cpu.stat", "nr_periods 9\nnr_throttled 1e300\nthrottled_time 7\n");
  EXPECT_FALSE(read_contention(root.string()).throttled_periods);
  EXPECT_FALSE(read_throttled_periods((root / "sys/fs/cgroup/cpu/cpu.stat").string()));
  EXPECT_FALSE(read_throttled_periods((root / "no/such/cpu.stat").string()));
}

TEST(HostContention, ARunRecordsTheDifferencesAndTheirSharesOfTheCpusTime) {
  ContentionReading start, end;
  start.steal_s = 10;
  end.steal_s = 12;  // 2 s of 4 CPUs' 10 s
  start.steal_cpus = end.steal_cpus = 4;
  start.throttled_s = 1;
  end.throttled_s = 7;  // 6 s of the run's 2 CPUs' 10 s
  start.throttled_periods = 100;
  end.throttled_periods = 160;
  start.periods = 1000;
  end.periods = 1200;  // 60 of 200 periods throttled
  end.quota_cpus = 1.25;
  start.cgroup_source = end.cgroup_source = "/sys/fs/cgroup/cpu/cpu.stat";
  const nlohmann::json j = contention_json(start, end, 10, 2);
  EXPECT_DOUBLE_EQ(j.at("steal_s").get<double>(), 2);
  EXPECT_DOUBLE_EQ(j.at("steal_share").get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j.at("throttled_s").get<double>(), 6);
  EXPECT_DOUBLE_EQ(j.at("throttled_share").get<double>(), 0.3);
  EXPECT_EQ(j.at("throttled_periods"), 60);
  EXPECT_EQ(j.at("periods"), 200);
  EXPECT_DOUBLE_EQ(j.at("throttled_period_share").get<double>(), 0.3);
  EXPECT_EQ(j.at("quota_cpus"), 1.25);
  EXPECT_EQ(j.at("cgroup_source"), "/sys/fs/cgroup/cpu/cpu.stat");
  EXPECT_EQ(contention_text(j, 0.01, true), "the host took 5% (steal) and 30% (CPU quota)");
  const auto line = contention_text(j);
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("5% of the CPUs' time stolen by the hypervisor (2.0 s)"), std::string::npos) << *line;
  EXPECT_NE(line->find("30% throttled by the cgroup's CPU quota of 1.25 CPUs (6.0 s, in 60 of 200 periods)"),
            std::string::npos)
      << *line;
  EXPECT_NE(line->find("a roof may be measured low"), std::string::npos) << *line;
  // Below the threshold either way: nothing said; one above: that one alone.
  EXPECT_FALSE(contention_text(j, 0.5));
  EXPECT_EQ(contention_text(j, 0.1, true), "the host took 30% (CPU quota)");

  // A counter unreadable at either end, or one that went back (a group changed): null, no share.
  ContentionReading back = end;
  back.throttled_s = 0.5;
  back.throttled_periods.reset();
  back.steal_s.reset();
  const nlohmann::json k = contention_json(start, back, 10, 2);
  EXPECT_TRUE(k.at("steal_s").is_null() && k.at("steal_share").is_null());
  EXPECT_TRUE(k.at("throttled_s").is_null() && k.at("throttled_share").is_null());
  EXPECT_TRUE(k.at("throttled_periods").is_null());
  EXPECT_FALSE(contention_text(k, 0));
  EXPECT_FALSE(contention_text(nlohmann::json(), 0));  // a file written before the record

  // One busy thread of a run on many CPUs: throttled in most periods, in little of all the CPUs'
  // time. The larger share is said.
  const nlohmann::json one = contention_json(start, end, 10, 64);
  EXPECT_DOUBLE_EQ(one.at("throttled_share").get<double>(), 6.0 / 640);
  EXPECT_EQ(contention_text(one, 0.1, true), "the host took 30% (CPU quota)");

  // Readings of two groups (the process moved): no differences of theirs.
  ContentionReading moved = end;
  moved.cgroup_source = "/sys/fs/cgroup/cpu/other/cpu.stat";
  const nlohmann::json m = contention_json(start, moved, 10, 2);
  EXPECT_TRUE(m.at("throttled_s").is_null() && m.at("throttled_periods").is_null() && m.at("periods").is_null());
  EXPECT_DOUBLE_EQ(m.at("steal_s").get<double>(), 2);  // (steal is the machine's)

  // A hand-edited file: numbers of any size, strings where numbers go; said or left out, never thrown.
  nlohmann::json odd = j;
  odd["throttled_periods"] = 1e300;
  odd["periods"] = "many";
  odd["quota_cpus"] = "two";
  const auto said = contention_text(odd);
  ASSERT_TRUE(said);
  EXPECT_NE(said->find("30% throttled by the cgroup's CPU quota (6.0 s)"), std::string::npos) << *said;
}
