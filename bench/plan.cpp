#include "bench/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/power.h"
#include "bench/user_regex.h"

namespace roofbench {

bool Target::runs(const Variant& v, std::vector<NotRun>* left_out) const {
  if (v.backend != backend) return false;
  const std::string why = not_here(v, compute_capability);
  if (why.empty()) return true;
  if (left_out) left_out->push_back({v.base_name(), why});
  return false;
}

namespace {

// --skip: benchmarks (ceilings too) left out of the run by name, e.g. a kernel that faults and
// takes the device down with it. Each variant it leaves out is listed in results.json not_run.
struct Skip {
  explicit Skip(std::string p) : pattern(std::move(p)), re(user_regex("--skip", pattern)) {}
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

// The ceilings a run measures: all of them, or (per_process_only, with --ceilings-from) those
// measured in every process.
std::vector<Job> ceiling_jobs(const Target& t, bool quick, const Skip& skip, const std::string& tag,
                              std::vector<NotRun>* left_out, bool per_process_only = false) {
  std::vector<Job> jobs;
  for (const auto& v : registry())
    if (v.ceiling && (!per_process_only || v.ceiling->per_process) && t.runs(v, left_out))
      for (const auto& p : skip.keep(v, quick ? v.quick_sizes : v.sizes, left_out)) jobs.push_back({&v, p, tag});
  return jobs;
}

std::vector<Job> kernel_jobs(const Target& t, bool quick, const std::string& filter, bool builtin, const Skip& skip,
                             std::vector<NotRun>* left_out) {
  const std::regex re = user_regex("--filter", filter);
  std::vector<Job> jobs;
  bool any_of_yours = false;
  std::size_t matched_sizes = 0;  // sizes --filter matched on variants that run here, before --skip
  for (const auto& v : registry()) {
    if (v.ceiling || v.backend != t.backend) continue;
    if (v.builtin && !builtin) continue;
    any_of_yours = any_of_yours || !v.builtin;
    std::vector<Params> matched;
    for (const auto& p : quick ? v.quick_sizes : v.sizes)
      if (std::regex_search(v.name(p), re)) matched.push_back(p);
    if (matched.empty() || !t.runs(v, left_out)) continue;
    matched_sizes += matched.size();
    for (const auto& p : skip.keep(v, matched, left_out)) jobs.push_back({&v, p, ""});
  }
  if (jobs.empty() && !builtin && !any_of_yours)
    throw InputError(fmt::format(
        "--no-builtin leaves no benchmark: this binary registers none of its own for the {} device (declare a "
        "Variant and ROOFBENCH_REGISTER it; see `list`)",
        to_string(t.backend)));
  if (jobs.empty() && matched_sizes > 0)
    throw InputError(fmt::format("--skip '{}' leaves none of the {} benchmark{} that --filter '{}' matches",
                                 skip.pattern, matched_sizes, matched_sizes == 1 ? "" : "s", filter));
  if (jobs.empty()) {
    std::string why;  // the first few reasons; the line stays a line
    const std::size_t shown = std::min<std::size_t>(left_out->size(), 3);
    for (std::size_t i = 0; i < shown; ++i) why += fmt::format("; {} is {}", (*left_out)[i].benchmark, (*left_out)[i].why);
    if (left_out->size() > shown) why += fmt::format("; and {} more left out", left_out->size() - shown);
    throw InputError(
        fmt::format("--filter '{}' matches no benchmark that runs on the {} device{} (see `roofbench list`)", filter,
                    to_string(t.backend), why));
  }
  return jobs;
}

}  // namespace

RunPlan plan_run(const Target& target, const PlanOptions& opt) {
  const Skip skip(opt.skip);
  RunPlan plan;
  // With --ceilings-from, a run of kernels still measures the ceilings that hold for one process.
  const bool per_process_only = !opt.ceilings && opt.kernels;
  if (opt.ceilings || per_process_only)
    plan.jobs = ceiling_jobs(target, opt.quick, skip, "", &plan.not_run, per_process_only);
  plan.start_ceilings = plan.jobs.size();
  if (const double hold = opt.sustain_for(target.backend); hold > 0)
    for (std::size_t i = 0; i < plan.start_ceilings; ++i)
      if (plan.jobs[i].variant->ceiling->sustained && !per_process_only)
        plan.jobs.push_back({plan.jobs[i].variant, plan.jobs[i].params, kSustainedPass, hold});
  if (opt.ceilings && !opt.kernels && plan.jobs.empty())
    throw InputError(skip.pattern.empty()
                         ? fmt::format("no ceiling runs on the {} device", to_string(target.backend))
                         : fmt::format("--skip '{}' leaves no ceiling to measure on the {} device", skip.pattern,
                                       to_string(target.backend)));
  if (opt.kernels) {
    auto k = kernel_jobs(target, opt.quick, opt.filter, opt.builtin, skip, &plan.not_run);
    plan.jobs.insert(plan.jobs.end(), k.begin(), k.end());
    if (plan.start_ceilings > 0) {
      auto e = ceiling_jobs(target, opt.quick, skip, kEndPass, nullptr, per_process_only);
      plan.jobs.insert(plan.jobs.end(), e.begin(), e.end());
    }
    for (const auto& v : registry()) {
      if (!v.ceiling || !target.runs(v, nullptr)) continue;
      std::vector<Params> sizes = v.sizes;
      for (const auto& p : v.quick_sizes)
        if (std::find(sizes.begin(), sizes.end(), p) == sizes.end()) sizes.push_back(p);
      for (const auto& p : skip.keep(v, sizes, nullptr)) plan.remeasurable.push_back({&v, p, kAgainPass});
    }
  }
  return plan;
}

std::string Estimate::explain() const {
  return fmt::format(
      "{:.0f} s: {} benchmarks sampling up to their budget ({:.0f} s), inputs and reference checks on {} host "
      "thread{} ({:.0f} s){}, device start ({:.0f} s)",
      total_s(), jobs, sampling_s, host_threads, host_threads == 1 ? "" : "s", checks_s,
      counters_s > 0 ? fmt::format(", counter passes ({:.0f} s)", counters_s) : std::string(), startup_s);
}

std::optional<Params> brief_params(const Variant& v, const Params& params, double own_s, double briefest_s,
                                   bool flushed) {
  if (!v.ceiling || v.ceiling->repeat_param.empty() || (v.ceiling->repeat_needs_flush && !flushed)) return std::nullopt;
  if (!(own_s > 0) || !(briefest_s > 0) || !(briefest_s < own_s)) return std::nullopt;
  const CeilingSpec& c = *v.ceiling;
  Params out = params;
  for (auto& [key, value] : out)
    if (key == c.repeat_param) {
      const double steps = std::floor(static_cast<double>(value) * (briefest_s / own_s) / static_cast<double>(c.repeat_step));
      const std::int64_t scaled = std::max(c.repeat_min, static_cast<std::int64_t>(steps) * c.repeat_step);
      if (scaled >= value) return std::nullopt;
      value = scaled;
      return out;
    }
  return std::nullopt;
}

double fastest_own_sample(const Ceiling& c) {
  double best = 0;
  auto pass = [&best](const Measurement& m) {
    const double t = m.stats.min > 0 ? m.stats.min : m.stats.median;
    if (t > 0 && (best == 0 || t < best)) best = t;
  };
  pass(c.measurement);
  if (c.measurement_end) pass(*c.measurement_end);
  if (c.measurement_sustained) pass(*c.measurement_sustained);
  if (c.measurement_again) pass(*c.measurement_again);
  return best;
}

Estimate estimate_run(const RunPlan& plan, const MeasureOptions& opt, bool counters, int host_threads) {
  Estimate e;
  e.host_threads = std::max(1, host_threads);
  const double host_rate = kHostCheckBytesPerSecondPerThread * e.host_threads;
  // The budget bounds the timed samples; the warm-up runs before it starts, one sample-sized
  // slice of the budget each at worst (a sample near the budget is stopped after
  // MeasureOptions::kMinSamples).
  const double warmup_s = opt.warmup_runs * opt.max_time_s / MeasureOptions::kMinSamples;
  for (const auto& j : plan.jobs) {
    ++e.jobs;
    e.sampling_s += opt.max_time_s + warmup_s + kJobOverheadS + j.hold_s;
    // An energy pass (MeasureOptions::energy_pass_s) runs 1.1 x 10 updates of the counter: NVML's
    // advance about every 100 ms on an H200, RAPL's every ms. Charged where the option allows it
    // (a sustained pass's hold is read instead; --untrusted runs none).
    const double need_s = kEnergyUpdatesPerWindow * (j.variant->backend == Backend::cuda ? 0.1 : 0.001);
    if (const double pass_s = 1.1 * need_s; opt.energy_pass_s >= need_s && j.tag.empty() && !opt.untrusted)
      e.sampling_s += std::min(pass_s, opt.energy_pass_s) * std::max(1, opt.placements);
    const double check_s = j.variant->work.host_bytes(j.params) / host_rate;
    e.checks_s += check_s * (std::max(1, opt.placements) + 1);  // each placement, and once more after the samples
    // A counter pass makes the inputs afresh before each of its (at most two) replay passes and
    // runs the kernel a few more times for the trace.
    if (counters && j.tag.empty() && j.variant->launches_kernels && j.variant->backend == Backend::cuda)
      e.counters_s += 2 * check_s + 1.0;
  }
  e.startup_s = plan.jobs.empty() ? 0 : (plan.jobs.front().variant->backend == Backend::cuda ? 10.0 : 2.0);
  return e;
}

}  // namespace roofbench
