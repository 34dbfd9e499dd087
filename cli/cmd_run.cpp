// `roofbench run` and `roofbench ceilings`: plan, measure, place, write. The results file is
// rewritten whole after every benchmark, marked partial, so a run stopped by a time limit or a
// signal (or killed outright) still leaves every benchmark that finished; SIGTERM and SIGINT stop
// the benchmark being measured and write the reports of what finished.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "bench/atomic_write.h"
#include "cli/commands.h"
#include "bench/counters.h"
#include "bench/cpu_info.h"
#include "bench/device.h"
#include "cli/device_all.h"
#include "bench/gbench_runner.h"
#include "bench/host_contention.h"
#include "bench/merge.h"
#include "bench/openblas_core.h"
#include "bench/plan.h"
#include "bench/provenance.h"
#include "reports/format.h"
#include "reports/progress.h"
#include "reports/report.h"
#include "roofbench/version.h"
#include "roofline/ceilings.h"
#include "roofline/cupti/metrics.h"
#include "roofline/model.h"

namespace roofbench::cli {

namespace fs = std::filesystem;

namespace {

MeasureOptions measure_options(const RunArgs& a) {
  MeasureOptions opt = a.profile ? MeasureOptions::profile() : a.quick ? MeasureOptions::quick() : MeasureOptions::full();
  opt.cold_cache = !a.warm;
  opt.seed = a.seed;
  if (a.noise_target_pct) opt.target_rel_iqr = *a.noise_target_pct / 100;
  if (a.budget_s) opt.max_time_s = *a.budget_s;
  if (a.cooldown_s) opt.cooldown_s = *a.cooldown_s;
  if (a.energy_pass_s && !a.profile) opt.energy_pass_s = *a.energy_pass_s;  // (none under a profiler)
  if (a.min_samples) {
    opt.min_samples = *a.min_samples;
    opt.max_samples = std::max(opt.max_samples, opt.min_samples);
  }
  opt.placements = a.placements;
  opt.untrusted = a.untrusted;
  return opt;
}

PlanOptions plan_options(const RunArgs& a, bool ceilings_only) {
  PlanOptions p;
  p.quick = a.quick;
  p.filter = a.filter;
  p.skip = a.skip;
  p.ceilings = a.ceilings_from.empty();
  p.kernels = !ceilings_only;
  p.builtin = !a.no_builtin;
  p.sustain_s = a.sustain_s;
  return p;
}

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
    const std::string how = passes == 0 ? "not configured on this device (each benchmark's counters say why)"
                                        : fmt::format("{} pass{}", passes, passes == 1 ? "" : "es");
    out << fmt::format("  {} metric{}, {}: {}\n", metrics.size(), metrics.size() == 1 ? "" : "s", how, who);
  }
}

// How the plan takes its ceilings, for the first line a run prints.
std::string ceilings_text(const RunPlan& plan, const RunArgs& a, bool ceilings_only) {
  const std::string measured =
      fmt::format("{} ceilings first{}", plan.start_ceilings, ceilings_only ? "" : " and again last");
  if (a.ceilings_from.empty()) return measured;
  if (plan.start_ceilings == 0) return "ceilings from --ceilings-from";
  return measured + " (the others from --ceilings-from)";
}

// The ceilings a run takes from another file of the same machine (--ceilings-from): the GPU
// check measures them once and runs each family as a part of its own.
std::vector<Ceiling> borrowed_ceilings(const std::string& from, const Results& here, nlohmann::json* note) {
  const std::string path = results_path(from);
  const Results src = load_results(path);
  if (machine_id(src) != machine_id(here))
    throw InputError(fmt::format("--ceilings-from {}: its ceilings were measured on {}, this run is on {}", path,
                                 machine_id(src), machine_id(here)));
  if (src.ceilings.empty()) throw InputError("--ceilings-from " + path + ": the file holds no ceilings");
  *note = {{"path", path},
           {"utc_time", src.provenance.value("utc_time", std::string())},
           {"command_line", src.provenance.value("command_line", std::string())}};
  // A stopped run's ceilings are whole measurements, but it may lack some: said, not refused.
  if (src.partial) (*note)["partial"] = partial_text(*src.partial);
  return src.ceilings;
}

