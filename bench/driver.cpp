#include "bench/driver.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <regex>

#include "bench/atomic_write.h"
#include "bench/counters.h"
#include "bench/cpu_info.h"
#include "bench/device.h"
#include "bench/gbench_runner.h"
#include "reports/compare.h"
#include "reports/format.h"
#include "reports/history.h"
#include "reports/report.h"
#include "reports/svg.h"
#include "roofbench/version.h"
#include "roofline/datasheets.h"
#include "roofline/gpu_peaks.h"
#include "roofline/cupti/metrics.h"
#include "roofline/model.h"
#ifdef ROOFBENCH_HAVE_CUDA
#include "roofline/cupti/host.h"
#endif

namespace roofbench {

namespace fs = std::filesystem;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2;

std::string shell_output(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string quote_arg(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\"'\\$`!*?[]{}()<>|;&") == std::string::npos) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

nlohmann::json provenance(int argc, char** argv) {
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + quote_arg(argv[i]);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  // The commit of the tree the binary was built from, read now so a rebuild is not needed to
  // notice new commits; the configure-time value is the fallback.
  std::string commit = ROOFBENCH_GIT_COMMIT, dirty = "unknown";
  const std::string src = ROOFBENCH_SOURCE_DIR;
  if (fs::exists(fs::path(src) / ".git")) {
    const std::string head = shell_output("git -C " + quote_arg(src) + " rev-parse HEAD 2>/dev/null");
    if (!head.empty()) commit = head;
    dirty = shell_output("git -C " + quote_arg(src) + " status --porcelain --untracked-files=no 2>/dev/null");
  }
  nlohmann::json p = {{"roofbench_version", ROOFBENCH_VERSION},
                      {"git_commit", commit},
                      {"command_line", cmd},
                      {"utc_time", utc_now("%Y-%m-%dT%H:%M:%SZ")},
                      {"host", host},
                      {"compiler", std::string("g++ ") + __VERSION__}};
  p["git_dirty"] = dirty == "unknown" ? nlohmann::json(nullptr) : nlohmann::json(!dirty.empty());
  return p;
}

// The device a run selects benchmarks for: its backend and, for a GPU, its compute capability
// (variants built for another architecture are left out, each with why, in `left_out`).
struct Target {
  Backend backend;
  std::string compute_capability;  // "9.0"; empty for the CPU
  bool runs(const Variant& v, std::vector<NotRun>* left_out) const {
    if (v.backend != backend) return false;
    const std::string why = not_here(v, compute_capability);
    if (why.empty()) return true;
    if (left_out) left_out->push_back({v.base_name(), why});
    return false;
  }
};

// An option's regular expression; empty matches everything.
std::regex option_regex(const std::string& option, const std::string& pattern) {
  try {
    return std::regex(pattern.empty() ? "." : pattern);
  } catch (const std::regex_error&) {
    throw InputError(option + " '" + pattern + "' is not a valid regular expression");
  }
}
std::regex filter_regex(const std::string& filter) {
  return option_regex("--filter", filter);
}

// --skip: benchmarks (ceilings too) left out of the run by name, e.g. a kernel that faults and
// takes the device down with it. Each variant it leaves out is listed in results.json not_run.
struct Skip {
  explicit Skip(std::string p = "") : pattern(std::move(p)), re(option_regex("--skip", pattern)) {}
  std::string pattern;
  std::regex re;
  // `v`'s sizes that run; a variant with sizes skipped is listed in *left_out (when given).
  std::vector<Params> keep(const Variant& v, const std::vector<Params>& sizes, std::vector<NotRun>* left_out) const {
    if (pattern.empty()) return sizes;
    std::vector<Params> kept;
    for (const auto& p : sizes)
      if (!std::regex_search(v.name(p), re)) kept.push_back(p);
    if (kept.size() < sizes.size() && left_out)
      left_out->push_back({v.base_name(), kept.empty()
                                              ? fmt::format("skipped by --skip '{}'", pattern)
                                              : fmt::format("skipped by --skip '{}' at {} of its {} sizes", pattern,
                                                            sizes.size() - kept.size(), sizes.size())});
    return kept;
  }
};

std::vector<Job> ceiling_jobs(const Target& t, bool quick, const Skip& skip, const std::string& tag = "",
                              std::vector<NotRun>* left_out = nullptr) {
  std::vector<Job> jobs;
  for (const auto& v : registry())
    if (v.ceiling && t.runs(v, left_out))
      for (const auto& p : skip.keep(v, quick ? v.quick_sizes : v.sizes, left_out)) jobs.push_back({&v, p, tag});
  return jobs;
}

constexpr const char* kEndPass = "pass:end";

std::vector<Job> kernel_jobs(const Target& t, bool quick, const std::string& filter, const Skip& skip,
                             std::vector<NotRun>* left_out) {
  const std::regex re = filter_regex(filter);
  std::vector<Job> jobs;
  for (const auto& v : registry()) {
    if (v.ceiling || v.backend != t.backend) continue;
    std::vector<Params> matched;
    for (const auto& p : quick ? v.quick_sizes : v.sizes)
      if (std::regex_search(v.name(p), re)) matched.push_back(p);
    if (matched.empty() || !t.runs(v, left_out)) continue;
    for (const auto& p : skip.keep(v, matched, left_out)) jobs.push_back({&v, p, ""});
  }
  if (jobs.empty()) {
    std::string why;
    for (const auto& n : *left_out) why += fmt::format("; {} is {}", n.benchmark, n.why);
    throw InputError(
        fmt::format("--filter '{}' matches no benchmark that runs on the {} device{} (see `roofbench list`)", filter,
                    to_string(t.backend), why));
  }
  return jobs;
}

// A ceiling from its start-of-run measurement and, when it ran again after the kernels, its
// end-of-run one. The roof is the better of the two: a roof is what the machine can do, and a
// machine that was slower in one pass (a busy neighbour, a warmer chip) could still do the other.
Ceiling make_ceiling(const Device& dev, const nlohmann::json& device, const JobResult& start, const JobResult* end) {
  const Variant& v = *start.job.variant;
  const BenchmarkResult& b = start.result;
  auto rate = [&](const Measurement& m) {
    return (v.ceiling->kind == "bandwidth" ? b.bytes : b.flops) / m.stats.median;
  };
  Ceiling c;
  c.name = v.ceiling->name;
  c.kind = v.ceiling->kind;
  c.method = v.ceiling->method + "; " + v.work +
             (end ? "; the best of a pass at the start and one at the end of the run" : "");
  c.benchmark = b.name;
  c.measurement = *b.measurement;
  c.value_start = rate(c.measurement);
  c.value = c.value_start;
  c.warnings = b.warnings;
  if (end) {
    c.measurement_end = *end->result.measurement;
    c.value_end = rate(*c.measurement_end);
    c.value = std::max(c.value, *c.value_end);
    for (const auto& w : end->result.warnings) c.warnings.push_back("end pass: " + w);
  }
  if (c.kind == "bandwidth") {
    c.level = v.ceiling->level;
    c.value_unit = "B/s";
  } else {
    c.precision = v.precision;
    c.unit = v.unit;
    c.value_unit = "FLOP/s";
  }
  if (dev.backend() == Backend::cuda) c.datasheet = datasheet_value(dev.name(), c);
  // Theoretical peaks at the clock measured around the samples of the pass that gave the value
  // (the mean of the readings before and after).
  const Measurement& m = c.value_end && *c.value_end > c.value_start ? *c.measurement_end : c.measurement;
  const std::optional<double> measured_hz =
      m.clock_before_hz && m.clock_after_hz ? std::optional<double>(0.5 * (*m.clock_before_hz + *m.clock_after_hz))
                                            : m.clock_before_hz;
  if (dev.backend() == Backend::cuda && measured_hz) c.theoretical = gpu_theoretical(device, c, *measured_hz);
  if (dev.backend() == Backend::cpu && c.kind == "compute" && c.precision &&
      (*c.precision == Precision::fp32 || *c.precision == Precision::fp64)) {
    // /proc/cpuinfo's nominal clock only when no reading was possible.
    const CpuInfo& cpu = cpu_info();
    const double hz = measured_hz.value_or(cpu.nominal_hz);
    if (hz > 0) {
      const bool fp64 = *c.precision == Precision::fp64;
      c.theoretical = ReferenceValue{theoretical_fma_peak(cpu, fp64, hz), theoretical_fma_derivation(cpu, fp64, hz)};
    }
  }
  return c;
}

struct RunArgs {
  std::string device = "auto";
  std::string filter;
  std::string skip;  // --skip REGEX
  bool quick = false;
  bool warm = false;
  std::string out;
  std::uint64_t seed = MeasureOptions{}.seed;
  std::optional<double> noise_target_pct, budget_s;
  bool counters = false;
  std::string metrics;  // --metrics a,b,c
  std::vector<std::string> gbench_args;
};

// Before anything is measured: which counters each benchmark gets and the replay passes they
// need, one line per distinct metric set.
void print_counter_plan(CounterCollector& cc, const std::vector<Job>& jobs, std::ostream& out) {
  std::map<std::vector<std::string>, std::vector<std::string>> sets;  // metrics -> benchmarks
  for (const auto& j : jobs)
    if (j.tag.empty() && j.variant->launches_kernels)
      sets[cc.metrics_for(declare(*j.variant, j.params))].push_back(j.variant->base_name());
  for (auto& [metrics, names] : sets) {
    names.erase(std::unique(names.begin(), names.end()), names.end());
    const int passes = cc.passes_for(metrics);
    std::string who = names.front();
    if (names.size() > 1) who += fmt::format(" and {} more", names.size() - 1);
    out << fmt::format("  {} metric{}, {} pass{}: {}\n", metrics.size(), metrics.size() == 1 ? "" : "s", passes,
                       passes == 1 ? "" : "es", who);
  }
}

int cmd_run(const RunArgs& a, bool ceilings_only, int argc, char** argv) {
  auto dev = open_device(a.device);
  Results r;
  r.device = dev->describe();
  const Target target{dev->backend(), r.device.value("compute_capability", std::string())};
  // Ceilings first, then the kernels, then the ceilings again: the pair shows whether the
  // machine held steady through the run (ceiling warnings say when it did not).
  const Skip skip(a.skip);
  std::vector<Job> jobs = ceiling_jobs(target, a.quick, skip, "", &r.not_run);
  const std::size_t start_ceilings = jobs.size();
  if (!ceilings_only) {
    auto k = kernel_jobs(target, a.quick, a.filter, skip, &r.not_run);
    auto e = ceiling_jobs(target, a.quick, skip, kEndPass);
    jobs.insert(jobs.end(), k.begin(), k.end());
    jobs.insert(jobs.end(), e.begin(), e.end());
  }
  const std::string out_dir =
      !a.out.empty() ? a.out : fmt::format("results/{}-{}", to_string(dev->backend()), utc_now("%Y%m%dT%H%M%SZ"));
  ensure_writable_dir(out_dir);  // before minutes of measuring, not after

  MeasureOptions opt = a.quick ? MeasureOptions::quick() : MeasureOptions::full();
  opt.cold_cache = !a.warm;
  opt.seed = a.seed;
  if (a.noise_target_pct) opt.target_rel_iqr = *a.noise_target_pct / 100;
  if (a.budget_s) opt.max_time_s = *a.budget_s;

  CounterRequest creq;
  creq.enabled = a.counters || !a.metrics.empty();
  if (!a.metrics.empty()) creq.metrics = cupti::parse_metric_list(a.metrics);
  nlohmann::json counter_status;
  std::unique_ptr<CounterCollector> counters = open_counters(*dev, creq, &counter_status);

  r.provenance = provenance(argc, argv);
  r.settings = opt.to_json();
  r.settings["quick"] = a.quick;
  r.settings["filter"] = a.filter;
  r.settings["skip"] = a.skip;
  r.settings["flush_bytes"] = dev->flush_bytes();
  r.settings["timer"] = dev->timer();

  std::cout << fmt::format(
      "roofbench {} on {}: {} benchmarks ({} ceilings first{}), cache {}\n", ROOFBENCH_VERSION, device_line(r),
      jobs.size(), start_ceilings, ceilings_only ? "" : " and again last",
      opt.cold_cache ? fmt::format("flushed with {} before every sample", si(dev->flush_bytes(), "B")) : "warm");
  for (const auto& n : r.not_run) std::cout << fmt::format("left out: {} ({})\n", n.benchmark, n.why);
  if (counters && counter_status.value("available", false)) {
    std::cout << "counters: CUPTI Range Profiler on " << counter_status.value("chip", std::string("?"))
              << ", in a pass of their own after each benchmark's timed samples\n";
    print_counter_plan(*counters, jobs, std::cout);
  } else if (creq.enabled) {
    std::cout << "counters: none (" << counter_status.value("reason", std::string("unavailable"))
              << "); the run goes on " << (counters ? "with timing and CUPTI's kernel trace" : "with timing only")
              << "\n";
    if (counter_status.contains("hint")) std::cout << "  to fix: " << counter_status["hint"].get<std::string>() << "\n";
  }
  JobsOutput ran = run_jobs(*dev, jobs, opt, a.gbench_args, std::cout, counters.get());
  r.counters = counters ? counters->status() : counter_status;

  int failed = 0;
  for (const auto& jr : ran.results) {
    if (!jr.result.verified()) {
      ++failed;
      r.benchmarks.push_back(jr.result);  // a failed ceiling pass is listed with the kernels, with its error
      continue;
    }
    if (!jr.job.variant->ceiling) {
      r.benchmarks.push_back(jr.result);
      continue;
    }
    if (jr.job.tag == kEndPass) continue;  // merged into its start pass below
    const JobResult* end = nullptr;
    for (const auto& other : ran.results)
      if (other.job.tag == kEndPass && other.job.variant == jr.job.variant && other.job.params == jr.job.params &&
          other.result.verified())
        end = &other;
    r.ceilings.push_back(make_ceiling(*dev, r.device, jr, end));
  }
  apply_model(r);

  FileSet files;
  files.add((fs::path(out_dir) / "results.json").string(), dump_results(r));
  files.add((fs::path(out_dir) / "gbench.json").string(), ran.gbench_json);
  for (auto& [name, content] : render_reports(r)) files.add((fs::path(out_dir) / name).string(), std::move(content));
  files.commit();

  std::cout << render_console(r);
  std::cout << "\nwrote:\n";
  for (const auto& p : files.paths()) std::cout << "  " << p << "\n";
  if (failed) {
    std::cerr << fmt::format("roofbench: {} benchmark(s) failed; they carry no numbers\n", failed);
    return kExitFailed;
  }
  return kExitOk;
}

int cmd_report(const std::vector<std::string>& paths, const std::string& out) {
  if (paths.size() > 1) {
    // Several machines on one chart: rooflines.svg, in --out or the current folder.
    std::vector<Results> runs;
    std::vector<std::string> labels;
    for (const auto& p : paths) {
      runs.push_back(load_results(results_path(p)));
      labels.push_back(runs.back().device.value("name", std::string("?")));
    }
    for (std::size_t i = 0; i < runs.size(); ++i)  // the same machine twice: tell the runs apart by time
      if (std::count(labels.begin(), labels.end(), labels[i]) > 1)
        labels[i] += " · " + runs[i].provenance.value("utc_time", std::string("?"));
    std::vector<const Results*> ptrs;
    for (auto& r : runs) {
      apply_model(r);
      ptrs.push_back(&r);
    }
    const fs::path dir = out.empty() ? fs::path(".") : fs::path(out);
    ensure_writable_dir(dir.string());
    FileSet files;
    files.add((dir / "rooflines.svg").string(), render_svg_machines(ptrs, labels));
    files.commit();
    for (const auto& p : files.paths()) std::cout << p << "\n";
    return kExitOk;
  }
  const std::string path = results_path(paths[0]);
  Results r = load_results(path);
  fs::path dir = !out.empty() ? fs::path(out) : fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  ensure_writable_dir(dir.string());
  FileSet files;
  for (auto& [name, content] : render_reports(r)) files.add((dir / name).string(), std::move(content));
  files.commit();
  for (const auto& p : files.paths()) std::cout << p << "\n";
  return kExitOk;
}

struct CompareArgs {
  std::string base, fresh, markdown, json;
  double threshold_pct = 5;
  std::vector<std::string> threshold_for;  // "REGEX=PCT"
  double alpha = CompareOptions{}.alpha;
  bool allow_device_mismatch = false;
};

CompareOptions compare_options(double threshold_pct, const std::vector<std::string>& threshold_for, double alpha) {
  CompareOptions opt;
  opt.threshold = threshold_pct / 100;
  opt.alpha = alpha;
  for (const auto& t : threshold_for) {
    const auto eq = t.rfind('=');
    double v = -1;
    if (eq != std::string::npos && eq > 0) {
      try {
        std::size_t used = 0;
        v = std::stod(t.substr(eq + 1), &used);
        if (used != t.size() - eq - 1) v = -1;
      } catch (const std::exception&) {
        v = -1;
      }
    }
    if (!(v > 0 && v < 1000))
      throw InputError("--threshold-for '" + t + "': expected REGEX=PERCENT, e.g. '^gemm/naive/=10'");
    opt.thresholds.push_back({t.substr(0, eq), v / 100});
  }
  (void)opt.threshold_for("");  // a bad pattern is an InputError now, before any file is read
  return opt;
}

// Writes the optional --markdown and --json files, all or none.
void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  FileSet files;
  for (const auto& [path, content] : outputs) {
    if (path.empty()) continue;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) ensure_writable_dir(parent.string());
    files.add(path, content);
  }
  files.commit();
}

