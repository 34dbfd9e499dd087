#include "reports/history.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <thread>
#include <cmath>
#include <filesystem>
#include <cctype>
#include <map>

#include "reports/format.h"
#include "reports/in_parallel.h"
#include "reports/svg.h"
#include "roofline/model.h"

namespace roofbench {

namespace {

}  // namespace

int History::flagged() const {
  return static_cast<int>(
      std::count_if(benchmarks.begin(), benchmarks.end(), [](const BenchmarkHistory& b) { return b.flag != "ok"; }));
}

std::vector<HistoryRun> load_history(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<HistoryRun> runs;
  std::error_code ec;
  if (paths.size() == 1 && fs::is_directory(paths[0], ec)) {
    for (const auto& file : results_files_under(paths[0])) runs.push_back({file, "", "", read_results(file)});
    std::stable_sort(runs.begin(), runs.end(), [](const HistoryRun& a, const HistoryRun& b) {
      return a.results.provenance.value("utc_time", std::string()) < b.results.provenance.value("utc_time", std::string());
    });
  } else {
    // A few files at once (reading large ones is most of the time history takes), in order.
    const std::size_t at_once = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
    for (std::size_t first = 0; first < paths.size(); first += at_once) {
      std::vector<std::pair<std::string, std::future<Results>>> reading;
      for (std::size_t i = first; i < std::min(paths.size(), first + at_once); ++i) {
        const std::string file = results_path(paths[i]);
        reading.emplace_back(file, std::async(std::launch::async, [file] { return read_results(file); }));
      }
      for (auto& [file, r] : reading) runs.push_back({file, "", "", r.get()});
    }
  }
  if (runs.size() < 2)
    throw InputError(fmt::format("history needs at least two results files; found {} in {}", runs.size(),
                                 paths.size() == 1 ? "'" + paths[0] + "'" : "the paths given"));
  for (auto& r : runs) {
    r.commit = r.results.provenance.value("git_commit", std::string("unknown")).substr(0, 12);
    r.time = r.results.provenance.value("utc_time", std::string("?"));
  }
  return runs;
}

namespace {
// One test of a history, waiting for the false-discovery control over all of them: a step of a
// kernel's series (`step`), or its latest run against its best (-1).
// One test of a history: its place (a benchmark's step, or -1 for latest against best), what it
// compares, and once gathered (every test at once, in parallel), its evidence.
struct Pending {
  std::size_t bench;
  int step;
  const Measurement *a, *b;
  double work_a, work_b;
  std::uint64_t seed;
  Evidence e;
};

// The runs of the device of the latest run; the others are left out, and listed.
void keep_one_device(History& h, std::vector<HistoryRun> runs) {
  h.device = device_id(runs.back().results);
  for (auto& r : runs) {
    if (device_id(r.results) == h.device)
      h.runs.push_back(std::move(r));
    else
      h.other_device.push_back(r.path + " (" + device_id(r.results) + ")");
  }
  if (h.runs.size() < 2)
    throw InputError(fmt::format("history needs two runs of one device; only one run is of {}", h.device));
}

// One kernel's series over the runs: its rate in each (its share of the roof with --by-roof),
// its best and latest runs, and the tests of each step and of the latest against the best, added
// to `pending` as the kernel `idx` of the history. nullopt when fewer than two runs have numbers.
std::optional<BenchmarkHistory> kernel_history(const History& h, const std::string& name, const BenchmarkResult* any,
                                               const CompareOptions& opt, std::size_t idx,
                                               std::vector<Pending>& pending) {
  const int n = static_cast<int>(h.runs.size());
  BenchmarkHistory bh;
  bh.name = name;
  bh.family = any->family;
  bh.threshold = opt.calibrated_threshold(name);
  bh.rate.resize(static_cast<std::size_t>(n));
  std::vector<const BenchmarkResult*> at(static_cast<std::size_t>(n), nullptr), with_numbers;
  for (int i = 0; i < n; ++i) {
    const BenchmarkResult* b = find_benchmark(h.runs[static_cast<std::size_t>(i)].results, name);
    // An implausible number (above its roof beyond its run's noise) is no point of a trend:
    // it could only make a false best, or a false step.
    if (has_number(b) && !b->implausible()) at[static_cast<std::size_t>(i)] = b, with_numbers.push_back(b);
  }
  bh.metric = shared_rate_metric(with_numbers.empty() ? std::vector<const BenchmarkResult*>{any} : with_numbers);
  const std::string rate_metric_name = bh.metric;
  // --by-roof: its share of the roof of each run, where every run with a number placed it.
  bool share = opt.by_roof;
  for (const auto* b : at) share = share && (!b || roof_share_work(*b));
  if (share) bh.metric = "roof share";
  const auto work = [share, rate_metric_name](const BenchmarkResult& b) {
    return share ? *roof_share_work(b) : work_for(b, rate_metric_name);
  };
  for (int i = 0; i < n; ++i)
    if (const auto* b = at[static_cast<std::size_t>(i)])
      bh.rate[static_cast<std::size_t>(i)] = work(*b) / b->measurement->stats.median;
  for (int i = n - 1; i >= 0 && bh.latest < 0; --i)
    if (at[static_cast<std::size_t>(i)]) bh.latest = i;
  for (int i = 0; i < bh.latest; ++i)
    if (at[static_cast<std::size_t>(i)] &&
        (bh.best < 0 || *bh.rate[static_cast<std::size_t>(i)] > *bh.rate[static_cast<std::size_t>(bh.best)]))
      bh.best = i;
  if (bh.best < 0) return std::nullopt;  // fewer than two runs with numbers: no history to speak of
  const std::uint64_t seed = name_seed(name);
  int prev = -1;
  for (int i = 0; i < n; ++i) {
    if (!at[static_cast<std::size_t>(i)]) continue;
    if (prev >= 0) {
      const BenchmarkResult &a = *at[static_cast<std::size_t>(prev)], &b = *at[static_cast<std::size_t>(i)];
      bh.steps.push_back({prev, i, Verdict::unsure, 0});
      pending.push_back({idx, static_cast<int>(bh.steps.size()) - 1, &*a.measurement, &*b.measurement, work(a),
                         work(b), seed + i, {}});
    }
    prev = i;
  }
  const BenchmarkResult &best = *at[static_cast<std::size_t>(bh.best)], &latest = *at[static_cast<std::size_t>(bh.latest)];
  pending.push_back({idx, -1, &*best.measurement, &*latest.measurement, work(best), work(latest), seed, {}});
  return bh;
}

// One false-discovery control over every test this history makes, then each test's verdict.
void decide_all(History& h, std::vector<Pending>& pending, const CompareOptions& opt) {
  std::vector<double> p;
  for (const auto& x : pending) p.push_back(x.e.p);
  const std::vector<double> q = benjamini_hochberg(p);
  for (std::size_t k = 0; k < pending.size(); ++k) {
    Pending& x = pending[k];
    x.e.q = q[k];
    BenchmarkHistory& bh = h.benchmarks[x.bench];
    const auto [verdict, reason] = decide(x.e, bh.threshold, opt);
    if (x.step >= 0) {
      bh.steps[static_cast<std::size_t>(x.step)].verdict = verdict;
      bh.steps[static_cast<std::size_t>(x.step)].change = x.e.change;
    } else {
      bh.vs_best = x.e;
      bh.vs_best_verdict = verdict;
      bh.vs_best_reason = reason;
    }
  }
}

// A step or a comparison with the best that the kernel's roofs made too (compare's rule, on the
// ceilings of the same two runs) is UNSURE, with why. The ceilings of a pair are compared once.
void explain_by_roofs(History& h, const CompareOptions& opt) {
  std::map<std::pair<int, int>, std::vector<CompareRow>> roofs;
  auto explain = [&](const BenchmarkHistory& bh, int from, int to, Verdict verdict,
                     double change) -> std::optional<std::string> {
    if (verdict != Verdict::slower && verdict != Verdict::faster) return std::nullopt;
    if (bh.metric == "roof share") return std::nullopt;  // the roofs' movement is divided out already
    const Results& newer = h.runs[static_cast<std::size_t>(to)].results;
    const BenchmarkResult* b = find_benchmark(newer, bh.name);
    CompareRow k;
    k.verdict = verdict;
    k.threshold = bh.threshold;
    k.evidence = Evidence{};
    k.evidence->change = change;
    k.roof_group = b ? kernel_roof_group(newer, *b) : "";
    if (k.roof_group.empty()) return std::nullopt;
    auto it = roofs.find({from, to});
    if (it == roofs.end())
      it = roofs
               .emplace(std::make_pair(from, to),
                        compare_ceilings(h.runs[static_cast<std::size_t>(from)].results, newer, opt))
               .first;
    return roof_explanation(k, it->second);
  };
  for (auto& bh : h.benchmarks) {
    for (auto& s : bh.steps)
      if (auto why = explain(bh, s.from, s.to, s.verdict, s.change)) {
        s.verdict = Verdict::unsure;
        bh.roofs = fmt::format("run {}: {}", s.to + 1, *why);
      }
    if (bh.vs_best)
      if (auto why = explain(bh, bh.best, bh.latest, bh.vs_best_verdict, bh.vs_best->change)) {
        bh.vs_best_verdict = Verdict::unsure;
        bh.vs_best_reason = *why;
        bh.roofs = fmt::format("against the best: {}", *why);
      }
  }
}

// A benchmark two runs timed differently (cold in one, warm in the other: a variant declared
// warm since) is not compared like for like: a step or a comparison with the best across that
// change is UNSURE, with why.
void unsure_across_timing_changes(History& h) {
  auto timed = [&h](int run, const std::string& name) {
    return find_benchmark(h.runs[static_cast<std::size_t>(run)].results, name)->measurement->cold_cache;
  };
  auto unlike = [&](const BenchmarkHistory& bh, int from, int to, Verdict verdict) -> std::optional<std::string> {
    if (verdict != Verdict::slower && verdict != Verdict::faster) return std::nullopt;
    const bool a = timed(from, bh.name), b = timed(to, bh.name);
    if (a == b) return std::nullopt;
    return fmt::format("timed {} in run {} and {} in run {}: not like for like", a ? "cold" : "warm", from + 1,
                       b ? "cold" : "warm", to + 1);
  };
  for (auto& bh : h.benchmarks) {
    for (auto& s : bh.steps)
      if (auto why = unlike(bh, s.from, s.to, s.verdict)) {
        s.verdict = Verdict::unsure;
        bh.roofs = *why;
      }
    if (bh.vs_best)
      if (auto why = unlike(bh, bh.best, bh.latest, bh.vs_best_verdict)) {
        bh.vs_best_verdict = Verdict::unsure;
        bh.vs_best_reason = *why;
        bh.roofs = *why;
      }
  }
}

// Each kernel's flag (a slower last step, a regression since its best with a step or without one)
// and the flagged ones first.
void flag(History& h) {
  for (auto& bh : h.benchmarks) {
    bh.flag = "ok";
    const bool last_step_slower = !bh.steps.empty() && bh.steps.back().verdict == Verdict::slower;
    if (last_step_slower) {
      bh.flag = "STEP";
    } else if (bh.vs_best_verdict == Verdict::slower) {
      bool any_step = false;
      for (const auto& s : bh.steps)
        if (s.from >= bh.best && s.verdict == Verdict::slower) any_step = true;
      bh.flag = any_step ? "REGRESSED" : "CREEP";
    }
  }
  std::stable_sort(h.benchmarks.begin(), h.benchmarks.end(), [](const BenchmarkHistory& a, const BenchmarkHistory& b) {
    return (a.flag != "ok") > (b.flag != "ok");
  });
}
}  // namespace

namespace {
// Each kernel's change points over the latest kMaxChangePointRuns runs that have a number for it,
// as run indices.
void find_change_points(History& h) {
  in_parallel(h.benchmarks.size(), [&h](std::size_t k) {
    BenchmarkHistory& b = h.benchmarks[k];
    std::vector<double> series;
    std::vector<int> run;
    for (std::size_t i = 0; i < b.rate.size(); ++i)
      if (b.rate[i]) series.push_back(*b.rate[i]), run.push_back(static_cast<int>(i));
    if (series.size() > kMaxChangePointRuns) {
      const auto skip = static_cast<std::ptrdiff_t>(series.size() - kMaxChangePointRuns);
      series.erase(series.begin(), series.begin() + skip);
      run.erase(run.begin(), run.begin() + skip);
    }
    b.change_points = change_points(series, h.options.alpha, h.options.change_point_permutations, 3, name_seed(b.name));
    for (auto& c : b.change_points) c.index = run[static_cast<std::size_t>(c.index)];
  });
}
}  // namespace

History build_history(std::vector<HistoryRun> runs, const CompareOptions& opt) {
  (void)opt.threshold_for("");  // a bad threshold pattern is an InputError before any work
  History h;
  h.options = opt;
  keep_one_device(h, std::move(runs));
  // Every kernel seen in any run, in name order.
  std::map<std::string, const BenchmarkResult*> names;
  for (const auto& r : h.runs)
    for (const auto& b : r.results.benchmarks) names.emplace(b.name, &b);
  std::vector<Pending> pending;
  // Each test reads fewer samples when there are many: kMaxComparedTotal a side over the history.
  CompareOptions each = opt;
  const std::size_t tests = names.size() * h.runs.size();
  if (tests > 0) each.max_samples = std::min(opt.max_samples, std::max(kMinComparedSamples, kMaxComparedTotal / tests));
  for (const auto& [name, any] : names)
    if (auto bh = kernel_history(h, name, any, each, h.benchmarks.size(), pending))
      h.benchmarks.push_back(std::move(*bh));
  if (h.benchmarks.empty()) throw InputError("no benchmark has numbers in two of the runs");
  in_parallel(pending.size(), [&](std::size_t k) {
    Pending& x = pending[k];
    x.e = gather_evidence(*x.a, x.work_a, *x.b, x.work_b, each, x.seed);
  });
  find_change_points(h);
  decide_all(h, pending, opt);
  explain_by_roofs(h, opt);
  unsure_across_timing_changes(h);
  flag(h);
  return h;
}

std::string sparkline(const std::vector<std::optional<double>>& v, double min_span) {
  static const char* bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& x : v)
    if (x) {
      lo = any ? std::min(lo, *x) : *x;
      hi = any ? std::max(hi, *x) : *x;
      any = true;
    }
  // The bars span at least min_span of the highest value, so that noise well inside the
  // threshold stays a ripple instead of drawing a mountain range.
  const double span = std::max(hi - lo, min_span * hi);
  const double base = hi - span;
  std::string out;
  for (const auto& x : v) {
    if (!x) {
      out += " ";
      continue;
    }
    const int k = span > 0 ? static_cast<int>(std::lround((*x - base) / span * 7)) : 7;
    out += bars[std::clamp(k, 0, 7)];
  }
  return out;
}

