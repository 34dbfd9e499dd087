// The printers of a comparison (reports/compare.h decides): the console text, the Markdown of a
// PR comment or CI job summary, and the JSON of `--json`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/compare.h"
#include "reports/format.h"

namespace roofbench {

namespace {

std::string summary_counts(const Comparison& c) {
  std::string s;
  for (Verdict v : kVerdicts) {
    const int n = c.count(v);
    if (n == 0 && (v == Verdict::failed || v == Verdict::implausible || v == Verdict::faster)) continue;
    s += (s.empty() ? "" : ", ") + fmt::format("{} {}", n, to_string(v));
  }
  return s;
}

std::string geomean_text(const Comparison& c) {
  if (!c.geomean_change) return "no kernel has numbers on both sides";
  return fmt::format("geometric mean of the kernels' rates {} ({} kernel{})", percent_change(*c.geomean_change),
                     c.geomean_n, c.geomean_n == 1 ? "" : "s");
}

std::string settings_text(const Comparison& c) {
  if (c.rounds > 0) {
    std::string s = fmt::format("interleaved A/B, paired over {} rounds of a fresh run of each build; threshold ±{}",
                                c.rounds, percent(c.options.threshold));
    for (const auto& [pattern, value] : c.options.thresholds) s += fmt::format(" ({}: ±{})", pattern, percent(value));
    if (!c.options.noise.empty())
      s += fmt::format(", raised to {} x the calibrated noise / sqrt(rounds) of {} benchmarks", c.options.noise_sigmas,
                       c.options.noise.size());
    return s + fmt::format(", q < {} (paired t test of the log rate ratios, Benjamini-Hochberg), {:.0f}% t intervals",
                           c.options.alpha, 100 * c.options.confidence);
  }
  std::string s = c.options.by_roof ? "decided by each kernel's share of its roof, measured in its own run (the rate's "
                                      "change beside it); "
                                    : "decided by the rate (the change in share of the roof beside it); ";
  s += fmt::format("threshold ±{}", percent(c.options.threshold));
  if (!c.options.noise.empty())
    s += fmt::format(", raised to {} x the calibrated noise of {} benchmarks", c.options.noise_sigmas,
                     c.options.noise.size());
  for (const auto& [pattern, value] : c.options.thresholds) s += fmt::format(" ({}: ±{})", pattern, percent(value));
  return s + fmt::format(", q < {} (Mann-Whitney U, Benjamini-Hochberg), {:.0f}% bootstrap intervals", c.options.alpha,
                         100 * c.options.confidence);
}

struct RowText {
  std::string verdict, name, base, fresh, change, interval, other, reason;
};

RowText row_text(const CompareRow& r) {
  RowText t{to_string(r.verdict), r.name, "—", "—", "—", "—", "—", r.reason};
  if (r.other_change) t.other = percent_change(*r.other_change);
  if (r.evidence) {
    const Evidence& e = *r.evidence;
    t.base = rate_text(r.metric, e.base_median);
    t.fresh = rate_text(r.metric, e.new_median);
    t.change = percent_change(e.change);
    t.interval = fmt::format("[{}, {}]", percent_change(e.change_ci.lo), percent_change(e.change_ci.hi));
  }
  for (const auto& n : r.notes) t.reason += (t.reason.empty() ? "" : "; ") + n;
  return t;
}

// The column beside the deciding change: what the other view saw.
const char* other_header(bool by_roof) {
  return by_roof ? "rate" : "roof share";
}
bool any_other(const std::vector<CompareRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.other_change.has_value(); });
}

void text_table(std::string& out, const std::vector<CompareRow>& rows, bool by_roof) {
  std::size_t w = 9;
  for (const auto& r : rows) w = std::max(w, r.name.size());
  const bool other = any_other(rows);  // (an A/B shares one set of ceilings: no second view)
  out += fmt::format("{:<7} {:<{}} {:>16} {:>16} {:>8} {:>19}{}\n", "verdict", "benchmark", w, "BASE", "NEW", "change",
                     "interval", other ? fmt::format(" {:>10}", other_header(by_roof)) : "");
  for (const auto& r : rows) {
    const RowText t = row_text(r);
    out += fmt::format("{:<7} {:<{}} {:>16} {:>16} {:>8} {:>19}{}\n", t.verdict, t.name, w, t.base, t.fresh, t.change,
                       t.interval, other ? fmt::format(" {:>10}", t.other) : "");
    if (r.verdict != Verdict::same && !t.reason.empty()) out += fmt::format("        {}\n", t.reason);
  }
}