int cmd_compare(const CompareArgs& a) {
  CompareOptions opt = compare_options(a.threshold_pct, a.threshold_for, a.alpha);
  opt.allow_device_mismatch = a.allow_device_mismatch;
  const std::string bp = results_path(a.base), np = results_path(a.fresh);
  const Results base = load_results(bp), fresh = load_results(np);
  const Comparison c = compare_results(base, fresh, opt, bp, np);
  write_outputs({{a.markdown, render_compare_markdown(c)}, {a.json, compare_json(c).dump(2) + "\n"}});
  std::cout << render_compare_text(c);
  return c.exit_code();
}

struct HistoryArgs {
  std::vector<std::string> paths;
  std::string out;
  double threshold_pct = 5;
  std::vector<std::string> threshold_for;
  double alpha = CompareOptions{}.alpha;
};

int cmd_history(const HistoryArgs& a) {
  const CompareOptions opt = compare_options(a.threshold_pct, a.threshold_for, a.alpha);
  if (!a.out.empty()) ensure_writable_dir(a.out);  // before reading every file, not after
  const History h = build_history(load_history(a.paths), opt);
  if (!a.out.empty()) {
    FileSet files;
    files.add((fs::path(a.out) / "history.md").string(), render_history_markdown(h));
    for (auto& [name, svg] : render_history_svgs(h)) files.add((fs::path(a.out) / name).string(), std::move(svg));
    files.commit();
  }
  std::cout << render_history_text(h);
  return h.exit_code();
}

