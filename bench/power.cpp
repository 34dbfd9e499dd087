#include "bench/power.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "bench/results.h"

namespace roofbench {

std::optional<EnergySummary> energy_summary(const Measurement& m, std::string* why) {
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
  e.mean_power_w = joules / window;
  e.joules_per_run = e.mean_power_w * m.stats.median;
  return e;
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