// The results model of the jobs that finished so far: ceilings from their passes (the better of
// the start and end pass), the kernels, and failed ceiling passes listed with the kernels.
Results assemble(const Results& base, const std::vector<const JobResult*>& done) {
  Results r = base;  // its ceilings, if any, are those taken from --ceilings-from
  for (const JobResult* jr : done) {
    if (!jr->result.measured()) {
      r.benchmarks.push_back(jr->result);  // a failed ceiling pass is listed with the kernels, with its error
      continue;
    }
    if (!jr->job.variant->ceiling) {
      r.benchmarks.push_back(jr->result);
      continue;
    }
    if (!jr->job.tag.empty()) continue;  // an end, again, brief or sustained pass: merged into its start pass below
    auto pass = [&](const char* tag) -> const BenchmarkResult* {
      for (const JobResult* other : done)
        if (other->job.tag == tag && other->job.variant == jr->job.variant &&
            other->job.ceiling_params() == jr->job.params && other->result.measured())
          return &other->result;
      return nullptr;
    };
    r.ceilings.push_back(make_ceiling(*jr->job.variant, jr->result, pass(kEndPass), r.device, pass(kAgainPass),
                                      pass(kSustainedPass), pass(kBriefPass)));
  }
  // A ceiling taken from --ceilings-from that a kernel came out above: its passes of this run.
  for (const JobResult* jr : done) {
    const bool again = jr->job.tag == kAgainPass, brief = jr->job.tag == kBriefPass;
    if ((!again && !brief) || !jr->result.measured()) continue;
    const std::string benchmark = jr->job.variant->name(jr->job.ceiling_params());
    for (std::size_t i = 0; i < base.ceilings.size(); ++i)
      if (Ceiling& c = r.ceilings[i]; c.name == jr->job.variant->ceiling->name && c.benchmark == benchmark) {
        if (brief)
          add_brief_pass(c, *jr->job.variant, jr->result);
        else
          add_again_pass(c, *jr->job.variant, jr->result,
                         "measured once more by a run that took it from --ceilings-from, after a kernel came out "
                         "above it");
      }
  }
  apply_model(r);
  return r;
}

// The ceilings the kernels of `placed` came out above beyond the noise (each roof the gate held
// such a kernel to: gate_ceilings(), and for a level's bandwidth roof every ceiling that may be
// that level's roof), to be measured once more (kAgainPass). Those taken from
// --ceilings-from too: a file's roof, measured at another time, may have been measured loaded.
// `*unmeasurable` gets each such ceiling this run cannot measure (left out by --skip, or a file's
// ceiling of a benchmark this binary does not have), named with its benchmark.
// Each is measured at its own size. One with a CeilingSpec::repeat_param, where such a kernel's
// samples were briefer than its own fastest, is measured a second time in samples about as brief
// as the briefest of those kernels' (their median times: brief_params, tagged kBriefPass). A
// machine that throttles long samples and not brief ones (a CPU quota of a few milliseconds a
// period: a 16 ms FMA ceiling ran at a third of the rate a 0.2 ms GEMM reached) then gives the
// brief roof; the roof is the faster pass.
std::vector<Job> again_jobs(const RunPlan& plan, const Results& placed, bool flushed,
                            std::vector<std::string>* unmeasurable) {
  const Roofs roofs = select_roofs(placed.ceilings);
  struct Beaten {
    const Ceiling* ceiling;
    double briefest_s;  // the shortest median time of the kernels above it
  };
  std::map<std::string, Beaten> beaten;  // the benchmarks that measured them -> the ceiling
  auto beat = [&beaten](const Ceiling& c, double t) {
    auto [it, added] = beaten.emplace(c.benchmark, Beaten{&c, t});
    it->second.briefest_s = std::min(it->second.briefest_s, t);
  };
  for (const auto& b : placed.benchmarks)
    if (b.implausible())
      for (const auto& name : gate_ceilings(b, roofs))
        for (const auto& c : placed.ceilings)
          if (c.name == name) {
            beat(c, b.measurement->stats.median);
            // A level's roof is the best of its ceilings: each of them once more, not only the one
            // that was the best before (a saxpy came out at 118% of the DRAM copy roof on a VM whose
            // DRAM bandwidth doubled between the start and end passes, above a triad, the ceiling of
            // its own shape, measured at the other time).
            if (c.kind == CeilingKind::bandwidth && c.level_roof && c.level)
              for (const auto& other : placed.ceilings)
                if (other.kind == CeilingKind::bandwidth && other.level_roof && other.level == c.level)
                  beat(other, b.measurement->stats.median);
          }
  std::vector<Job> jobs;
  for (const Job& j : plan.remeasurable) {
    const auto it = beaten.find(j.variant->name(j.params));
    if (it == beaten.end()) continue;
    jobs.push_back(j);  // at its own size: the earlier passes may have run slow, the machine busy
    if (auto brief = brief_params(*j.variant, j.params, fastest_own_sample(*it->second.ceiling),
                                  it->second.briefest_s, flushed)) {
      Job again = j;
      again.params = std::move(*brief);
      again.pass_of = j.params;
      again.tag = kBriefPass;
      jobs.push_back(std::move(again));
    }
    beaten.erase(it);
  }
  for (const auto& [benchmark, b] : beaten)
    unmeasurable->push_back(fmt::format("{} ({})", b.ceiling->name, benchmark));
  return jobs;
}