namespace {

struct LineText {
  std::string flag, name, spark, first, latest, vs_best, why;
};

LineText line_text(const History& h, const BenchmarkHistory& b) {
  LineText t;
  t.flag = b.flag;
  t.name = b.name;
  t.spark = sparkline(b.rate, b.threshold);
  std::optional<double> first;
  for (const auto& r : b.rate)
    if (r && !first) first = r;
  t.first = rate_text(b.metric, *first);
  t.latest = rate_text(b.metric, *b.rate[static_cast<std::size_t>(b.latest)]);
  t.vs_best = b.vs_best ? fmt::format("{} vs best (run {}, {})", percent_change(b.vs_best->change), b.best + 1,
                                      h.runs[static_cast<std::size_t>(b.best)].commit)
                        : "—";
  if (b.flag == "STEP") {
    t.why = fmt::format("the latest step is SLOWER: {}", percent_change(b.steps.back().change));
  } else if (b.flag == "CREEP") {
    double worst = 0;
    for (const auto& s : b.steps)
      if (s.from >= b.best) worst = std::min(worst, s.change);
    t.why = fmt::format("no step since the best was beyond ±{:.0f}% (the largest {}), together {}", 100 * b.threshold,
                        percent_change(worst), percent_change(b.vs_best->change));
  } else if (b.flag == "REGRESSED") {
    for (const auto& s : b.steps)
      if (s.from >= b.best && s.verdict == Verdict::slower)
        t.why = fmt::format("SLOWER at run {} ({}: {}) and not recovered", s.to + 1,
                            h.runs[static_cast<std::size_t>(s.to)].commit, percent_change(s.change));
  } else {
    t.why = !b.roofs.empty()                       ? "UNSURE, " + b.roofs
            : b.vs_best_verdict == Verdict::slower ? ""
                                                   : to_string(b.vs_best_verdict) + " vs best";
  }
  return t;
}

}  // namespace

