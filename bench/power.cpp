#include "bench/power.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <numeric>
#include <thread>

#include "bench/results.h"
#include "bench/stats.h"

namespace roofbench {

namespace {
std::optional<EnergySummary> from_samples(const Measurement& m, std::string* why) {
  auto none = [&](const std::string& reason) -> std::optional<EnergySummary> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (m.sample_energy_j.empty() || m.sample_window_s.size() != m.sample_energy_j.size())
    return none("no energy counter was read around the samples");
  EnergySummary e;
  e.samples = static_cast<int>(m.sample_energy_j.size());
  double joules = 0, window = 0;
  for (std::size_t i = 0; i < m.sample_energy_j.size(); ++i) {
    joules += m.sample_energy_j[i];
    window += m.sample_window_s[i];
    if (m.sample_energy_j[i] > 0) ++e.samples_counted;
  }
  if (e.samples_counted == 0 || !(window > 0))
    return none(fmt::format("the energy counter did not advance across any of the {} samples (it updates more "
                            "coarsely than they last)",
                            e.samples));
  if (!m.energy_interval_s)
    return none("the energy counter's update interval is not known (a file from before roofbench probed it, or a "
                "counter that did not advance twice in 1.5 s), so its differences across the samples cannot be told "
                "from whole updates");
  const double median_window = quantile(m.sample_window_s, 0.5);
  if (median_window < kEnergyUpdatesPerWindow * *m.energy_interval_s)
    return none(fmt::format("the samples' windows ({:.3g} ms, the median) span fewer than {:g} updates of the energy "
                            "counter (one every {:.3g} ms): each difference is a whole update or none, which holds the "
                            "energy of the update period before it, not of the run",
                            median_window * 1e3, kEnergyUpdatesPerWindow, *m.energy_interval_s * 1e3));
  e.mean_power_w = joules / window;
  e.joules_per_run = e.mean_power_w * m.stats.median;
  return e;
}

std::optional<EnergySummary> from_run(const Measurement& m, std::string* why) {
  auto none = [&](const std::string& reason) -> std::optional<EnergySummary> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const Measurement::EnergyRun& r = *m.energy_run;
  const std::string what = r.kind == "hold" ? "the sustained hold" : "the energy pass";
  // Its window between two changes of the counter, where it is long and sharp enough; else the
  // whole run, where it spans 10 updates.
  const auto& w = r.window;
  const bool windowed = w && w->changes >= kEnergyWindowChanges && w->seconds > 0 && w->joules > 0 &&
                        w->gap_s <= kEnergyWindowSlack * w->seconds;
  if (!windowed) {
    if (!m.energy_interval_s) return none(what + ": the energy counter's update interval is not known");
    if (!(r.seconds >= kEnergyUpdatesPerWindow * *m.energy_interval_s))
      return none(fmt::format("{} ({:.3g} s) spans fewer than {:g} updates of the counter{}", what, r.seconds,
                              kEnergyUpdatesPerWindow,
                              w ? fmt::format(", and its window between two of its changes ({} changes in {:.3g} s, "
                                              "seen up to {:.3g} ms late) is too short or too coarse",
                                              w->changes, w->seconds, w->gap_s * 1e3)
                                : std::string()));
    if (!(r.joules > 0)) return none(what + ": the counter did not advance across it");
  }
  if (!(r.busy_s >= kEnergyBusyShare * r.seconds))
    return none(fmt::format("{}'s {} runs kept the device busy {:.0f}% of its {:.3g} s (under {:.0f}%: the "
                            "synchronizes between them would dilute the power)",
                            what, r.runs, 100 * r.busy_s / r.seconds, r.seconds, 100 * kEnergyBusyShare));
  EnergySummary e;
  e.samples = static_cast<int>(m.sample_energy_j.size());
  for (double j : m.sample_energy_j)
    if (j > 0) ++e.samples_counted;
  e.from = r.kind;
  e.window = windowed;
  // Its mean power times its own mean run: a run back to back, warm (the pass flushes nothing, so
  // the cold samples' median would pair a warm run's power with a cold run's time).
  e.mean_power_w = windowed ? w->joules / w->seconds : r.joules / r.seconds;
  e.joules_per_run = e.mean_power_w * r.busy_s / r.runs;
  return e;
}
}  // namespace

std::optional<EnergySummary> energy_summary(const Measurement& m, std::string* why) {
  std::string samples_why;
  if (auto e = from_samples(m, &samples_why)) return e;
  if (m.energy_run) {
    std::string run_why;
    if (auto e = from_run(m, &run_why)) return e;
    samples_why += "; " + run_why;
  }
  if (why) *why = samples_why;
  return std::nullopt;
}


std::optional<double> counter_update_interval(const std::function<std::optional<double>()>& read, double limit_s,
                                              std::string* why) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto since = [&start] { return std::chrono::duration<double>(clock::now() - start).count(); };
  std::optional<double> last = read();
  if (!last) {
    if (why) *why = "the counter could not be read";
    return std::nullopt;
  }
  std::vector<double> changes;
  while (changes.size() < 4 && since() < limit_s) {
    const std::optional<double> now = read();
    if (!now) {
      if (why) *why = "the counter could not be read";
      return std::nullopt;
    }
    if (*now != *last) {
      changes.push_back(since());
      last = now;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  if (changes.size() < 2) {
    if (why) *why = fmt::format("the counter advanced {} time(s) in {:g} s", changes.size(), limit_s);
    return std::nullopt;
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < changes.size(); ++i) gaps.push_back(changes[i] - changes[i - 1]);
  return quantile(std::move(gaps), 0.5);
}

namespace {
std::optional<double> read_number(const std::filesystem::path& p) {
  std::ifstream in(p);
  double v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}
std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}
}  // namespace

Rapl::Rapl(std::filesystem::path root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    why_ = fmt::format("no {}: this kernel exposes no RAPL energy counters (a VM, or no powercap driver loaded)",
                       root.string());
    return;
  }
  std::vector<std::filesystem::path> packages;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    // intel-rapl:0, intel-rapl:1: the packages; intel-rapl:0:0 (a core or DRAM subdomain) is in them.
    if (name.rfind("intel-rapl:", 0) == 0 && name.find(':', 11) == std::string::npos) packages.push_back(entry.path());
  }
  std::sort(packages.begin(), packages.end());
  if (packages.empty()) {
    why_ = fmt::format("{} holds no RAPL package domain (intel-rapl:N)", root.string());
    return;
  }
  std::vector<Domain> domains;
  for (const auto& dir : packages) {
    Domain d;
    d.energy = dir / "energy_uj";
    d.name = read_line(dir / "name");
    if (d.name.empty()) d.name = dir.filename().string();
    const auto range = read_number(dir / "max_energy_range_uj");
    const auto now = read_number(d.energy);
    if (!now) {
      why_ = fmt::format("{} is not readable (since Linux 5.10 energy_uj is readable by root only)", d.energy.string());
      return;
    }
    d.range_uj = range.value_or(0);
    d.last_uj = *now;
    domains.push_back(std::move(d));
  }
  domains_ = std::move(domains);
}

std::string Rapl::describe() const {
  if (!available()) return "unavailable: " + why_;
  std::string names;
  for (const auto& d : domains_) names += (names.empty() ? "" : ", ") + d.name;
  return "RAPL: " + names;
}

std::optional<double> Rapl::energy_j() {
  if (!available()) return std::nullopt;
  double total = 0;
  for (auto& d : domains_) {
    const auto now = read_number(d.energy);
    if (!now) return std::nullopt;
    double step = *now - d.last_uj;
    if (step < 0) {
      if (!(d.range_uj > 0)) return std::nullopt;  // a wrap with no range to correct it by
      step += d.range_uj;
    }
    d.total_uj += step;
    d.last_uj = *now;
    total += d.total_uj;
  }
  return total * 1e-6;
}

}  // namespace roofbench
