#include "reports/ab.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "bench/stats.h"
#include "reports/format.h"

namespace roofbench {

namespace {

double median_rate(const BenchmarkResult& b, const std::string& metric) {
  return work_for(b, metric) / b.measurement->stats.median;
}

void check_devices(const std::vector<AbRound>& rounds) {
  if (rounds.empty()) throw InputError("an A/B needs at least one round");
  const std::string device = device_id(rounds.front().base);
  for (std::size_t i = 0; i < rounds.size(); ++i)
    for (const Results* r : {&rounds[i].base, &rounds[i].fresh})
      if (device_id(*r) != device)
        throw InputError(fmt::format("round {} ran on {}, round 1 on {}: an A/B is of one device", i + 1,
                                     device_id(*r), device));
}

}  // namespace

std::map<std::string, std::vector<double>> round_log_ratios(const std::vector<AbRound>& rounds) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& round : rounds)
    for (const auto& n : round.fresh.benchmarks) {
      const BenchmarkResult* b = find_benchmark(round.base, n.name);
      if (!has_number(b) || !has_number(&n)) continue;
      const std::string metric = shared_rate_metric({b, &n});
      out[n.name].push_back(std::log(median_rate(n, metric) / median_rate(*b, metric)));
    }
  return out;
}

Comparison compare_rounds(const std::vector<AbRound>& rounds, const CompareOptions& opt) {
  check_devices(rounds);
  (void)opt.threshold_for("");  // a bad pattern is an InputError before any work
  Comparison c;
  c.options = opt;
  c.rounds = static_cast<int>(rounds.size());
  const AbRound& first = rounds.front();
  c.base = comparison_side(first.base, first.base_path);
  c.fresh = comparison_side(first.fresh, first.new_path);
  environment_differences(first.base, first.fresh, opt, c);

  // Names over every round; a benchmark in one build only is listed, not judged.
  std::set<std::string> in_base, in_new;
  for (const auto& round : rounds) {
    for (const auto& b : round.base.benchmarks) in_base.insert(b.name);
    for (const auto& b : round.fresh.benchmarks) in_new.insert(b.name);
  }
  for (const auto& name : in_base)
    if (!in_new.count(name)) c.only_base.push_back(name);
  for (const auto& name : in_new)
    if (!in_base.count(name)) c.only_new.push_back(name);

  const int n_rounds = static_cast<int>(rounds.size());
  for (const auto& name : in_new) {
    if (!in_base.count(name)) continue;
    CompareRow row;
    row.name = name;
    row.threshold = opt.calibrated_threshold(name, n_rounds);
    std::vector<double> d, base_log, new_log;
    std::string new_error, base_error;
    int base_failed = 0, new_failed = 0;
    std::vector<const BenchmarkResult*> with_numbers;  // one metric for every round of both builds
    for (const auto& round : rounds)
      for (const Results* side : {&round.base, &round.fresh})
        if (const BenchmarkResult* x = find_benchmark(*side, name); has_number(x)) with_numbers.push_back(x);
    row.metric = with_numbers.empty() ? "1/s" : shared_rate_metric(with_numbers);
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      const BenchmarkResult* b = find_benchmark(rounds[i].base, name);
      const BenchmarkResult* n = find_benchmark(rounds[i].fresh, name);
      if (n && !has_number(n)) {
        ++new_failed;
        if (new_error.empty()) new_error = fmt::format("round {}: {}", i + 1, n->error);
      }
      if (b && !has_number(b)) {
        ++base_failed;
        if (base_error.empty()) base_error = fmt::format("round {}: {}", i + 1, b->error);
      }
      if (!has_number(b) || !has_number(n)) continue;
      base_log.push_back(std::log(median_rate(*b, row.metric)));
      new_log.push_back(std::log(median_rate(*n, row.metric)));
      d.push_back(new_log.back() - base_log.back());
    }
    if (new_failed) {
      row.verdict = Verdict::failed;
      row.reason = fmt::format("fails in {} of {} rounds of NEW ({}){}", new_failed, n_rounds, new_error,
                               base_failed ? fmt::format("; and in {} of BASE", base_failed) : std::string());
      c.kernels.push_back(std::move(row));
      continue;
    }
    if (base_failed) {  // NEW has numbers where BASE had none: not a regression, listed
      c.only_new.push_back(name + fmt::format(" (failed in {} rounds of BASE: {})", base_failed, base_error));
      continue;
    }
    if (d.empty()) continue;
    const PairedT t = paired_t(d, opt.confidence);
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / static_cast<double>(v.size());
    };
    Evidence e;
    e.unit = "rounds";
    e.n_base = e.n_new = t.n;
    e.base_median = std::exp(mean(base_log));  // the geometric mean over rounds of each side's median rate
    e.new_median = std::exp(mean(new_log));
    e.change = std::exp(t.mean) - 1;
    e.change_ci = {std::exp(t.mean_ci.lo) - 1, std::exp(t.mean_ci.hi) - 1};
    e.p = e.q = t.p;
    e.exact = false;
    e.p_min = 0;  // the t test reaches any p with two or more rounds
    row.evidence = e;
    if (t.n < n_rounds) row.notes.push_back(fmt::format("numbers in {} of {} rounds", t.n, n_rounds));
    c.kernels.push_back(std::move(row));
  }
  if (c.kernels.empty())
    throw InputError(fmt::format("the two builds share no benchmark ({} in BASE, {} in NEW): are they builds of the "
                                 "same suite, run with the same options?",
                                 in_base.size(), in_new.size()));
  decide_rows(c.kernels, opt);
  for (auto& row : c.kernels) {  // a round's number above its roof makes the row IMPLAUSIBLE
    const BenchmarkResult *base = nullptr, *fresh = nullptr;
    for (const auto& round : rounds) {
      if (const BenchmarkResult* b = find_benchmark(round.base, row.name); b && b->implausible() && !base) base = b;
      if (const BenchmarkResult* n = find_benchmark(round.fresh, row.name); n && n->implausible() && !fresh) fresh = n;
    }
    refuse_implausible(row, base, fresh);
  }
  sort_rows(c.kernels);
  set_geomean(c);
  return c;
}