namespace {
// The change points of every kernel, a line each (a Markdown table with `markdown`), or "" when
// there are none.
std::string change_point_text(const History& h, bool markdown) {
  std::string out;
  int n = 0;
  for (const auto& b : h.benchmarks)
    for (const auto& c : b.change_points) {
      const HistoryRun& r = h.runs[static_cast<std::size_t>(c.index)];
      const std::string step = percent_change(c.after / c.before - 1);
      const std::string rates = rate_text(b.metric, c.before) + " → " + rate_text(b.metric, c.after);
      if (markdown)
        out += fmt::format("| {} | {} ({}, {}) | {} | {} | {} |\n", md_code(b.name), c.index + 1, md_code(r.commit),
                           md_cell(r.time), step, md_cell(rates), fmt::format("{:.3f}", c.p));
      else
        out += fmt::format("  {}: run {} ({}, {}): {} ({}), p = {}\n", b.name, c.index + 1, r.commit, r.time, step, rates,
                           fmt::format("{:.3f}", c.p));
      ++n;
    }
  const std::string head = fmt::format(
      "Change points: where a kernel's rate stepped over the {} runs, named by the first run after the step "
      "(e-divisive means, permutation test, p < {}, at least 3 runs a side{}): {}",
      h.runs.size(), h.options.alpha,
      h.runs.size() > kMaxChangePointRuns ? fmt::format("; the latest {} runs", kMaxChangePointRuns) : "",
      n ? std::to_string(n) : "none");
  if (markdown)
    return "\n" + head + "\n" + (n ? "\n| benchmark | first run after the step | step | median rate | p |\n|---|---|--:|---|--:|\n" + out : "");
  return "\n" + head + "\n" + out;
}
}  // namespace