struct MetricsArgs {
  std::string chip = cupti::kHopperChip;
  std::string filter;
  std::string metrics;
  bool all = false;
};

// `roofbench metrics`: the counters each CUDA benchmark would get on a chip, and the replay
// passes they need, from CUPTI's host API alone (no GPU needed).
int cmd_metrics(const MetricsArgs& a) {
#ifdef ROOFBENCH_HAVE_CUDA
  cupti::MetricHost host(a.chip);
  if (a.all) {
    for (const auto& m : host.base_metrics()) std::cout << m << "\n";
    return kExitOk;
  }
  std::vector<std::string> user;
  if (!a.metrics.empty()) {
    user = cupti::parse_metric_list(a.metrics);
    host.require_known(user, "--metrics");
  }
  const std::regex re = filter_regex(a.filter);
  std::cout << fmt::format("chip {}: at most {} hardware metrics per pass; default sets stay within {} passes\n",
                           host.chip(), host.max_hardware_metrics_per_pass(), cupti::kPassBudget);
  std::map<std::vector<std::string>, int> passes;
  int shown = 0;
  for (const auto& v : registry()) {
    if (v.backend != Backend::cuda || !v.launches_kernels || v.sizes.empty() || !std::regex_search(v.base_name(), re))
      continue;
    const BenchmarkResult b = declare(v, v.sizes.front());
    const std::vector<std::string> metrics = user.empty() ? cupti::default_metrics(b) : user;
    auto it = passes.find(metrics);
    if (it == passes.end()) it = passes.emplace(metrics, host.passes(metrics)).first;
    std::string list;
    for (const auto& m : metrics) list += (list.empty() ? "" : ",") + m;
    std::cout << fmt::format("{:<40} {} pass{}  {}\n", v.base_name(), it->second, it->second == 1 ? " " : "es", list);
    ++shown;
  }
  if (!shown) throw InputError("--filter '" + a.filter + "' matches no CUDA benchmark (see `roofbench list`)");
  return kExitOk;
#else
  (void)a;
  throw InputError("this roofbench was built without CUDA, so without CUPTI's metric tables");
#endif
}

