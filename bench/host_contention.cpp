#include "bench/host_contention.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace roofbench {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> slurp_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A count the kernel wrote, as an integer (a value no int64 holds: none).
std::optional<std::int64_t> count_of(double v) {
  if (!(v >= 0 && v < 9e18)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// "key value" lines (cpu.stat).
std::map<std::string, double> key_values(const std::string& text) {
  std::map<std::string, double> kv;
  std::istringstream in(text);
  std::string key;
  double value = 0;
  while (in >> key >> value) kv[key] = value;
  return kv;
}

void read_steal(const std::string& root, ContentionReading& r) {
  const auto text = slurp_file(root + "/proc/stat");
  if (!text) return;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cpu", 0) != 0) continue;
    std::istringstream f(line);
    std::string name;
    f >> name;
    if (name != "cpu") {  // cpu0, cpu1, ...
      ++r.steal_cpus;
      continue;
    }
    // user nice system idle iowait irq softirq steal, in clock ticks
    std::vector<double> v;
    double x = 0;
    while (v.size() < 8 && f >> x) v.push_back(x);
    const long ticks = ::sysconf(_SC_CLK_TCK);
    if (v.size() == 8 && ticks > 0) r.steal_s = v[7] / static_cast<double>(ticks);
  }
  if (r.steal_cpus == 0) r.steal_s.reset();
}

// The cgroup's cpu.stat and quota: v1's cpu controller (its mount named cpu, or cpu,cpuacct), or
// v2's unified tree; the process's own group where it is visible, else the root of what is
// mounted (a container sees its own group there).
void read_cgroup(const std::string& root, ContentionReading& r) {
  const auto self = slurp_file(root + "/proc/self/cgroup");
  if (!self) {
    r.cgroup_source = "unavailable: no /proc/self/cgroup";
    return;
  }
  std::optional<std::string> v1, v2;
  std::istringstream lines(*self);
  std::string line;
  while (std::getline(lines, line)) {
    const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.substr(0, a) == "0" && controllers.empty()) v2 = path;
    std::istringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ','))
      if (c == "cpu") v1 = path;
  }
  const fs::path cg = root + "/sys/fs/cgroup";
  std::vector<std::pair<fs::path, bool>> dirs;  // (folder, v2)
  if (v1)
    for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"}) {
      dirs.emplace_back(cg / mount / fs::path(*v1).relative_path(), false);
      dirs.emplace_back(cg / mount, false);
    }
  if (v2) {
    dirs.emplace_back(cg / fs::path(*v2).relative_path(), true);
    dirs.emplace_back(cg, true);
  }
  for (const auto& [dir, unified] : dirs) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "cpu.stat", ec)) continue;
    const auto stat = key_values(slurp_file(dir / "cpu.stat").value_or(""));
    const auto throttled = stat.find("nr_throttled"), periods = stat.find("nr_periods");
    const auto time = stat.find(unified ? "throttled_usec" : "throttled_time");
    if (throttled == stat.end() || time == stat.end()) continue;  // (v2 without the cpu controller)
    r.throttled_periods = count_of(throttled->second);
    if (periods != stat.end()) r.periods = count_of(periods->second);
    r.throttled_s = time->second / (unified ? 1e6 : 1e9);
    r.cgroup_source = (dir / "cpu.stat").string().substr(root.size());
    try {  // a malformed quota: no quota figure, the counts kept
      if (unified) {
        std::istringstream max(slurp_file(dir / "cpu.max").value_or(""));
        std::string quota;
        double period = 0;
        if (max >> quota >> period && quota != "max" && period > 0) r.quota_cpus = std::stod(quota) / period;
      } else {
        const auto quota = slurp_file(dir / "cpu.cfs_quota_us"), period = slurp_file(dir / "cpu.cfs_period_us");
        if (quota && period && std::stod(*quota) > 0 && std::stod(*period) > 0)
          r.quota_cpus = std::stod(*quota) / std::stod(*period);
      }
    } catch (const std::exception&) {
      r.quota_cpus.reset();
    }
    return;
  }
  r.cgroup_source = "unavailable: no cgroup cpu.stat with throttling counts (" +
                    std::string(v1 ? "cgroup v1 cpu" : v2 ? "cgroup v2" : "no cpu cgroup") + " in /proc/self/cgroup)";
}

nlohmann::json diff(const std::optional<double>& a, const std::optional<double>& b) {
  return a && b && *b >= *a ? nlohmann::json(*b - *a) : nlohmann::json(nullptr);
}

}  // namespace