std::string render_history_text(const History& h) {
  std::string out = fmt::format("history of {}: {} runs, first {} ({}), latest {} ({})\n", h.device, h.runs.size(),
                                h.runs.front().commit, h.runs.front().time, h.runs.back().commit, h.runs.back().time);
  for (const auto& o : h.other_device) out += "left out (another device): " + o + "\n";
  std::size_t w = 9;
  for (const auto& b : h.benchmarks) w = std::max(w, b.name.size());
  // The sparkline is one character per run (more bytes than characters): padded by hand.
  const std::size_t spark_w = std::max<std::size_t>(h.runs.size(), 5);
  const std::string pad(spark_w - h.runs.size(), ' ');
  out += fmt::format("\n{:<9} {:<{}} {:<{}} {:>14} {:>14}  {}\n", "flag", "benchmark", w, "trend", spark_w, "first",
                     "latest", "latest against the best earlier run");
  for (const auto& b : h.benchmarks) {
    const LineText t = line_text(h, b);
    out += fmt::format("{:<9} {:<{}} {}{} {:>14} {:>14}  {}{}\n", t.flag, t.name, w, t.spark, pad, t.first, t.latest,
                       t.vs_best, t.why.empty() ? "" : "; " + t.why);
  }
  out += change_point_text(h, false);
  out += fmt::format("\n{} of {} benchmarks flagged; exit {}\n", h.flagged(), h.benchmarks.size(), h.exit_code());
  return out;
}