void md_table(std::string& out, const std::vector<CompareRow>& rows, bool with_reason, bool by_roof) {
  const bool other = any_other(rows);
  out += fmt::format("| verdict | benchmark | BASE | NEW | change | interval |{}{}\n|---|---|--:|--:|--:|--:|{}{}\n",
                     other ? fmt::format(" {} |", other_header(by_roof)) : "", with_reason ? " why |" : "",
                     other ? "--:|" : "", with_reason ? "---|" : "");
  for (const auto& r : rows) {
    const RowText t = row_text(r);
    const std::string verdict =
        r.verdict == Verdict::slower || r.verdict == Verdict::failed || r.verdict == Verdict::implausible
            ? "**" + t.verdict + "**"
            : t.verdict;
    // (the rates carry units a results file names: a ceiling's value_unit)
    out += fmt::format("| {} | {} | {} | {} | {} | {} |{}", verdict, md_code(t.name), md_cell(t.base), md_cell(t.fresh),
                       md_cell(t.change), md_cell(t.interval), other ? fmt::format(" {} |", md_cell(t.other)) : "");
    out += with_reason ? fmt::format(" {} |\n", md_cell(t.reason)) : "\n";
  }
}

}  // namespace

std::string render_compare_text(const Comparison& c) {
  std::string out = fmt::format("BASE {} ({}, {})\nNEW  {} ({}, {})\ndevice: {}\n{}\n", c.base.path, c.base.commit,
                                c.base.time, c.fresh.path, c.fresh.commit, c.fresh.time, c.fresh.device,
                                settings_text(c));
  for (const auto* s : {&c.base, &c.fresh})
    if (!s->partial.empty())
      out += fmt::format("{} is a partial run: {}; only the benchmarks that finished are compared{}\n",
                         s == &c.base ? "BASE" : "NEW", s->partial, s == &c.fresh ? " (exit 1)" : "");
  if (!c.environment.empty()) {
    out += "\nenvironment differences (numbers may move with these):\n";
    for (const auto& d : c.environment) out += fmt::format("  {}: {} → {}\n", d.what, d.base, d.fresh);
  }
  out += "\n";
  text_table(out, c.kernels, c.options.by_roof);
  if (!c.ceilings.empty()) {
    out += "\nmachine ceilings (context only: they move with the machine, not the code):\n";
    text_table(out, c.ceilings, c.options.by_roof);
  }
  if (!c.only_base.empty()) {
    out += "\nonly in BASE:\n";
    for (const auto& n : c.only_base) out += "  " + n + "\n";
  }
  if (!c.only_new.empty()) {
    out += "\nonly in NEW:\n";
    for (const auto& n : c.only_new) out += "  " + n + "\n";
  }
  out += fmt::format("\n{}; {}; exit {}\n", summary_counts(c), geomean_text(c), c.exit_code());
  return out;
}