nlohmann::json noise_json(const std::vector<AbRound>& rounds, const std::vector<std::string>& run_args) {
  check_devices(rounds);
  nlohmann::json benchmarks = nlohmann::json::object();
  for (const auto& [name, d] : round_log_ratios(rounds)) {
    if (d.size() < 2) continue;
    const PairedT t = paired_t(d, 0.95);
    benchmarks[name] = {{"sd_log_ratio", t.sd}, {"mean_log_ratio", t.mean}, {"rounds", t.n}};
  }
  const Results& r = rounds.front().base;
  return {{"schema", "roofbench.noise.v1"},
          {"device", device_id(r)},
          {"device_line", device_line(r)},
          {"commit", r.provenance.value("git_commit", std::string("unknown"))},
          {"utc_time", r.provenance.value("utc_time", std::string("?"))},
          {"rounds", rounds.size()},
          {"run_args", run_args},
          {"method",
           "A/A: one build against itself in rounds of two fresh processes; sd_log_ratio is the standard deviation "
           "over rounds of log(rate of the second process / rate of the first), the noise of one run against one"},
          {"benchmarks", benchmarks}};
}

std::map<std::string, double> load_noise(const std::string& path, const std::string& device) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the calibration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_noise(ss.str(), path, device);
}

std::map<std::string, double> parse_noise(const std::string& text, const std::string& path, const std::string& device) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw InputError(path + ": not valid JSON");
  // (json::value throws a type_error for a field of another type: found by tests/fuzz/fuzz_noise.cpp)
  const auto field = [&j](const char* key, const std::string& otherwise) {
    const auto f = j.find(key);
    return f != j.end() && f->is_string() ? f->get<std::string>() : otherwise;
  };
  if (field("schema", "") != "roofbench.noise.v1")
    throw InputError(path + ": not a calibration file (schema roofbench.noise.v1; `roofbench calibrate` writes one)");
  const std::string made_on = field("device", "?");
  if (!device.empty() && made_on != device)
    throw InputError(fmt::format("{}: calibrated on {}, but these results are of {}: calibrate on this machine", path,
                                 made_on, device));
  std::map<std::string, double> out;
  const auto it = j.find("benchmarks");
  if (it == j.end() || !it->is_object()) throw InputError(path + ": no benchmarks object");
  for (auto b = it->begin(); b != it->end(); ++b) {
    const auto sd = b->find("sd_log_ratio");
    if (sd == b->end() || !sd->is_number() || sd->get<double>() < 0)
      throw InputError(fmt::format("{}: benchmark '{}' has no sd_log_ratio >= 0", path, b.key()));
    out[b.key()] = sd->get<double>();
  }
  return out;
}

nlohmann::json ab_json(const Comparison& c, const std::vector<AbRound>& rounds) {
  nlohmann::json j = compare_json(c);
  j["schema"] = "roofbench.ab.v1";
  j["method"] =
      "interleaved A/B: each round one fresh process of each build, in random order, with the same options and "
      "ceilings; per benchmark the change is exp(mean over rounds of log(NEW rate / BASE rate)) - 1, its interval "
      "the Student t interval of that mean, p the paired t test, q Benjamini-Hochberg over the benchmarks";
  nlohmann::json rs = nlohmann::json::array();
  for (std::size_t i = 0; i < rounds.size(); ++i)
    rs.push_back({{"round", i + 1},
                  {"first", rounds[i].base_first ? "base" : "new"},
                  {"base", rounds[i].base_path},
                  {"new", rounds[i].new_path}});
  j["rounds"] = rs;
  return j;
}

}  // namespace roofbench
