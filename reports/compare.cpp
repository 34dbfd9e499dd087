#include "reports/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "reports/format.h"
#include "reports/in_parallel.h"
#include "roofline/model.h"
#include "bench/user_regex.h"

namespace roofbench {

namespace {

double median(std::vector<double> v) {
  return quantile(std::move(v), 0.5);
}

std::string p_text(double p) {
  if (p < 1e-4) return fmt::format("{:.0e}", p);
  return fmt::format("{:.4f}", p);
}

std::string ghz(double hz) {
  return fmt::format("{:.2f} GHz", hz / 1e9);
}

std::string short_commit(const Results& r) {
  const std::string c = r.provenance.value("git_commit", std::string("unknown"));
  return c.substr(0, 12);
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "—";
  return v.dump();
}

std::optional<double> median_clock(const Results& r) {
  std::vector<double> hz;
  for (const auto& b : r.benchmarks)
    if (b.measurement && b.measurement->clock_before_hz) hz.push_back(*b.measurement->clock_before_hz);
  if (hz.empty()) return std::nullopt;
  return median(hz);
}

}  // namespace

void environment_differences(const Results& base, const Results& fresh, const CompareOptions& opt, Comparison& c) {
  const auto id = device_id;
  if (id(base) != id(fresh)) {
    if (!opt.allow_device_mismatch)
      throw InputError(fmt::format("BASE ran on {} and NEW on {}: comparing different devices is refused "
                                   "(--allow-device-mismatch compares them anyway)",
                                   id(base), id(fresh)));
    c.same_device = false;
    c.environment.push_back({"device", id(base), id(fresh)});
  }
  // Every other property of the device, then how each run measured.
  std::set<std::string> keys;
  for (const auto* r : {&base, &fresh})
    for (auto it = r->device.begin(); it != r->device.end(); ++it) keys.insert(it.key());
  for (const auto& k : keys) {
    if (k == "kind" || k == "name" || k == "index") continue;
    const auto a = base.device.value(k, nlohmann::json()), b = fresh.device.value(k, nlohmann::json());
    if (a != b) c.environment.push_back({k, json_text(a), json_text(b)});
  }
  for (const char* k : {"roofbench_version", "compiler"}) {
    const auto a = base.provenance.value(k, nlohmann::json()), b = fresh.provenance.value(k, nlohmann::json());
    if (a != b) c.environment.push_back({k, json_text(a), json_text(b)});
  }
  for (const char* k : {"quick", "cold_cache", "timer", "target_rel_iqr", "throttle_fraction"}) {
    const auto a = base.settings.value(k, nlohmann::json()), b = fresh.settings.value(k, nlohmann::json());
    if (a != b) c.environment.push_back({std::string("settings.") + k, json_text(a), json_text(b)});
  }
  const auto ca = median_clock(base), cb = median_clock(fresh);
  if (ca && cb && std::fabs(*cb / *ca - 1) > 0.02)
    c.environment.push_back({"measured clock (median before the samples)", ghz(*ca), ghz(*cb)});
}

namespace {

// One row from the two sides' measurements (either may be missing: failed).
CompareRow make_row(const std::string& name, const std::string& metric, const Measurement* mb, double wb,
                    const Measurement* mn, double wn, const std::string& new_error, const CompareOptions& opt) {
  CompareRow row;
  row.name = name;
  row.metric = metric;
  row.threshold = opt.calibrated_threshold(name);
  if (!mn) {
    row.verdict = Verdict::failed;
    row.reason = mb ? "no number in NEW: " + new_error : "fails in both BASE and NEW: " + new_error;
    return row;
  }
  row.evidence = gather_evidence(*mb, wb, *mn, wn, opt, name_seed(name));
  if (std::fabs(wb - wn) > 1e-9 * std::max(std::fabs(wb), std::fabs(wn)))
    row.notes.push_back(fmt::format("the declared work changed ({:g} → {:g}): compared as rates", wb, wn));
  const Evidence& e = *row.evidence;
  for (const auto& [side, read, held] : {std::tuple<const char*, int, int>{"BASE", e.n_base, e.base_samples},
                                         std::tuple<const char*, int, int>{"NEW", e.n_new, e.new_samples}})
    if (read < held)
      row.notes.push_back(fmt::format("{}: the statistics read {} of its {} samples, evenly spaced (at most {} a side{})",
                                      side, read, held, opt.max_samples,
                                      opt.max_samples < kMaxComparedSamples
                                          ? fmt::format(": {} a side over the whole comparison", kMaxComparedTotal)
                                          : ""));
  if (e.base_throttled)
    row.notes.push_back(fmt::format("BASE: {} of {} samples throttled", e.base_throttled, e.base_samples));
  if (e.new_throttled)
    row.notes.push_back(fmt::format("NEW: {} of {} samples throttled", e.new_throttled, e.new_samples));
  for (const auto& l : mn->clock_limits)
    row.notes.push_back(l == "cpu_quota" ? "NEW: samples waited for the cgroup's CPU quota" : "NEW: clock limited by " + l);
  if (mb->cold_cache != mn->cold_cache)
    row.notes.push_back(fmt::format("BASE was timed {}, NEW {}: not like for like", mb->cold_cache ? "cold" : "warm",
                                    mn->cold_cache ? "cold" : "warm"));
  return row;
}

}  // namespace

void decide_rows(std::vector<CompareRow>& rows, const CompareOptions& opt) {
  std::vector<double> p;
  for (const auto& r : rows)
    if (r.evidence) p.push_back(r.evidence->p);
  const std::vector<double> q = benjamini_hochberg(p);
  std::size_t k = 0;
  for (auto& r : rows) {
    if (!r.evidence) continue;
    r.evidence->q = q[k++];
    std::tie(r.verdict, r.reason) = decide(*r.evidence, r.threshold, opt);
  }
}

// Worst verdict first, then by name.
void sort_rows(std::vector<CompareRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const CompareRow& a, const CompareRow& b) {
    if (a.verdict != b.verdict) return a.verdict < b.verdict;
    return a.name < b.name;
  });
}