std::string render_compare_markdown(const Comparison& c) {
  const bool bad = c.exit_code() != 0;
  const bool regression = c.count(Verdict::slower) + c.count(Verdict::failed) + c.count(Verdict::implausible) > 0;
  std::string out = fmt::format("### roofbench {}: {}{}\n\n", c.rounds > 0 ? "ab" : "compare",
                                !bad ? "" : regression ? "regression — " : "NEW is incomplete — ", summary_counts(c));
  for (const auto* s : {&c.base, &c.fresh})
    if (!s->partial.empty())
      out += fmt::format("**{} is a partial run**: {}; only the benchmarks that finished are compared.\n\n",
                         s == &c.base ? "BASE" : "NEW", md_cell(s->partial));
  out += fmt::format("BASE {} ({}) → NEW {} ({}) on {}.  \n{}.  \n{}.\n\n", md_code(c.base.commit), md_cell(c.base.time),
                     md_code(c.fresh.commit), md_cell(c.fresh.time), md_cell(c.fresh.device), md_cell(geomean_text(c)),
                     md_cell(settings_text(c)));
  std::vector<CompareRow> notable, same;
  for (const auto& r : c.kernels) (r.verdict == Verdict::same ? same : notable).push_back(r);
  if (!notable.empty()) md_table(out, notable, true, c.options.by_roof);
  if (!same.empty()) {
    out += fmt::format("\n<details><summary>{} SAME</summary>\n\n", same.size());
    md_table(out, same, false, c.options.by_roof);
    out += "\n</details>\n";
  }
  if (!c.environment.empty()) {
    out += "\n**Environment differences** (numbers may move with these)\n\n| what | BASE | NEW |\n|---|---|---|\n";
    for (const auto& d : c.environment)
      out += fmt::format("| {} | {} | {} |\n", md_cell(d.what), md_cell(d.base), md_cell(d.fresh));
  }
  if (!c.ceilings.empty()) {
    out += "\n<details><summary>Machine ceilings (context only)</summary>\n\n";
    md_table(out, c.ceilings, true, c.options.by_roof);
    out += "\n</details>\n";
  }
  auto list = [&out](const char* title, const std::vector<std::string>& names) {
    if (names.empty()) return;
    out += fmt::format("\n**{}** ({}): ", title, names.size());
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + md_code(names[i]);
    out += "\n";
  };
  list("Only in BASE", c.only_base);
  list("Only in NEW", c.only_new);
  return out;
}

nlohmann::json compare_json(const Comparison& c) {
  using nlohmann::json;
  auto side = [](const Comparison::Side& s) {
    return json{{"path", s.path},
                {"commit", s.commit},
                {"utc_time", s.time},
                {"device", s.device},
                {"partial", s.partial.empty() ? json(nullptr) : json(s.partial)}};
  };
  auto rows = [](const std::vector<CompareRow>& rs) {
    json out = json::array();
    for (const auto& r : rs) {
      json j = {{"name", r.name},
                {"metric", r.metric},
                {"higher_is_better", true},
                {"threshold", r.threshold},
                {"verdict", to_string(r.verdict)},
                {"reason", r.reason},
                {"notes", r.notes},
                {"decided_by", r.decided_by},
                {"other_change", r.other_change ? json(*r.other_change) : json(nullptr)}};
      if (r.evidence) {
        const Evidence& e = *r.evidence;
        j["base"] = {{"median", e.base_median}, {"samples", e.n_base}, {"throttled", e.base_throttled}};
        j["new"] = {{"median", e.new_median}, {"samples", e.n_new}, {"throttled", e.new_throttled}};
        j["change"] = e.change;
        j["interval"] = {e.change_ci.lo, e.change_ci.hi};
        j["p"] = e.p;
        j["q"] = e.q;
        j["exact_test"] = e.exact;
        j["cycle_change"] = e.cycle_change ? json(*e.cycle_change) : json(nullptr);
      }
      out.push_back(j);
    }
    return out;
  };
  json env = json::array();
  for (const auto& d : c.environment) env.push_back({{"what", d.what}, {"base", d.base}, {"new", d.fresh}});
  json thresholds = json::array();
  for (const auto& [pattern, value] : c.options.thresholds) thresholds.push_back({{"pattern", pattern}, {"threshold", value}});
  json counts = json::object();
  for (Verdict v : kVerdicts) counts[to_string(v)] = c.count(v);
  return {{"schema", "roofbench.compare.v1"},
          {"base", side(c.base)},
          {"new", side(c.fresh)},
          {"options",
           {{"threshold", c.options.threshold},
            {"thresholds", thresholds},
            {"alpha", c.options.alpha},
            {"confidence", c.options.confidence},
            {"min_samples", c.options.min_samples},
            {"allow_device_mismatch", c.options.allow_device_mismatch},
            {"by", c.options.by_roof ? "roof share" : "rate"},
            {"noise_benchmarks", c.options.noise.size()},
            {"noise_sigmas", c.options.noise_sigmas}}},
          {"same_device", c.same_device},
          {"environment", env},
          {"benchmarks", rows(c.kernels)},
          {"ceilings", rows(c.ceilings)},
          {"only_in_base", c.only_base},
          {"only_in_new", c.only_new},
          {"summary",
           {{"counts", counts},
            {"geomean_change", c.geomean_change ? json(*c.geomean_change) : json(nullptr)},
            {"geomean_kernels", c.geomean_n},
            {"exit_code", c.exit_code()}}}};
}

}  // namespace roofbench