extern "C" void on_stop_signal(int sig) {
  request_stop(sig);
}

// SIGTERM (timeout, a scheduler) and SIGINT (Ctrl-C) stop the run between samples instead of
// killing it; the previous handlers come back when the run ends.
struct StopSignals : StopSignalHandler {
  StopSignals() : StopSignalHandler(on_stop_signal) {}
};

// `--dry-run`: the plan and its estimate, from the registry alone (nothing is read or measured; a
// --ceilings-from file need not exist yet); a GPU that is not here is planned for the build's
// architecture.
int dry_run(const RunArgs& a, bool ceilings_only, const MeasureOptions& opt) {
  Target target;
  std::string where;
  const bool want_cuda = a.device.kind == DeviceSpec::Kind::cuda;
#ifdef ROOFBENCH_HAVE_CUDA
  const bool gpu_here = cuda_device_count() > 0;
#else
  const bool gpu_here = false;
#endif
  if (want_cuda || (a.device.kind == DeviceSpec::Kind::automatic && gpu_here)) {
#ifdef ROOFBENCH_HAVE_CUDA
    target.backend = Backend::cuda;
    if (gpu_here) {
      const auto dev = open_device(want_cuda ? a.device : DeviceSpec{DeviceSpec::Kind::cuda, 0});
      const nlohmann::json d = dev->describe();
      target.compute_capability = d.value("compute_capability", std::string());
      where = d.value("name", std::string("a GPU"));
    } else {
      target.compute_capability = cuda_build_compute_capability();
      where = fmt::format("a GPU of compute capability {} (none is visible here: planned for the build's architecture)",
                          target.compute_capability);
    }
#else
    throw InputError("device " + a.device.text() + " asked for, but this roofbench was built without CUDA");
#endif
  } else {
    where = cpu_info().model_name + " (cpu; OpenBLAS " + openblas_core_description() + ")";
  }
  const RunPlan plan = plan_run(target, plan_options(a, ceilings_only));
  const Estimate e = estimate_run(plan, opt, a.counters || !a.metrics.empty(), omp_get_max_threads());
  std::cout << fmt::format("roofbench {} --dry-run on {}: {} benchmarks ({})\n", ceilings_only ? "ceilings" : "run",
                           where, plan.jobs.size(), ceilings_text(plan, a, ceilings_only));
  for (std::size_t i = 0; i < plan.jobs.size(); ++i)
    std::cout << fmt::format("  [{}] {}\n", i + 1, plan.jobs[i].name());
  for (const auto& n : plan.not_run) std::cout << fmt::format("left out: {} ({})\n", n.benchmark, n.why);
  std::cout << "estimate: " << e.explain() << "\n";
  return kExitOk;
}

}  // namespace