namespace {

std::string roof_group(const Ceiling& c) {
  if (c.kind == CeilingKind::bandwidth) return "bandwidth/" + (c.level ? to_string(*c.level) : std::string("?"));
  if (c.kind == CeilingKind::transcendental) return "transcendental/" + c.function.value_or("?");
  if (c.kind == CeilingKind::launch) return "launch/" + c.function.value_or("?");
  return "compute/" + (c.precision ? to_string(*c.precision) : std::string("?")) + "/" +
         (c.unit ? to_string(*c.unit) : std::string("?"));
}

void explain_by_roofs(Comparison& c) {
  for (auto& k : c.kernels)
    if (k.decided_by == "rate")  // (a share of the roof has the roof's movement divided out already)
      if (auto why = roof_explanation(k, c.ceilings)) {
      k.reason = *why;
      k.verdict = Verdict::unsure;
    }
}

}  // namespace

// A kernel that moved as much as the roofs of its kind did, measured in the same two runs,
// tells about the machine, not the code (a memory-bound kernel on a host whose DRAM bandwidth
// halved between the runs).
std::optional<std::string> roof_explanation(const CompareRow& k, const std::vector<CompareRow>& ceilings) {
  if ((k.verdict != Verdict::slower && k.verdict != Verdict::faster) || k.roof_group.empty() || !k.evidence)
    return std::nullopt;
  double lo = 0, hi = 0;
  int moved = 0;
  for (const auto& r : ceilings) {
    if (r.roof_group != k.roof_group || r.verdict != k.verdict || !r.evidence) continue;
    lo = moved ? std::min(lo, r.evidence->change) : r.evidence->change;
    hi = moved ? std::max(hi, r.evidence->change) : r.evidence->change;
    ++moved;
  }
  const double margin = k.threshold / 2;
  if (!moved || k.evidence->change < lo - margin || k.evidence->change > hi + margin) return std::nullopt;
  const std::string range =
      moved == 1 ? percent_change(lo) : fmt::format("{} to {}", percent_change(lo), percent_change(hi));
  return fmt::format(
      "{}, but its roofs ({}) moved {} between the same runs: the machine changed, not the code; rerun "
      "on a steady machine",
      percent_change(k.evidence->change), k.roof_group, range);
}