std::string render_history_markdown(const History& h) {
  std::string out = fmt::format("### roofbench history: {} of {} benchmarks flagged\n\n", h.flagged(), h.benchmarks.size());
  out += fmt::format("{} runs on {}, from {} ({}) to {} ({}). Each benchmark's latest run is compared with its "
                     "best earlier run and with the run before it (threshold ±{:.0f}%, q < {}), by {}.\n\n",
                     h.runs.size(), md_cell(h.device), md_code(h.runs.front().commit), md_cell(h.runs.front().time),
                     md_code(h.runs.back().commit), md_cell(h.runs.back().time), 100 * h.options.threshold, h.options.alpha,
                     h.options.by_roof ? "each kernel's share of its roof in its own run (its rate where a run did "
                                         "not place it)"
                                       : "rate");
  out += "| flag | benchmark | trend | first | latest | against the best | why |\n|---|---|---|--:|--:|---|---|\n";
  for (const auto& b : h.benchmarks) {
    const LineText t = line_text(h, b);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", t.flag == "ok" ? "ok" : "**" + t.flag + "**",
                       md_code(t.name), t.spark, md_cell(t.first), md_cell(t.latest), md_cell(t.vs_best), md_cell(t.why));
  }
  out += change_point_text(h, true);
  return out;
}