namespace {

// --ceilings-from: the file's ceilings into `r`, less those this process measures itself (the
// plan's start ceilings, CeilingSpec::per_process); returns the note results.json keeps of them.
nlohmann::json take_ceilings_from(const RunArgs& a, const RunPlan& plan, Results& r) {
  nlohmann::json note;
  if (a.ceilings_from.empty()) return note;
  r.ceilings = borrowed_ceilings(a.ceilings_from, r, &note);
  std::vector<std::string> here;
  for (std::size_t i = 0; i < plan.start_ceilings; ++i) here.push_back(plan.jobs[i].variant->ceiling->name);
  r.ceilings.erase(
      std::remove_if(r.ceilings.begin(), r.ceilings.end(),
                     [&](const Ceiling& c) { return std::find(here.begin(), here.end(), c.name) != here.end(); }),
      r.ceilings.end());
  if (!here.empty()) note["measured_here"] = here;
  return note;
}

// results.json's `settings`: how this run measures.
nlohmann::json run_settings(const RunArgs& a, const MeasureOptions& opt, Device& dev, const nlohmann::json& ceilings_note) {
  nlohmann::json s = opt.to_json();
  s["quick"] = a.quick;
  s["profile"] = a.profile;
  s["filter"] = a.filter;
  s["skip"] = a.skip;
  s["builtin"] = !a.no_builtin;
  // The hold of the sustained ceiling passes (0: none held).
  s["sustain_s"] = plan_options(a, false).sustain_for(dev.backend());
  s["flush_bytes"] = dev.flush_bytes();
  s["timer"] = dev.timer();
  if (const std::string launch = dev.launch_method(opt.hide_launch ? Launch::hidden : Launch::synchronous);
      !launch.empty())
    s["launch"] = launch;
  if (!ceilings_note.is_null()) s["ceilings_from"] = ceilings_note;
  return s;
}

// Before anything is measured: what runs, on what, for how long at most, and what is left out.
void print_run_header(const RunArgs& a, bool ceilings_only, const RunPlan& plan, const MeasureOptions& opt,
                      Device& dev, const Results& r, const nlohmann::json& ceilings_note, CounterCollector* counters,
                      const nlohmann::json& counter_status, bool counters_asked) {
  const Estimate estimate = estimate_run(plan, opt, counters_asked, omp_get_max_threads());
  const auto warm_jobs = std::count_if(plan.jobs.begin(), plan.jobs.end(), [](const Job& j) { return j.variant->warm; });
  std::cout << fmt::format("roofbench {} on {}: {} benchmarks ({}), cache {}\n", ROOFBENCH_VERSION, device_line(r),
                           plan.jobs.size(), ceilings_text(plan, a, ceilings_only),
                           opt.cold_cache
                               ? fmt::format("flushed with {} before every sample{}", si(dev.flush_bytes(), "B"),
                                             warm_jobs ? fmt::format(" (not for the {} declared warm)", warm_jobs) : "")
                               : "warm");
  std::cout << "estimate: at most " << estimate.explain() << "\n";
  if (ceilings_note.contains("partial"))
    std::cout << fmt::format("warning: --ceilings-from {} is a partial run ({}): a kernel whose roof it did not "
                             "measure is left unplaced\n",
                             ceilings_note["path"].get<std::string>(), ceilings_note["partial"].get<std::string>());
  for (const auto& n : r.not_run) std::cout << fmt::format("left out: {} ({})\n", n.benchmark, n.why);
  if (counters && counter_status.value("available", false)) {
    std::cout << "counters: CUPTI Range Profiler on " << counter_status.value("chip", std::string("?"))
              << ", in a pass of their own after each benchmark's timed samples\n";
    print_counter_plan(*counters, plan.jobs, std::cout);
  } else if (counters_asked) {
    std::cout << "counters: none (" << counter_status.value("reason", std::string("unavailable"))
              << "); the run goes on " << (counters ? "with timing and CUPTI's kernel trace" : "with timing only")
              << "\n";
    if (counter_status.contains("hint")) std::cout << "  to fix: " << counter_status["hint"].get<std::string>() << "\n";
  }
}

// What the jobs of a run gave: the planned ones, and the ceilings measured once more after them.
struct Measured {
  JobsOutput ran, again;
  std::vector<const JobResult*> done() const {
    std::vector<const JobResult*> d;
    for (const auto& jr : ran.results) d.push_back(&jr);
    for (const auto& jr : again.results) d.push_back(&jr);
    return d;
  }
};

// Runs the plan, writing the results so far after every benchmark (whole, marked partial: a run
// killed later still leaves them), then measures once more each roof a kernel came out above.
Measured measure_plan(const RunArgs& a, const RunPlan& plan, const MeasureOptions& opt, Device& dev, Results& r,
                      CounterCollector* counters, OutputFolder& folder, const std::function<void(Results&)>& stamp_provenance) {
  std::vector<std::optional<JobResult>> finished(plan.jobs.size());
  auto snapshot = [&](std::size_t i, const JobResult& jr) {
    finished[i] = jr;
    std::vector<const JobResult*> d;
    for (const auto& f : finished)
      if (f) d.push_back(&*f);
    Results partial = assemble(r, d);
    partial.partial = Partial{d.size(), plan.jobs.size(), "running"};
    stamp_provenance(partial);
    FileSet files(folder);
    files.add("results.json", dump_results(partial));
    files.commit();
  };
  ConsoleProgress progress(std::cout);
  Measured m;
  m.ran = run_jobs(dev, plan.jobs, opt, a.gbench_args, progress, counters, snapshot);
  if (counters) r.counters = counters->status();
  if (r.settings.contains("launch"))  // as it ended: a hold given up on during the run is said there
    r.settings["launch"] = dev.launch_method(opt.hide_launch ? Launch::hidden : Launch::synchronous);
  // A roof a kernel came out above, beyond the noise, is measured once more before the kernel is
  // refused: a pass taken while the machine was loaded is no roof (on a shared 2-core VM a math
  // ceiling's passes both read 7x slow beside another job). What stays above the best of three
  // passes is IMPLAUSIBLE.
  if (!stop_signal()) {
    std::vector<std::string> unmeasurable;
    const std::vector<Job> jobs = again_jobs(plan, assemble(r, m.done()), opt.cold_cache, &unmeasurable);
    for (const auto& c : unmeasurable)
      std::cout << fmt::format("not measuring {} again, though a kernel came out above it: this run cannot (--skip "
                               "leaves it out, or it came from a file of a build that has that benchmark and this "
                               "one does not)\n",
                               c);
    if (!jobs.empty()) {
      const auto brief = static_cast<std::size_t>(
          std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return j.tag == kBriefPass; }));
      std::cout << fmt::format("measuring {} ceiling(s) again: a kernel came out above them{}\n", jobs.size() - brief,
                               brief ? fmt::format(" ({} also in samples as brief as the kernel's)", brief) : "");
      // (without --benchmark_*: a filter over the run's names would match none of these)
      m.again = run_jobs(dev, jobs, opt, {}, progress, nullptr, {});
    }
  }
  return m;
}

