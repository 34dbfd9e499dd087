#pragma once
// What the host took from a run: CPU time a hypervisor gave to other guests (steal), and time the
// run's control group was held back by its CPU quota (a container's or CI runner's limit). Both
// slow a sample without the device being slower; a roof measured in those slices is measured low,
// and a kernel that ran between them can come out above it. Read at the start of a run and each
// time its file is written, the difference goes into provenance.host_contention.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace roofbench {

struct ContentionReading {
  std::optional<double> steal_s;             // /proc/stat's steal, all CPUs together, in seconds
  int steal_cpus = 0;                        // the CPUs /proc/stat counts (cpu0, cpu1, ...)
  std::optional<double> throttled_s;         // the cgroup's throttled time (cpu.stat)
  std::optional<std::int64_t> throttled_periods;  // the quota periods it was throttled in (nr_throttled)
  std::optional<std::int64_t> periods;       // the quota periods that have passed for it (nr_periods)
  std::optional<double> quota_cpus;          // its CPU quota in CPUs (quota / period), when one is set
  std::string cgroup_source;                 // the cpu.stat read, or "unavailable: " and why
};

// Reads them now. `root` prefixes /proc and /sys (tests plant a tree there); "" is the machine's.
ContentionReading read_contention(const std::string& root = "");

// The count of quota periods the group whose cpu.stat is at `cpu_stat` (a ContentionReading's
// cgroup_source that is a path) was throttled in, read now: one small file, cheap enough to read
// around every sample (bench/cpu_device.cpp). nullopt where unreadable.
std::optional<std::int64_t> read_throttled_periods(const std::string& cpu_stat);

// provenance.host_contention for the `wall_s` seconds between two readings, the run's threads on
// `cpus` CPUs: steal_s, throttled_s, throttled_periods and periods (the differences; null where
// unreadable at either end, or where the two readings are of different groups), quota_cpus,
// cgroup_source, and shares: steal_share (of every CPU's time /proc/stat counts),
// throttled_share (of the run's `cpus`' time: each CPU's run queue counts its own throttled time,
// so this is the share only while all of them were busy) and throttled_period_share (of the quota
// periods that passed, whatever the CPUs did).
nlohmann::json contention_json(const ContentionReading& start, const ContentionReading& now, double wall_s,
                               int cpus);

// One line for the console when the host took at least `at_least` (a share) of the run either
// way, or a few words for the reports' provenance line (`brief`); nullopt otherwise, or for a
// record without shares.
std::optional<std::string> contention_text(const nlohmann::json& host_contention, double at_least = 0.01,
                                           bool brief = false);

}  // namespace roofbench
