#include "bench/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace roofbench {

std::string machine_id(const Results& r) {
  const auto& d = r.device;
  const std::string kind = d.value("kind", std::string("?")), name = d.value("name", std::string("?"));
  if (kind == "cuda") {
    const std::string uuid = d.value("uuid", std::string());
    return "cuda " + name + (uuid.empty() ? " at " + d.value("pci_bus_id", std::string("?")) : " " + uuid);
  }
  return kind + " " + name + " on host " + r.provenance.value("host", std::string("?"));
}

namespace {
std::string commit_of(const Results& r) {
  return r.provenance.value("git_commit", std::string("unknown"));
}
bool same_measurement(const Ceiling& a, const Ceiling& b) {
  return a.benchmark == b.benchmark && a.measurement.samples_s == b.measurement.samples_s && a.value == b.value;
}
}  // namespace

Results merge_results(const std::vector<Results>& parts, const std::vector<std::string>& paths) {
  if (parts.size() < 2) throw InputError("merge needs two or more results files");
  const Results& first = parts.front();
  const std::string machine = machine_id(first), commit = commit_of(first);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (machine_id(parts[i]) != machine)
      throw InputError(fmt::format("{} was measured on {}, {} on {}: merge joins parts of one machine's run",
                                   paths[i], machine_id(parts[i]), paths[0], machine));
    if (commit_of(parts[i]) != commit)
      throw InputError(fmt::format("{} was built from commit {}, {} from {}: merge joins parts of one build",
                                   paths[i], commit_of(parts[i]), paths[0], commit));
  }

  Results m;
  m.provenance = first.provenance;
  m.device = first.device;
  m.settings = first.settings;
  m.counters = first.counters;
  nlohmann::json from = nlohmann::json::array();
  std::map<std::string, std::string> owner;  // benchmark name -> the file it came from
  std::set<std::pair<std::string, std::string>> not_run_seen;
  std::size_t completed = 0, planned = 0;
  std::vector<std::string> partial_reasons;

  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Results& p = parts[i];
    from.push_back({{"path", paths[i]},
                    {"command_line", p.provenance.value("command_line", std::string())},
                    {"utc_time", p.provenance.value("utc_time", std::string())},
                    {"settings", p.settings}});
    if (p.provenance.contains("wall_s")) from.back()["wall_s"] = p.provenance["wall_s"];
    if (p.provenance.contains("host_contention")) from.back()["host_contention"] = p.provenance["host_contention"];
    if (m.counters.is_null()) m.counters = p.counters;
    for (const auto& b : p.benchmarks) {
      if (auto [it, fresh] = owner.emplace(b.name, paths[i]); !fresh)
        throw InputError(fmt::format("{} is in both {} and {}: merge joins parts that measured different benchmarks",
                                     b.name, it->second, paths[i]));
      m.benchmarks.push_back(b);
    }
    for (const auto& c : p.ceilings) {
      auto same = std::find_if(m.ceilings.begin(), m.ceilings.end(), [&](const Ceiling& x) { return x.name == c.name; });
      if (same == m.ceilings.end()) {
        m.ceilings.push_back(c);
      } else if (!same_measurement(*same, c)) {
        // Measured again in another part: the roof is the better, as between a run's two passes.
        Ceiling keep = c.value > same->value ? c : *same;
        const Ceiling& other = c.value > same->value ? *same : c;
        keep.warnings.push_back(fmt::format("merge: also measured in another part at {} {}; the roof is the better",
                                            other.value, other.value_unit));
        *same = std::move(keep);
      }
    }
    for (const auto& n : p.not_run)
      if (not_run_seen.insert({n.benchmark, n.why}).second) m.not_run.push_back(n);
    const std::size_t done = p.partial ? p.partial->completed : p.benchmarks.size();
    completed += done;
    planned += p.partial ? p.partial->planned : done;
    if (p.partial) partial_reasons.push_back(paths[i] + ": " + p.partial->reason);
  }
  m.provenance["merged_from"] = from;
  m.provenance.erase("wall_s");  // the first part's: each part's is in merged_from
  m.provenance.erase("host_contention");
  if (!partial_reasons.empty()) {
    std::string why = "merged from partial parts (";
    for (std::size_t i = 0; i < partial_reasons.size(); ++i) why += (i ? "; " : "") + partial_reasons[i];
    m.partial = Partial{completed, planned, why + ")"};
  }
  return m;
}

}  // namespace roofbench
