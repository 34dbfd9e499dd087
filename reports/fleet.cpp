#include "reports/fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "bench/stats.h"
#include "reports/compare.h"  // device_id
#include "reports/format.h"
#include "roofline/model.h"  // read_results

namespace roofbench {

namespace {

// "node07 cuda:3 5e1f0c2a": where a device is; a CPU has its host alone.
std::string device_label(const Results& r) {
  std::string s = r.provenance.value("host", std::string("?"));
  if (r.device.value("kind", std::string()) == "cuda") {
    s += fmt::format(" cuda:{}", r.device.value("index", 0));
    const std::string uuid = r.device.value("uuid", std::string());
    if (!uuid.empty()) s += " " + uuid.substr(0, 8);
  }
  return s;
}

// ECC and the throttling seen while it ran: the clock-limit reasons after its samples (NVML) and
// its `clock:` warnings.
std::string device_state(const Results& r) {
  std::vector<std::string> parts;
  if (auto it = r.device.find("ecc"); it != r.device.end() && it->is_boolean())
    parts.push_back(std::string("ECC ") + (it->get<bool>() ? "on" : "off"));
  std::map<std::string, int> limits;
  int clock_warnings = 0;
  auto seen = [&](const std::optional<Measurement>& m, const std::vector<std::string>& warnings) {
    if (m)
      for (const auto& reason : std::set<std::string>(m->clock_limits.begin(), m->clock_limits.end())) ++limits[reason];
    for (const auto& w : warnings)
      if (w.rfind("clock:", 0) == 0) ++clock_warnings;
  };
  for (const auto& c : r.ceilings) seen(c.measurement, c.warnings);
  for (const auto& b : r.benchmarks) seen(b.measurement, b.warnings);
  if (!limits.empty()) {
    std::string s = "clock limits:";
    for (const auto& [reason, n] : limits) s += fmt::format(" {} ({} measurement{})", reason, n, n == 1 ? "" : "s");
    parts.push_back(s);
  }
  if (clock_warnings) parts.push_back(fmt::format("{} clock warning{}", clock_warnings, clock_warnings == 1 ? "" : "s"));
  if (parts.empty()) return "no throttling recorded";
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// A kernel's figure: its FLOP rate, or its byte rate when it declares no FLOPs; higher is better.
std::optional<std::pair<double, std::string>> kernel_figure(const BenchmarkResult& b) {
  if (!b.measured() || !b.measurement || b.measurement->stats.median <= 0) return std::nullopt;
  const double t = b.measurement->stats.median;
  if (b.flops > 0) return std::make_pair(b.flops / t, std::string("FLOP/s"));
  if (b.bytes > 0) return std::make_pair(b.bytes / t, std::string("B/s"));
  return std::nullopt;
}

std::string figure_text(double v, const std::string& unit) { return si(v, unit); }

}  // namespace

int Fleet::flagged() const {
  int n = 0;
  for (const auto& g : groups)
    for (const auto& w : g.why) n += w.empty() ? 0 : 1;
  return n;
}

std::vector<FleetMember> load_fleet(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<FleetMember> members;
  std::set<std::string> seen;  // each file once, however often paths name it (a folder and its file)
  auto add = [&](const std::string& file) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(file, ec);
    if (!seen.insert(ec ? file : canonical.string()).second) return;
    members.push_back({file, "", read_results(file)});
  };
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec) && results_file_in(p).empty()) {
      for (auto& f : results_files_under(p)) add(f);
    } else {
      add(results_path(p));
    }
  }
  if (members.size() < 2)
    throw InputError(fmt::format("fleet needs at least two results files; found {}", members.size()));
  return members;
}