// The run's files, written whole into the folder, its console report and its exit code.
int write_run(const RunArgs& a, const RunPlan& plan, const Results& r, const Measured& m, OutputFolder& folder,
              const std::string& out_dir, const std::function<void(Results&)>& stamp_provenance) {
  const int sig = stop_signal();
  if (sig && !folder.committed()) {  // no benchmark finished: the folder keeps what it held
    std::cerr << fmt::format("roofbench: {} before any benchmark finished; nothing was written to {}\n",
                             stopped_by(sig), out_dir);
    return 128 + sig;
  }
  const std::vector<const JobResult*> done = m.done();
  Results final = assemble(r, done);
  if (auto it = final.settings.find("ceilings_from"); it != final.settings.end() && it->is_object()) {
    std::vector<std::string> again;  // the file's ceilings this run measured once more
    for (const auto& jr : m.again.results)
      if (jr.result.measured() && std::any_of(r.ceilings.begin(), r.ceilings.end(), [&](const Ceiling& c) {
            return c.name == jr.job.variant->ceiling->name;
          }) && std::find(again.begin(), again.end(), jr.job.variant->ceiling->name) == again.end())
        again.push_back(jr.job.variant->ceiling->name);  // once, though it ran at two sizes
    if (!again.empty()) (*it)["measured_again"] = again;
  }
  const std::size_t planned = plan.jobs.size() + m.again.results.size();
  if (sig) final.partial = Partial{done.size(), planned, stopped_by(sig)};

  stamp_provenance(final);
  FileSet files(folder);
  files.add("results.json", dump_results(final));
  files.add("gbench.json", m.ran.gbench_json);
  for (auto& [name, content] : render_reports(final)) files.add(name, std::move(content));
  files.commit();

  std::cout << render_console(final, a.verbose);
  std::cout << "\nwrote:\n";
  for (const auto& p : files.paths()) std::cout << "  " << p << "\n";
  int failed = 0;
  for (const auto& b : final.benchmarks) failed += b.measured() ? 0 : 1;
  const int implausible = count_implausible(final);
  std::cout << fmt::format("roofbench: {} benchmarks measured, {} failed, {} implausible, {} ceilings{}{}\n",
                           final.benchmarks.size() - failed, failed, implausible, final.ceilings.size(),
                           a.ceilings_from.empty() ? "" : " (from --ceilings-from)",
                           final.partial ? "; " + partial_text(*final.partial) : std::string());
  if (const auto took = contention_text(final.provenance.value("host_contention", nlohmann::json())))
    std::cout << "warning: " << *took << (implausible ? " (the kernels above their roofs among them: run again)" : "")
              << "\n";
  if (sig) {
    std::cerr << fmt::format("roofbench: {}; {} of {} benchmarks finished and were written, marked partial\n",
                             final.partial->reason, done.size(), planned);
    return 128 + sig;
  }
  if (failed) std::cerr << fmt::format("roofbench: {} benchmark(s) failed; they carry no numbers\n", failed);
  if (implausible) std::cerr << implausible_text(implausible);
  return failed || implausible ? kExitFailed : kExitOk;
}

}  // namespace

