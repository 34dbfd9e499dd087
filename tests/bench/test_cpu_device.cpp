// The CPU device's cache flush: after flush_cache(), what a kernel reads must come from DRAM.
// (And, at the end, the samples it names as having waited for the cgroup's CPU quota.)
// Without a working flush every cold sample is warm, and kernels that fit in a cache show 130-220%
// of their DRAM roof (a planted `return;` at the top of flush_cache() once went unnoticed by
// every other test). Bandwidth on a shared VM moves, so every comparison is of medians over
// interleaved repeats, against a margin several times smaller than what a missing flush costs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include "bench/cpu_info.h"
#include "bench/device.h"
#include "bench/harness.h"
#include "bench/host_contention.h"
#include "bench/stats.h"
#include "roofbench/host_buffer.h"

using namespace roofbench;

namespace {

volatile std::uint64_t g_sink = 0;

// Seconds per byte to read `words` of `p` on this thread, one word per 64-byte line (a line is
// what a cache holds): a cached line costs a cycle or two, a line from DRAM tens of them. One
// thread: a team of two waits for its slower member, and beside another test on a 2-core VM that
// is a time slice (a 2 MiB read then took 8 ms, warm or not).
double read_seconds_per_byte(const std::uint64_t* p, std::size_t words) {
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four chains: loads in flight, as a stream has
  std::size_t i = 0;
  for (; i + 32 <= words; i += 32) s0 += p[i], s1 += p[i + 8], s2 += p[i + 16], s3 += p[i + 24];
  for (; i < words; i += 8) s0 += p[i];
  const std::uint64_t sum = s0 + s1 + s2 + s3;
  const auto t1 = std::chrono::steady_clock::now();
  g_sink = sum;
  return std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(words * sizeof(std::uint64_t));
}

struct Buffer {
  explicit Buffer(std::size_t bytes) : words(bytes / sizeof(std::uint64_t)), data(words) {
    std::fill(data.data(), data.data() + words, 1);  // touched: its pages exist before it is timed
  }
  std::size_t words;
  HostBuffer<std::uint64_t> data;
};

struct Reads {
  double warm, flushed, dram;  // median seconds per byte
};

// `rounds` interleaved rounds: the buffer read right after reading it (warm), read right after
// flush_cache() (flushed), and a buffer twice the flush's size read cold (DRAM: no cache of
// this machine holds it, whatever the flush does), timed in pieces of the buffer's size: a
// read as long as the others, so that beside other tests it loses as much to time slices (read
// whole, 200 ms on a loaded 2-core VM lost half its time and came out at 5.6 GB/s, below a
// flushed 1 MiB read's 12.6).
Reads measure(Device& dev, const Buffer& b, const Buffer& big, int rounds) {
  std::vector<double> warm, flushed, dram;
  for (int r = 0; r < rounds; ++r) {
    read_seconds_per_byte(b.data.data(), b.words);
    warm.push_back(read_seconds_per_byte(b.data.data(), b.words));
    dev.flush_cache();
    flushed.push_back(read_seconds_per_byte(b.data.data(), b.words));
    for (std::size_t at = 0; at + b.words <= big.words; at += b.words)
      dram.push_back(read_seconds_per_byte(big.data.data() + at, b.words));
  }
  return {quantile(warm, 0.5), quantile(flushed, 0.5), quantile(dram, 0.5)};
}

}  // namespace

TEST(CpuDevice, AfterAFlushACacheSizedReadRunsAtDramSpeedNotCacheSpeed) {
  const CpuInfo& cpu = cpu_info();
  const auto dev = make_cpu_device();
  ASSERT_GT(cpu.l2_bytes, 0u) << "no L2 size: the test cannot size its buffers";
  ASSERT_GT(cpu.llc_bytes, 0u) << "no last-level cache size: the test cannot size its buffers";
  const Buffer big(2 * dev->flush_bytes());
  // Two sizes: half of what a core's L2 holds (where a flush that does nothing is plainest: an L2
  // line costs a few cycles), and about the last-level cache's size.
  for (const std::size_t bytes : {cpu.l2_bytes / 2, cpu.llc_bytes}) {
    const Buffer b(bytes);
    const Reads r = measure(*dev, b, big, 7);
    SCOPED_TRACE(::testing::Message() << "a read of " << bytes / 1024 << " KiB: warm " << 1 / r.warm / 1e9
                                      << " GB/s, after flush_cache() " << 1 / r.flushed / 1e9 << " GB/s, DRAM "
                                      << 1 / r.dram / 1e9 << " GB/s");
    // At DRAM speed: no faster than half again a read that no cache holds. A read that the
    // flush left in cache runs several times faster than DRAM from the L2, and at L3 speed where
    // the L3 is faster than DRAM.
    EXPECT_GE(r.flushed, r.dram / 1.5) << "the flushed read ran faster than DRAM: flush_cache() left it in cache";
    if (bytes < cpu.llc_bytes) {
      // The test can see a cache at all: the same read warm is clearly faster than from DRAM
      // (else the first check could not fail, and proves nothing).
      EXPECT_LT(r.warm, r.dram / 2) << "a warm L2-sized read was not faster than DRAM: this test cannot tell a flush "
                                       "from none on this machine";
    }
  }
}

