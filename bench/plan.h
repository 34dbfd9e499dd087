#pragma once
// Which benchmarks a run takes, in which order, and about how long it will take: from the
// registry alone, before anything is measured (`roofbench run --dry-run` prints it, and the GPU
// check refuses a stage whose estimate exceeds its time limit).
#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

struct Job {
  const Variant* variant = nullptr;
  Params params;
  std::string tag;  // appended to the name when one benchmark runs twice: "pass:end"
  double hold_s = 0;  // a sustained pass: run back to back this long before its samples (MeasureOptions::hold_s)
  // A brief pass (kBriefPass), at a size other than its ceiling's (CeilingSpec::repeat_param
  // scaled down): the params of the ceiling's own benchmark. Empty: `params` are.
  Params pass_of = {};
  const Params& ceiling_params() const { return pass_of.empty() ? params : pass_of; }
  std::string name() const { return variant->name(params) + (tag.empty() ? "" : "/" + tag); }
};

inline constexpr const char* kEndPass = "pass:end";
// A ceiling measured once more, after the end pass, because a kernel came out above it
// (Ceiling::value_again).
inline constexpr const char* kAgainPass = "pass:again";
// And, where its CeilingSpec::repeat_param allows, in samples as brief as that kernel's, at
// another size (Job::pass_of; Ceiling::value_brief).
inline constexpr const char* kBriefPass = "pass:brief";
// A sustained ceiling (CeilingSpec::sustained) measured again after being held under load, right
// after the start-of-run ceilings (Ceiling::value_sustained).
inline constexpr const char* kSustainedPass = "pass:sustained";
// How long a sustained pass is held by default on a GPU: long enough for the clock to settle under
// the power cap (the first H200 visit's GEMMs stepped down after about 0.5 s of load). A CPU run,
// and a quick run, holds none unless --sustain says so.
inline constexpr double kDefaultSustainS = 10.0;

// The device a run selects benchmarks for: its backend and, for a GPU, its compute capability
// (variants built for another architecture are left out, each with why).
struct Target {
  Backend backend = Backend::cpu;
  std::string compute_capability;  // "9.0"; empty for the CPU
  bool runs(const Variant& v, std::vector<NotRun>* left_out) const;
};

struct PlanOptions {
  bool quick = false;
  std::string filter;  // --filter: kernels by name (ceilings always run)
  std::string skip;    // --skip: benchmarks left out by name, ceilings included
  // false: ceilings come from another file (--ceilings-from), all but those measured in every
  // process (CeilingSpec::per_process), which a run with kernels measures itself
  bool ceilings = true;
  bool kernels = true;        // false: `roofbench ceilings`
  bool builtin = true;        // false (--no-builtin): roofbench's own families left out, the ceilings kept
  // --sustain S: the hold of each sustained ceiling's second pass; 0 takes none. Unset: 
  // kDefaultSustainS on a GPU in a full run, else 0.
  std::optional<double> sustain_s;
  double sustain_for(Backend backend) const {
    return sustain_s ? *sustain_s : backend == Backend::cuda && !quick ? kDefaultSustainS : 0.0;
  }
};

struct RunPlan {
  // ceilings first, their sustained passes, the kernels, then the ceilings again
  std::vector<Job> jobs;
  std::size_t start_ceilings = 0;   // jobs[0, start_ceilings) are the start-of-run ceilings
  std::vector<NotRun> not_run;      // variants left out, each with why
  // The ceiling benchmarks a run of kernels may measure once more, after its jobs, when a kernel
  // came out above them (kAgainPass): each ceiling of the target at its full and quick sizes that
  // --skip keeps, those taken from --ceilings-from included. Empty for `roofbench ceilings`.
  std::vector<Job> remeasurable;
};

// Throws InputError for a filter that matches no kernel of the target and for bad expressions.
RunPlan plan_run(const Target& target, const PlanOptions& opt);

// The again pass of a ceiling in samples as brief as `briefest_s` (the median time of the
// briefest kernel that came out above it): `params` with the CeilingSpec::repeat_param scaled by
// `briefest_s` over `own_s` (its fastest sample at `params`: fastest_own_sample), rounded down
// to repeat_step, at least repeat_min. None where the ceiling declares no repeat count, where it
// needs a flushed cache and `flushed` is false (a --warm run), or where that is no smaller.
std::optional<Params> brief_params(const Variant& v, const Params& params, double own_s, double briefest_s,
                                   bool flushed);
// The fastest sample (its median where a pass has no minimum) of the passes a ceiling took at its
// own benchmark's size: the start, end, again and sustained passes, not the brief one. 0 where
// none.
double fastest_own_sample(const Ceiling& c);

// An upper bound on a run's wall time, from the registry: every benchmark may sample until its
// budget runs out (MeasureOptions::max_time_s), plus its warm-up allowance, plus the host's
// work of making inputs and checking outputs (from the declared work's buffers, each once:
// Work::host_bytes, at a conservative host rate), plus counter passes and the device's start.
struct Estimate {
  std::size_t jobs = 0;
  double sampling_s = 0;
  double checks_s = 0;
  double counters_s = 0;
  double startup_s = 0;
  int host_threads = 1;
  double total_s() const { return sampling_s + checks_s + counters_s + startup_s; }
  std::string explain() const;  // one line: how the total is made up
};

// Host rate assumed for making inputs and checking outputs: declared bytes per second per
// thread. Measured on this project's VMs at 0.2-0.4 GB/s for the FP64 transcendental
// references; the estimate takes the slow end.
inline constexpr double kHostCheckBytesPerSecondPerThread = 0.15e9;
inline constexpr double kJobOverheadS = 0.25;  // make, allocate, clock readings, bookkeeping

Estimate estimate_run(const RunPlan& plan, const MeasureOptions& opt, bool counters, int host_threads);

}  // namespace roofbench