// run and ceilings: plan, open the folder, say what runs, measure, write.
int cmd_run(const RunArgs& a, bool ceilings_only, int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  const ContentionReading contention_at_start = read_contention();
  // Seconds from the start of the command to the file being written: how long a run takes, in
  // the file it wrote (a partial file: how far it had come); and what the host took from it in
  // that time (steal, a cgroup's CPU quota: bench/host_contention.h).
  const std::function<void(Results&)> stamp_provenance = [started, contention_at_start](Results& res) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    res.provenance["wall_s"] = wall;
    res.provenance["host_contention"] = contention_json(contention_at_start, read_contention(), wall, omp_get_num_procs());
  };
  const MeasureOptions opt = measure_options(a);
  if (a.device.kind == DeviceSpec::Kind::all && !a.dry_run) return run_every_device(a, ceilings_only, argc, argv);
  if (a.concurrent) throw InputError("--concurrent goes with --device all");
  if (a.dry_run) {
    RunArgs planned = a;  // --device all plans what one of its runs does
    if (planned.device.kind == DeviceSpec::Kind::all) planned.device = DeviceSpec{};
    return dry_run(planned, ceilings_only, opt);
  }

  auto dev = open_device(a.device);
  Results r;
  r.device = dev->describe();
  r.provenance = provenance(argc, argv);
  const Target target{dev->backend(), r.device.value("compute_capability", std::string())};
  const RunPlan plan = plan_run(target, plan_options(a, ceilings_only));
  r.not_run = plan.not_run;
  const nlohmann::json ceilings_note = take_ceilings_from(a, plan, r);
  check_gbench_args(a.gbench_args, plan.jobs);  // a bad --benchmark_* flag: before any folder or measurement
  const std::string out_dir =
      !a.out.empty() ? a.out
                     : unused_folder_name(fmt::format("results/{}-{}", to_string(dev->backend()), utc_now("%Y%m%dT%H%M%SZ")));
  // Before minutes of measuring, not after: the folder is writable and no other command is
  // writing it (its lock is held until this run's last file is in place).
  OutputFolder folder(out_dir);

  CounterRequest creq;
  creq.enabled = a.counters || !a.metrics.empty();
  if (!a.metrics.empty()) creq.metrics = cupti::parse_metric_list(a.metrics);
  nlohmann::json counter_status;
  std::unique_ptr<CounterCollector> counters = open_counters(*dev, creq, &counter_status);
  r.settings = run_settings(a, opt, *dev, ceilings_note);
  r.counters = counters ? counters->status() : counter_status;

  print_run_header(a, ceilings_only, plan, opt, *dev, r, ceilings_note, counters.get(), counter_status, creq.enabled);
  // From here to the last file, SIGTERM and SIGINT stop the run between samples and it writes
  // what finished, marked partial.
  StopSignals stop_signals;
  const Measured measured = measure_plan(a, plan, opt, *dev, r, counters.get(), folder, stamp_provenance);
  return write_run(a, plan, r, measured, folder, out_dir, stamp_provenance);
}

}  // namespace roofbench::cli