Fleet build_fleet(std::vector<FleetMember> members, const FleetOptions& opt) {
  if (!(opt.threshold > 0 && opt.threshold < 1)) throw InputError("fleet: the threshold must be between 0 and 100%");
  if (!(opt.mad_k >= 0)) throw InputError("fleet: k (--mad) must be >= 0");
  Fleet fleet;
  fleet.options = opt;
  std::map<std::string, std::size_t> index;  // model -> group, in the order first seen
  for (auto& m : members) {
    const std::string model = device_id(m.results);
    auto it = index.find(model);
    if (it == index.end()) {
      it = index.emplace(model, fleet.groups.size()).first;
      fleet.groups.push_back(FleetGroup{model, {}, {}, {}, {}, false});
    }
    fleet.groups[it->second].members.push_back(std::move(m));
  }
  for (auto& g : fleet.groups) {
    const std::size_t n = g.members.size();
    // Labels: where each device is; several runs of one device are told apart by their folders.
    std::map<std::string, int> uses;
    for (auto& m : g.members) ++uses[device_label(m.results)];
    for (auto& m : g.members) {
      m.label = device_label(m.results);
      if (uses[m.label] > 1) m.label = std::filesystem::path(m.path).parent_path().filename().string();
      g.state.push_back(device_state(m.results));
    }
    // The figures, in the order the members list them (the first member's first).
    std::map<std::string, std::size_t> at;
    auto figure = [&](const std::string& name, bool ceiling, const std::string& unit) -> FleetFigure& {
      const std::string key = (ceiling ? "c:" : "k:") + name;
      auto it = at.find(key);
      if (it == at.end()) {
        it = at.emplace(key, g.figures.size()).first;
        g.figures.push_back(FleetFigure{name, ceiling, unit, std::vector<std::optional<double>>(n), 0, 0,
                                        std::vector<bool>(n, false)});
      }
      return g.figures[it->second];
    };
    for (std::size_t i = 0; i < n; ++i) {
      for (const auto& c : g.members[i].results.ceilings)
        if (c.value > 0) figure(c.name, true, c.value_unit).value[i] = c.value;
      for (const auto& b : g.members[i].results.benchmarks)
        if (const auto f = kernel_figure(b)) figure(b.name, false, f->second).value[i] = f->first;
    }
    std::stable_partition(g.figures.begin(), g.figures.end(), [](const FleetFigure& f) { return f.ceiling; });
    g.judged = n >= 3;
    g.why.assign(n, {});
    for (auto& f : g.figures) {
      std::vector<double> have;
      for (const auto& v : f.value)
        if (v) have.push_back(*v);
      if (have.empty()) continue;
      f.median = summarize(have).median;
      std::vector<double> dev;
      for (double v : have) dev.push_back(std::fabs(v - f.median));
      f.mad = summarize(dev).median;
      if (!g.judged || have.size() < 3 || f.median <= 0) continue;
      for (std::size_t i = 0; i < n; ++i) {
        if (!f.value[i]) continue;
        const double v = *f.value[i], below = (f.median - v) / f.median;
        const bool by_threshold = below > opt.threshold;
        const bool by_mad = opt.mad_k > 0 && f.mad > 0 && f.median - v > opt.mad_k * 1.4826 * f.mad;
        if (!by_threshold && !by_mad) continue;
        f.low[i] = true;
        g.why[i].push_back(fmt::format("{} {}: {} against the median {}, {:.1f}% below{}", f.ceiling ? "ceiling" : "kernel",
                                       f.name, figure_text(v, f.unit), figure_text(f.median, f.unit), 100 * below,
                                       by_mad ? fmt::format(" ({:.1f} robust sigmas)", (f.median - v) / (1.4826 * f.mad))
                                              : ""));
      }
    }
  }
  return fleet;
}

namespace {
std::string rule_text(const FleetOptions& o) {
  std::string s = fmt::format("more than {:g}% below the group's median", 100 * o.threshold);
  if (o.mad_k > 0) s += fmt::format(", or more than {:g} × 1.4826 MAD below it", o.mad_k);
  return s;
}
}  // namespace

std::string render_fleet_text(const Fleet& f) {
  std::string s = fmt::format("roofbench fleet: {} group{}, {} device{} flagged ({})\n", f.groups.size(),
                              f.groups.size() == 1 ? "" : "s", f.flagged(), f.flagged() == 1 ? "" : "s",
                              rule_text(f.options));
  for (const auto& g : f.groups) {
    s += fmt::format("\n{}: {} device{}{}\n", g.model, g.members.size(), g.members.size() == 1 ? "" : "s",
                     g.judged ? "" : " (fewer than three: shown, not judged)");
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      s += fmt::format("  {:<8} {}  [{}]  {}\n", g.why[i].empty() ? "ok" : "OUTLIER", g.members[i].label, g.state[i],
                       g.members[i].path);
      for (const auto& w : g.why[i]) s += "           " + w + "\n";
    }
  }
  return s;
}