std::vector<std::pair<std::string, std::string>> render_history_svgs(const History& h) {
  std::map<std::string, std::vector<const BenchmarkHistory*>> families;
  for (const auto& b : h.benchmarks) families[b.family].push_back(&b);
  std::vector<std::pair<std::string, std::string>> out;
  const double W = 900, left = 70, right = 560, top = 50, bottom = 330;
  const std::size_t n = h.runs.size();
  for (const auto& [family, list] : families) {
    // y: percent change against each benchmark's first run with a number.
    double lo = -5, hi = 5;
    std::vector<std::vector<std::pair<std::size_t, double>>> series;
    for (const auto* b : list) {
      std::vector<std::pair<std::size_t, double>> pts;
      std::optional<double> first;
      for (std::size_t i = 0; i < b->rate.size(); ++i) {
        if (!b->rate[i]) continue;
        if (!first) first = b->rate[i];
        const double pct = 100 * (*b->rate[i] / *first - 1);
        pts.push_back({i, pct});
        lo = std::min(lo, pct);
        hi = std::max(hi, pct);
      }
      series.push_back(pts);
    }
    const double step = hi - lo > 40 ? 10 : hi - lo > 20 ? 5 : 2;
    lo = std::floor(lo / step) * step;
    hi = std::ceil(hi / step) * step;
    const double H = std::max(400.0, top + 24.0 * static_cast<double>(list.size()) + 40);
    auto px = [&](std::size_t i) { return n > 1 ? left + (right - left) * static_cast<double>(i) / (n - 1) : left; };
    auto py = [&](double v) { return bottom - (bottom - top) * (v - lo) / (hi - lo); };
    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" "
        "fill=\"white\"/>\n<text x=\"{2}\" y=\"28\" font-size=\"15\" font-weight=\"bold\">{3}: rate against its first "
        "run, {4} runs on {5}</text>\n",
        W, H, left, xml_escape(family), n, xml_escape(h.device));
    for (double v = lo; v <= hi + 1e-9; v += step) {
      s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"1\"/>\n", left,
                       py(v), right, py(v), std::fabs(v) < 1e-9 ? "#888" : "#e5e5e5");
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#444\">{:+.0f}%</text>\n", left - 6,
                       py(v) + 4, v);
    }
    for (std::size_t i = 0; i < n; ++i)
      s += fmt::format(
          "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" transform=\"rotate(-40 {:.1f} {})\" fill=\"#444\">{}</text>\n",
          px(i), bottom + 16, px(i), bottom + 16, xml_escape(h.runs[i].commit.substr(0, 8)));
    for (std::size_t k = 0; k < list.size(); ++k) {
      const char* colour = series_colour(k);
      const bool flagged = list[k]->flag != "ok";
      std::string points;
      for (const auto& [i, v] : series[k]) points += fmt::format("{:.1f},{:.1f} ", px(i), py(v));
      s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" points=\"{}\"><title>{}</title>"
                       "</polyline>\n",
                       colour, flagged ? 3 : 1.5, points, xml_escape(list[k]->name));
      for (const auto& [i, v] : series[k])
        s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n", px(i), py(v), colour);
      const double ly = top + 24.0 * static_cast<double>(k);
      s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"/>\n",
                       right + 20, ly, right + 40, ly, colour);
      std::string label = list[k]->name.substr(family.size() + 1);
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\"{}>{}{}</text>\n", right + 46, ly + 4,
                       flagged ? " font-weight=\"bold\" fill=\"#B00020\"" : "", xml_escape(label),
                       flagged ? " — " + list[k]->flag : "");
    }
    s += "</svg>\n";
    std::string file = "history-" + family + ".svg";
    for (auto& c : file)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
    out.push_back({file, s});
  }
  return out;
}

}  // namespace roofbench