std::string kernel_roof_group(const Results& r, const BenchmarkResult& b) {
  if (!b.placement) return "";
  const Placement& p = *b.placement;
  // A math-bound kernel's roofs are each function it calls; the first stands for the group.
  const std::string& all = binding_ceilings(p);
  const std::string roof = all.substr(0, all.find(", "));
  for (const auto& ce : r.ceilings)
    if (ce.name == roof) return roof_group(ce);
  return "";
}

std::vector<CompareRow> compare_ceilings(const Results& base, const Results& fresh, const CompareOptions& opt) {
  std::vector<CompareRow> rows;
  for (const auto& cb : base.ceilings)
    for (const auto& cn : fresh.ceilings)
      if (cb.name == cn.name && cb.benchmark == cn.benchmark) {
        // The work of one run: the start pass's rate times its median time.
        const double work_b = cb.value_start * cb.measurement.stats.median;
        const double work_n = cn.value_start * cn.measurement.stats.median;
        rows.push_back(make_row(cn.name, cn.value_unit, &cb.measurement, work_b, &cn.measurement, work_n, "", opt));
        rows.back().roof_group = roof_group(cn);
      }
  decide_rows(rows, opt);
  return rows;
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::same:
      return "SAME";
    case Verdict::faster:
      return "FASTER";
    case Verdict::slower:
      return "SLOWER";
    case Verdict::unsure:
      return "UNSURE";
    case Verdict::failed:
      return "FAILED";
    case Verdict::implausible:
      return "IMPLAUSIBLE";
  }
  return "?";
}