namespace {

// A sample of `busy` wall time on this thread.
class Spin final : public Instance {
 public:
  explicit Spin(std::chrono::microseconds busy) : busy_(busy) {}
  void prepare(std::uint64_t) override {}
  void run() override {
    const auto end = std::chrono::steady_clock::now() + busy_;
    std::uint64_t n = 0;
    while (std::chrono::steady_clock::now() < end) ++n;
    g_sink = n;
  }

 private:
  std::chrono::microseconds busy_;
};

// Writes `text` to a cgroup file; false (and why in *err) where the kernel refused it.
bool write_text(const std::filesystem::path& p, const std::string& text, std::string* err) {
  std::ofstream out(p);
  out << text;
  out.flush();
  if (out.good()) return true;
  *err = "writing '" + text + "' to " + p.string() + " failed";
  return false;
}

std::size_t quota_samples(const Measurement& m) {
  return static_cast<std::size_t>(std::count_if(m.sample_clock_limits.begin(), m.sample_clock_limits.end(),
                                                [](const std::string& l) { return l == "cpu_quota"; }));
}

}  // namespace

// A sample that waited for the cgroup's CPU quota is named ("cpu_quota", from cpu.stat's
// nr_throttled read around it) and the measurement says how many did. This process moves itself
// into a cgroup v1 cpu group of its own (under its own), 2 ms a period of 8 ms, and samples 3 ms
// of busy time: every sample outlasts the quota. Then, with no quota, none is named. Skipped,
// saying why, where no such group can be made (not root, or cgroup v2).
TEST(CpuDevice, ASampleThatWaitedForItsCgroupsCpuQuotaIsNamed) {
  namespace fs = std::filesystem;
  // This process's group, as a run finds it (bench/host_contention.h): its cpu.stat's folder.
  const std::string stat = read_contention().cgroup_source;
  const fs::path home = fs::path(stat).parent_path();
  const fs::path group = home / ("roofbench_test_" + std::to_string(::getpid()));
  std::error_code ec;
  if (stat.rfind('/', 0) != 0 || !fs::is_regular_file(home / "cgroup.procs") ||
      !fs::is_regular_file(home / "cpu.cfs_quota_us"))
    GTEST_SKIP() << "no cgroup v1 cpu group of this process (" << stat << "; cgroup v2, or none mounted)";
  if (!fs::create_directory(group, ec))
    GTEST_SKIP() << "cannot make a cgroup at " << group << ": " << (ec ? ec.message() : "it is there already");
  std::string err;
  struct Leave {  // back to its own group, the quota lifted and the group removed, whatever happens
    fs::path home, group;
    ~Leave() {
      std::string e;
      if (!write_text(group / "cpu.cfs_quota_us", "-1", &e) ||
          !write_text(home / "cgroup.procs", std::to_string(::getpid()), &e))
        ADD_FAILURE() << "leaving the test's cgroup: " << e;
      std::error_code removed;
      if (!fs::remove(group, removed)) ADD_FAILURE() << "the test's cgroup " << group << " was left: " << removed.message();
    }
  };
  if (!write_text(group / "cpu.cfs_period_us", "8000", &err) || !write_text(group / "cpu.cfs_quota_us", "2000", &err)) {
    fs::remove(group, ec);
    GTEST_SKIP() << "cannot set the test cgroup's quota: " << err;
  }
  Leave leave{home, group};
  ASSERT_TRUE(write_text(group / "cgroup.procs", std::to_string(::getpid()), &err)) << err;

  MeasureOptions o = MeasureOptions::quick();
  o.cold_cache = false;
  o.min_samples = o.max_samples = 10;
  o.min_time_s = 0;
  Spin spin(std::chrono::microseconds(3000));
  {
    const auto dev = make_cpu_device();  // it finds its cgroup's cpu.stat and quota when it is made
    const Measurement m = measure(*dev, spin, o);
    ASSERT_EQ(m.sample_clock_limits.size(), m.samples_s.size()) << "no per-sample limits read";
    EXPECT_GE(quota_samples(m), m.samples_s.size() / 2);
    EXPECT_NE(std::find(m.clock_limits.begin(), m.clock_limits.end(), "cpu_quota"), m.clock_limits.end());
    bool said = false;
    for (const auto& w : measurement_warnings(m, o))
      said |= w.rfind("host: ", 0) == 0 && w.find("waited for the cgroup's CPU quota") != std::string::npos;
    EXPECT_TRUE(said) << "no warning of the samples that waited";
  }
  ASSERT_TRUE(write_text(group / "cpu.cfs_quota_us", "-1", &err)) << err;
  {
    const auto dev = make_cpu_device();
    const Measurement m = measure(*dev, spin, o);
    ASSERT_EQ(m.sample_clock_limits.size(), m.samples_s.size());
    EXPECT_EQ(quota_samples(m), 0u) << "a sample named cpu_quota in a group without a quota";
    for (const auto& w : measurement_warnings(m, o)) EXPECT_EQ(w.rfind("host: ", 0), std::string::npos) << w;
  }
}