std::string render_fleet_markdown(const Fleet& f) {
  std::string s = fmt::format("### roofbench fleet: {} device{} flagged\n\nA device is flagged on a figure {}; "
                              "models are grouped, never compared.\n",
                              f.flagged(), f.flagged() == 1 ? "" : "s", rule_text(f.options));
  for (const auto& g : f.groups) {
    s += fmt::format("\n#### {} ({} device{}{})\n\n", md_cell(g.model), g.members.size(),
                     g.members.size() == 1 ? "" : "s", g.judged ? "" : "; fewer than three: not judged");
    s += "| verdict | device | state | file | why |\n|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      std::string why;
      for (const auto& w : g.why[i]) why += (why.empty() ? "" : "<br>") + md_cell(w);
      s += fmt::format("| {} | {} | {} | {} | {} |\n", g.why[i].empty() ? "ok" : "**OUTLIER**",
                       md_cell(g.members[i].label), md_cell(g.state[i]), md_code(g.members[i].path), why);
    }
    s += "\n| figure | median |";
    for (const auto& m : g.members) s += " " + md_cell(m.label) + " |";
    s += "\n|---|--:|";
    for (std::size_t i = 0; i < g.members.size(); ++i) s += "--:|";
    s += "\n";
    for (const auto& fig : g.figures) {
      s += fmt::format("| {}{} | {} |", fig.ceiling ? "ceiling " : "", md_code(fig.name), figure_text(fig.median, fig.unit));
      for (std::size_t i = 0; i < g.members.size(); ++i) {
        if (!fig.value[i]) {
          s += " — |";
          continue;
        }
        const std::string cell = fmt::format("{} ({:+.1f}%)", figure_text(*fig.value[i], fig.unit),
                                             fig.median > 0 ? 100 * (*fig.value[i] / fig.median - 1) : 0.0);
        s += " " + (fig.low[i] ? "**" + cell + "**" : cell) + " |";
      }
      s += "\n";
    }
  }
  return s;
}

std::string render_fleet_html(const Fleet& f) {
  std::string s =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>roofbench fleet</title><style>"
      "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
      ".low{background:#fdd;font-weight:bold}.outlier{color:#b00;font-weight:bold}</style></head><body>\n";
  s += fmt::format("<h1>roofbench fleet: {} device{} flagged</h1>\n<p>A device is flagged on a figure {}; models are "
                   "grouped, never compared.</p>\n",
                   f.flagged(), f.flagged() == 1 ? "" : "s", xml_escape(rule_text(f.options)));
  for (const auto& g : f.groups) {
    s += fmt::format("<h2>{} ({} device{}{})</h2>\n<table><tr><th>device</th><th>verdict</th><th>state</th>"
                     "<th>why</th></tr>\n",
                     xml_escape(g.model), g.members.size(), g.members.size() == 1 ? "" : "s",
                     g.judged ? "" : "; fewer than three: not judged");
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      std::string why;
      for (const auto& w : g.why[i]) why += (why.empty() ? "" : "<br>") + xml_escape(w);
      s += fmt::format("<tr><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(g.members[i].label),
                       g.why[i].empty() ? "" : " class=\"outlier\"", g.why[i].empty() ? "ok" : "OUTLIER",
                       xml_escape(g.state[i]), why);
    }
    s += "</table>\n<table><tr><th>figure</th><th>median</th>";
    for (const auto& m : g.members) s += "<th>" + xml_escape(m.label) + "</th>";
    s += "</tr>\n";
    for (const auto& fig : g.figures) {
      s += fmt::format("<tr><td>{}{}</td><td>{}</td>", fig.ceiling ? "ceiling " : "", xml_escape(fig.name),
                       xml_escape(figure_text(fig.median, fig.unit)));
      for (std::size_t i = 0; i < g.members.size(); ++i)
        s += !fig.value[i] ? std::string("<td>—</td>")
                           : fmt::format("<td{}>{}</td>", fig.low[i] ? " class=\"low\"" : "",
                                         xml_escape(figure_text(*fig.value[i], fig.unit)));
      s += "</tr>\n";
    }
    s += "</table>\n";
  }
  return s + "</body></html>\n";
}

nlohmann::json fleet_json(const Fleet& f) {
  nlohmann::json j = {{"schema", "roofbench.fleet.v1"},
                      {"threshold", f.options.threshold},
                      {"mad_k", f.options.mad_k},
                      {"flagged", f.flagged()},
                      {"groups", nlohmann::json::array()}};
  for (const auto& g : f.groups) {
    nlohmann::json jg = {{"model", g.model}, {"judged", g.judged}, {"devices", nlohmann::json::array()},
                         {"figures", nlohmann::json::array()}};
    for (std::size_t i = 0; i < g.members.size(); ++i)
      jg["devices"].push_back({{"label", g.members[i].label},
                               {"path", g.members[i].path},
                               {"state", g.state[i]},
                               {"outlier", !g.why[i].empty()},
                               {"why", g.why[i]}});
    for (const auto& fig : g.figures) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : fig.value) values.push_back(v ? nlohmann::json(*v) : nlohmann::json(nullptr));
      jg["figures"].push_back({{"name", fig.name},
                               {"ceiling", fig.ceiling},
                               {"unit", fig.unit},
                               {"median", fig.median},
                               {"mad", fig.mad},
                               {"values", values},
                               {"low", fig.low}});
    }
    j["groups"].push_back(std::move(jg));
  }
  return j;
}

}  // namespace roofbench