std::optional<std::int64_t> read_throttled_periods(const std::string& cpu_stat) {
  const auto text = slurp_file(cpu_stat);
  if (!text) return std::nullopt;
  const auto kv = key_values(*text);
  const auto it = kv.find("nr_throttled");
  if (it == kv.end()) return std::nullopt;
  return count_of(it->second);
}

ContentionReading read_contention(const std::string& root) {
  ContentionReading r;
  read_steal(root, r);
  try {
    read_cgroup(root, r);
  } catch (const std::exception& e) {  // no figure rather than a wrong one
    r.throttled_s.reset();
    r.throttled_periods.reset();
    r.periods.reset();
    r.quota_cpus.reset();
    r.cgroup_source = std::string("unavailable: ") + e.what();
  }
  return r;
}

nlohmann::json contention_json(const ContentionReading& start, const ContentionReading& now, double wall_s, int cpus) {
  nlohmann::json j;
  j["steal_s"] = diff(start.steal_s, now.steal_s);
  const bool same_group = start.cgroup_source == now.cgroup_source;  // (a process moved: no difference)
  const auto count = [&](const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
    return same_group && a && b && *b >= *a ? nlohmann::json(*b - *a) : nlohmann::json(nullptr);
  };
  j["throttled_s"] = same_group ? diff(start.throttled_s, now.throttled_s) : nlohmann::json(nullptr);
  j["throttled_periods"] = count(start.throttled_periods, now.throttled_periods);
  j["periods"] = count(start.periods, now.periods);
  j["quota_cpus"] = now.quota_cpus ? nlohmann::json(*now.quota_cpus) : nlohmann::json(nullptr);
  j["cgroup_source"] = now.cgroup_source;
  j["steal_share"] = j["steal_s"].is_number() && wall_s > 0 && now.steal_cpus > 0
                         ? nlohmann::json(j["steal_s"].get<double>() / (wall_s * now.steal_cpus))
                         : nlohmann::json(nullptr);
  j["throttled_share"] = j["throttled_s"].is_number() && wall_s > 0 && cpus > 0
                             ? nlohmann::json(j["throttled_s"].get<double>() / (wall_s * cpus))
                             : nlohmann::json(nullptr);
  j["throttled_period_share"] =
      j["throttled_periods"].is_number() && j["periods"].is_number() && j["periods"].get<std::int64_t>() > 0
          ? nlohmann::json(j["throttled_periods"].get<double>() / j["periods"].get<double>())
          : nlohmann::json(nullptr);
  return j;
}

std::optional<std::string> contention_text(const nlohmann::json& h, double at_least, bool brief) {
  if (!h.is_object()) return std::nullopt;
  const auto share = [&](const char* k) {
    const auto it = h.find(k);
    return it != h.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  const auto count = [&](const char* k) -> std::optional<long long> {
    const auto it = h.find(k);
    if (it == h.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<long long>();
  };
  // Throttled: of the CPUs' time, or of the quota periods, whichever is more (a run of one busy
  // thread on many CPUs is throttled in most periods and in little of all the CPUs' time).
  const double steal = share("steal_share"), throttled = std::max(share("throttled_share"),
                                                                  share("throttled_period_share"));
  const bool stole = steal > 0 && steal >= at_least, held = throttled > 0 && throttled >= at_least;
  if (!stole && !held) return std::nullopt;
  if (brief)
    return fmt::format("the host took {}{}{}", stole ? fmt::format("{:.0f}% (steal)", 100 * steal) : "",
                       stole && held ? " and " : "",
                       held ? fmt::format("{:.0f}% (CPU quota)", 100 * throttled) : "");
  std::string what;
  if (stole)
    what = fmt::format("{:.0f}% of the CPUs' time stolen by the hypervisor ({:.1f} s)", 100 * steal, share("steal_s"));
  if (held) {
    const auto quota = h.find("quota_cpus");
    const auto n = count("throttled_periods"), of = count("periods");
    what += fmt::format("{}{:.0f}% throttled by the cgroup's CPU quota{} ({:.1f} s{})", what.empty() ? "" : "; ",
                        100 * throttled,
                        quota != h.end() && quota->is_number() ? fmt::format(" of {:.3g} CPUs", quota->get<double>())
                                                                : "",
                        share("throttled_s"),
                        n ? (of ? fmt::format(", in {} of {} periods", *n, *of) : fmt::format(", in {} periods", *n))
                          : "");
  }
  return "the host took CPU time from this run: " + what +
         "; samples taken in those slices ran slow, ceilings' too, so a roof may be measured low";
}

}  // namespace roofbench