std::uint64_t name_seed(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::pair<std::string, double> rate_metric(const BenchmarkResult& b) {
  if (b.flops > 0) return {"FLOP/s", b.flops};
  if (b.bytes > 0) return {"B/s", b.bytes};
  return {"1/s", 1.0};
}

std::string shared_rate_metric(const std::vector<const BenchmarkResult*>& runs) {
  const auto all = [&runs](auto has) { return std::all_of(runs.begin(), runs.end(), [&](const BenchmarkResult* b) { return has(*b); }); };
  if (all([](const BenchmarkResult& b) { return b.flops > 0; })) return "FLOP/s";
  if (all([](const BenchmarkResult& b) { return b.bytes > 0; })) return "B/s";
  return "1/s";
}

double work_for(const BenchmarkResult& b, const std::string& metric) {
  return metric == "FLOP/s" ? b.flops : metric == "B/s" ? b.bytes : 1.0;
}

std::optional<double> roof_share_work(const BenchmarkResult& b) {
  if (!b.placement || !(b.placement->roof_pct > 0)) return std::nullopt;
  const auto [metric, work] = rate_metric(b);
  const double achieved = metric == "FLOP/s" ? b.placement->flop_per_s : metric == "B/s" ? b.placement->bytes_per_s : 0;
  if (!(achieved > 0)) return std::nullopt;
  return work / (achieved / (b.placement->roof_pct / 100));
}

const BenchmarkResult* find_benchmark(const Results& r, const std::string& name) {
  for (const auto& b : r.benchmarks)
    if (b.name == name) return &b;
  return nullptr;
}

bool has_number(const BenchmarkResult* b) {
  return b && b->measured() && b->measurement;
}

Comparison::Side comparison_side(const Results& r, const std::string& path) {
  return {path, short_commit(r), r.provenance.value("utc_time", std::string("?")), device_line(r),
          r.partial ? partial_text(*r.partial) : std::string()};
}

double CompareOptions::calibrated_threshold(const std::string& name, int rounds) const {
  const double t = threshold_for(name);
  const auto it = noise.find(name);
  if (it == noise.end()) return t;
  return std::max(t, noise_sigmas * it->second / std::sqrt(static_cast<double>(std::max(rounds, 1))));
}

std::string rate_text(const std::string& metric, double rate) {
  if (metric == "1/s") return duration(1.0 / rate);
  if (metric == "roof share") return fmt::format("{:.1f}% of roof", 100 * rate);
  return si(rate, metric);
}

std::string device_id(const Results& r) {
  return r.device.value("kind", std::string("?")) + ": " + r.device.value("name", std::string("?"));
}

std::string percent(double fraction) {
  return fmt::format("{:.0f}%", 100 * fraction);
}

std::string percent_change(double change) {
  const std::string s = fmt::format("{:+.1f}%", 100 * change);
  return s[0] == '-' ? "−" + s.substr(1) : s;
}

double CompareOptions::threshold_for(const std::string& name) const {
  double t = threshold;
  bool matched = false;
  for (const auto& [pattern, value] : thresholds) {
    const std::regex re = user_regex("threshold pattern", pattern);
    if (std::regex_search(name, re)) {
      t = matched ? std::max(t, value) : value;
      matched = true;
    }
  }
  return t;
}

Evidence gather_evidence(const Measurement& base, double base_work, const Measurement& fresh, double new_work,
                         const CompareOptions& opt, std::uint64_t seed) {
  // Every k-th sample (and its clock), k the least that keeps opt.max_samples at most.
  const std::size_t most = std::max<std::size_t>(1, opt.max_samples);
  auto stride = [most](const Measurement& m) {
    return std::max<std::size_t>(1, (m.samples_s.size() + most - 1) / most);
  };
  const std::size_t ka = stride(base), kb = stride(fresh);
  auto rates = [](const Measurement& m, double work, std::size_t k) {
    std::vector<double> r;
    r.reserve(m.samples_s.size() / k + 1);
    for (std::size_t i = 0; i < m.samples_s.size(); i += k) r.push_back(work / m.samples_s[i]);
    return r;
  };
  auto clocks = [](const Measurement& m, std::size_t k) {
    std::vector<double> c;
    for (std::size_t i = 0; i < m.sample_clock_hz.size(); i += k) c.push_back(m.sample_clock_hz[i]);
    return c;
  };
  std::vector<double> a = rates(base, base_work, ka), b = rates(fresh, new_work, kb);
  const std::vector<double> clock_a = clocks(base, ka), clock_b = clocks(fresh, kb);  // in sample order
  std::vector<double> rate_a = a, rate_b = b;
  // Sorted once: the medians, the bootstrap and the U test read them sorted (each checks in O(n)).
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  Evidence e;
  e.n_base = static_cast<int>(a.size());
  e.n_new = static_cast<int>(b.size());
  e.base_samples = static_cast<int>(base.samples_s.size());
  e.new_samples = static_cast<int>(fresh.samples_s.size());
  e.base_median = median(a);
  e.new_median = median(b);
  e.change = e.new_median / e.base_median - 1;
  const Interval ratio = bootstrap_median_ratio(a, b, opt.confidence, opt.resamples, seed);
  e.change_ci = {ratio.lo - 1, ratio.hi - 1};
  const MannWhitney mw = mann_whitney(a, b);
  e.p = e.q = mw.p;
  e.exact = mw.exact;
  e.p_min = min_two_sided_p(e.n_base, e.n_new);
  e.base_throttled = static_cast<int>(base.throttled.size());
  e.new_throttled = static_cast<int>(fresh.throttled.size());
  const std::vector<double>&hz_a = clock_a, &hz_b = clock_b;
  if (hz_a.size() == a.size() && hz_b.size() == b.size() && !a.empty() && !b.empty()) {
    // Work per cycle: rate / clock, sample by sample (in sample order: each rate with its clock).
    std::vector<double> ca, cb;
    for (std::size_t i = 0; i < rate_a.size(); ++i) ca.push_back(rate_a[i] / hz_a[i]);
    for (std::size_t i = 0; i < rate_b.size(); ++i) cb.push_back(rate_b[i] / hz_b[i]);
    e.cycle_change = median(cb) / median(ca) - 1;
    e.base_clock_hz = median(hz_a);
    e.new_clock_hz = median(hz_b);
  }
  return e;
}

std::pair<Verdict, std::string> decide(const Evidence& e, double threshold, const CompareOptions& opt) {
  const std::string change = percent_change(e.change);
  const std::string interval = fmt::format("{:.0f}% interval [{}, {}]", 100 * opt.confidence,
                                           percent_change(e.change_ci.lo), percent_change(e.change_ci.hi));
  // What to do: more samples come from `run --min-samples` (the noise target stops sampling
  // early otherwise), within a `--budget` that fits them; more rounds from ci-ab's --rounds.
  const std::string more = e.unit == "samples" ? "run more samples (run --min-samples N, with a --budget that fits them)"
                                               : "run more " + e.unit;
  if (e.n_base < opt.min_samples || e.n_new < opt.min_samples)
    return {Verdict::unsure, fmt::format("too few {0} ({1} in BASE, {2} in NEW; at least {3} each): {4}", e.unit,
                                         e.n_base, e.n_new, opt.min_samples, more)};
  if (e.change_ci.lo > -threshold && e.change_ci.hi < threshold)
    return {Verdict::same, fmt::format("the {} lies inside ±{}", interval, percent(threshold))};
  const bool significant = e.q < opt.alpha;
  const bool large = std::fabs(e.change) >= threshold;
  if (significant && large) {
    // Confirm in cycles where both sides read the clock: a GPU that clocked lower is slower, but
    // that is the machine's doing and a rerun on a steady machine will say so.
    if (e.cycle_change && std::fabs(*e.cycle_change) < threshold / 2)
      return {Verdict::unsure,
              fmt::format("{} in time, but the clock went from {} to {} and per cycle the change is {}: the machine "
                          "changed, not the code; rerun on a steady machine",
                          change, ghz(*e.base_clock_hz), ghz(*e.new_clock_hz), percent_change(*e.cycle_change))};
    return {e.change < 0 ? Verdict::slower : Verdict::faster,
            fmt::format("beyond ±{} and significant: p = {}, q = {} over the comparison", percent(threshold),
                        p_text(e.p), p_text(e.q))};
  }
  if (e.p_min >= opt.alpha)
    return {Verdict::unsure, fmt::format("{}: {} and {} {} cannot reach q < {} (the smallest p is {}): {}", change,
                                         e.n_base, e.n_new, e.unit, opt.alpha, p_text(e.p_min), more)};
  if (large)
    return {Verdict::unsure, fmt::format("{}, but not significant (p = {}, q = {}, needs q < {}): {}", change,
                                         p_text(e.p), p_text(e.q), opt.alpha, more)};
  return {Verdict::unsure,
          fmt::format("{}, but the {} reaches past ±{}: {}", change, interval, percent(threshold), more)};
}

int Comparison::count(Verdict v) const {
  return static_cast<int>(std::count_if(kernels.begin(), kernels.end(), [v](const CompareRow& r) { return r.verdict == v; }));
}

int Comparison::exit_code() const {
  return count(Verdict::slower) + count(Verdict::failed) + count(Verdict::implausible) > 0 || !fresh.partial.empty()
             ? 1
             : 0;
}

// One kernel found on both sides (BASE with a number, or neither with one): its row, with both
// views where both sides are placed (the rate, and the share of the roof of its own run).
CompareRow compare_pair(const std::string& name, const BenchmarkResult& b, const BenchmarkResult& n,
                        const Results& fresh, const CompareOptions& opt) {
  const Measurement* mb = has_number(&b) ? &*b.measurement : nullptr;
  const Measurement* mn = has_number(&n) ? &*n.measurement : nullptr;
  const std::string metric = shared_rate_metric({&b, &n});
  const double work_base = work_for(b, metric), work_new = work_for(n, metric);
  CompareRow row = make_row(name, metric, mb, work_base, mn, work_new, n.error, opt);
  row.roof_group = kernel_roof_group(fresh, n);
  const auto share_base = roof_share_work(b), share_new = roof_share_work(n);
  if (row.evidence && share_base && share_new) {
    const Evidence share = gather_evidence(*mb, *share_base, *mn, *share_new, opt, name_seed(name));
    if (opt.by_roof) {
      row.other_change = row.evidence->change;
      row.evidence = share;
      row.metric = "roof share";
      row.decided_by = "roof share";
    } else {
      row.other_change = share.change;
    }
  } else if (row.evidence && opt.by_roof) {
    row.notes.push_back("not placed under a roof on both sides: judged by its rate");
  }
  return row;
}

Comparison compare_results(const Results& base, const Results& fresh, const CompareOptions& opt,
                           const std::string& base_path, const std::string& new_path) {
  Comparison c;
  c.options = opt;
  c.base = comparison_side(base, base_path);
  c.fresh = comparison_side(fresh, new_path);
  (void)opt.threshold_for("");  // every pattern is compiled: a bad one is an InputError before any work
  environment_differences(base, fresh, opt, c);

  // Kernels, matched by name (family/variant/precision/params: the name carries all four).
  std::map<std::string, const BenchmarkResult*> in_base, in_new;  // (pointers into base and fresh)
  for (const auto& b : base.benchmarks) in_base[b.name] = &b;
  for (const auto& b : fresh.benchmarks) in_new[b.name] = &b;
  struct Pair {
    const std::string* name;
    const BenchmarkResult *b, *n;
  };
  std::vector<Pair> pairs;
  for (const auto& [name, b] : in_base) {
    auto it = in_new.find(name);
    if (it == in_new.end()) {
      c.only_base.push_back(name);
      continue;
    }
    if (!has_number(b) && has_number(it->second)) {
      c.only_new.push_back(name + " (failed in BASE)");
      continue;
    }
    pairs.push_back({&name, b, it->second});
  }
  // Each kernel's statistics on its own: in parallel, into its own slot, in name order still;
  // with many kernels each reads fewer samples (kMaxComparedTotal a side in all).
  CompareOptions each = opt;
  if (!pairs.empty())
    each.max_samples = std::min(opt.max_samples, std::max(kMinComparedSamples, kMaxComparedTotal / pairs.size()));
  std::vector<CompareRow> rows(pairs.size());
  in_parallel(pairs.size(), [&](std::size_t i) {
    rows[i] = compare_pair(*pairs[i].name, *pairs[i].b, *pairs[i].n, fresh, each);
  });
  for (auto& row : rows) c.kernels.push_back(std::move(row));
  for (const auto& [name, b] : in_new)
    if (!in_base.count(name)) c.only_new.push_back(name);

  // Ceilings, matched by name, on their start-of-run pass.
  c.ceilings = compare_ceilings(base, fresh, opt);

  if (c.kernels.empty())
    throw InputError(fmt::format("BASE and NEW have no benchmark in common ({} and {} benchmarks): are they runs of "
                                 "the same suite?",
                                 base.benchmarks.size(), fresh.benchmarks.size()));
  decide_rows(c.kernels, opt);
  explain_by_roofs(c);
  for (auto& row : c.kernels) refuse_implausible(row, in_base.at(row.name), in_new.at(row.name));
  sort_rows(c.kernels);
  sort_rows(c.ceilings);

  set_geomean(c);
  return c;
}

void refuse_implausible(CompareRow& row, const BenchmarkResult* base, const BenchmarkResult* fresh) {
  if (row.verdict == Verdict::failed) return;
  auto at = [](const BenchmarkResult* b) { return fmt::format("{:.0f}% of its roof", b->placement->roof_pct); };
  const std::string why =
      ", above it by more than its run's noise: a number faster than the machine is no evidence of a change (that "
      "run's implausible warning names the likely cause)";
  if (fresh && fresh->implausible()) {  // NEW's number is refused: the comparison fails
    row.verdict = Verdict::implausible;
    row.reason = "NEW at " + at(fresh) + (base && base->implausible() ? "; BASE at " + at(base) : "") + why;
  } else if (base && base->implausible()) {  // only the baseline's: no verdict, and NEW is not to blame
    row.verdict = Verdict::unsure;
    row.reason = "BASE at " + at(base) + why + "; re-baseline";
  }
}

void set_geomean(Comparison& c) {
  double log_sum = 0;
  c.geomean_n = 0;
  for (const auto& r : c.kernels)
    if (r.evidence && r.verdict != Verdict::implausible) {
      log_sum += std::log(r.evidence->new_median / r.evidence->base_median);
      ++c.geomean_n;
    }
  c.geomean_change = c.geomean_n ? std::optional<double>(std::exp(log_sum / c.geomean_n) - 1) : std::nullopt;
}

}  // namespace roofbench