int cmd_list() {
  std::cout << fmt::format("{:<5} {:<42} {:<7} {:<26} {}\n", "dev", "benchmark", "unit", "sizes (quick)", "what");
  for (const auto& v : registry()) {
    std::string sizes;
    for (const auto& p : v.quick_sizes) sizes += (sizes.empty() ? "" : " ") + params_to_string(p);
    if (sizes.size() > 26) sizes = sizes.substr(0, 23) + "...";
    std::cout << fmt::format("{:<5} {:<42} {:<7} {:<26} {}\n", to_string(v.backend),
                             v.base_name() + (v.ceiling ? " [ceiling]" : ""), v.unit, sizes, v.summary);
  }
  return kExitOk;
}

}  // namespace

int roofbench_main(int argc, char** argv) {
  CLI::App app{"roofbench: GPU and CPU kernel benchmarks placed on a roofline measured in the same run"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ROOFBENCH_VERSION);

  RunArgs run_args;
  auto add_run_options = [&run_args](CLI::App* sub, bool with_filter) {
    sub->add_option("--device", run_args.device, "auto, cpu or cuda:N (auto: first GPU, else the CPU)");
    if (with_filter) sub->add_option("--filter", run_args.filter, "regular expression over benchmark names");
    sub->add_option("--skip", run_args.skip,
                    "regular expression over benchmark names to leave out, ceilings included (listed in "
                    "results.json not_run)");
    sub->add_flag("--quick", run_args.quick, "small sizes and few samples: a fast check of the pipeline");
    sub->add_flag("--warm", run_args.warm, "do not flush the caches before each sample");
    sub->add_option("--out", run_args.out, "output folder (default results/<device>-<UTC time>)");
    sub->add_option("--seed", run_args.seed, "seed of the random inputs");
    sub->add_option("--noise-target", run_args.noise_target_pct,
                    "stop sampling a benchmark once its IQR is this percent of its median (default 1)")
        ->check(CLI::Range(0.01, 100.0));
    sub->add_option("--budget", run_args.budget_s,
                    "seconds of wall time a benchmark may sample for when it does not reach the noise target "
                    "(default 5; 1 with --quick)")
        ->check(CLI::Range(0.0, 3600.0));
    sub->add_flag("--counters", run_args.counters,
                  "also read hardware counters (CUPTI) in a separate pass after each benchmark's timed samples");
    sub->add_option("--metrics", run_args.metrics,
                    "counters to read instead of each benchmark's default set: a,b,c (implies --counters)");
    sub->allow_extras();  // --benchmark_* flags go to Google Benchmark
  };
  CLI::App* run = app.add_subcommand("run", "verify, time and place every benchmark; write results and reports");
  add_run_options(run, true);
  CLI::App* ceil = app.add_subcommand("ceilings", "measure only the machine's ceilings");
  add_run_options(ceil, false);

  std::vector<std::string> report_paths;
  std::string report_out;
  CLI::App* report = app.add_subcommand("report", "re-render the reports from a results file alone");
  report
      ->add_option("results", report_paths,
                   "results.json written by `roofbench run` (or its folder); two or more: their rooflines on one "
                   "chart, rooflines.svg")
      ->required();
  report->add_option("--out", report_out, "output folder (default: the results file's folder)");

  CompareArgs cmp;
  CLI::App* compare = app.add_subcommand(
      "compare", "verdict per benchmark, NEW against BASE: SAME, FASTER, SLOWER or UNSURE (exit 1 on SLOWER or FAILED)");
  compare->add_option("base", cmp.base, "BASE results.json, or the folder that holds it")->required();
  compare->add_option("new", cmp.fresh, "NEW results.json, or the folder that holds it")->required();
  compare->add_option("--threshold", cmp.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(CLI::Range(0.01, 1000.0));
  compare->add_option("--threshold-for", cmp.threshold_for,
                      "REGEX=PERCENT: another threshold for benchmarks whose name matches (repeatable; the largest "
                      "matching wins)");
  compare->add_option("--alpha", cmp.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));
  compare->add_flag("--allow-device-mismatch", cmp.allow_device_mismatch,
                    "compare files from different devices instead of refusing");
  compare->add_option("--markdown", cmp.markdown, "also write the verdicts as Markdown (a PR comment, a CI summary)");
  compare->add_option("--json", cmp.json, "also write the verdicts as JSON (schema roofbench.compare.v1)");

  HistoryArgs hist;
  CLI::App* history = app.add_subcommand(
      "history", "trend per benchmark over results files in commit order; flags steps and slow creeps (exit 1)");
  history
      ->add_option("paths", hist.paths,
                   "results files (or their folders) oldest first, or one folder searched for results.json files, "
                   "ordered by run time")
      ->required();
  history->add_option("--out", hist.out, "write history.md and a chart per family (history-<family>.svg) here");
  history->add_option("--threshold", hist.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(CLI::Range(0.01, 1000.0));
  history->add_option("--threshold-for", hist.threshold_for, "REGEX=PERCENT, as for compare (repeatable)");
  history->add_option("--alpha", hist.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));

  MetricsArgs met;
  CLI::App* metrics = app.add_subcommand(
      "metrics", "the hardware counters each CUDA benchmark gets on a chip and the replay passes they need (no GPU needed)");
  metrics->add_option("--chip", met.chip, "CUPTI chip name (default GH100: H100 and H200)");
  metrics->add_option("--filter", met.filter, "regular expression over benchmark names");
  metrics->add_option("--metrics", met.metrics, "check this list (a,b,c) instead of the default sets");
  metrics->add_flag("--all", met.all, "list every metric the chip has");

  app.add_subcommand("list", "list every registered benchmark");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "roofbench: " << e.what() << " (see roofbench --help)\n";
    return kExitUsage;
  }

  try {
    for (CLI::App* sub : {run, ceil}) {
      if (!sub->parsed()) continue;
      for (const auto& extra : sub->remaining()) {
        if (extra.rfind("--benchmark_", 0) != 0)
          throw InputError("unknown argument '" + extra + "' (see roofbench " + sub->get_name() + " --help)");
        run_args.gbench_args.push_back(extra);
      }
      return cmd_run(run_args, sub == ceil, argc, argv);
    }
    if (report->parsed()) return cmd_report(report_paths, report_out);
    if (compare->parsed()) return cmd_compare(cmp);
    if (history->parsed()) return cmd_history(hist);
    if (metrics->parsed()) return cmd_metrics(met);
    return cmd_list();
  } catch (const InputError& e) {
    std::cerr << "roofbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "roofbench: internal error: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace roofbench
