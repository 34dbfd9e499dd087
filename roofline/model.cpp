#include "roofline/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "roofline/cupti/metrics.h"

namespace roofbench {

Roofs select_roofs(const std::vector<Ceiling>& ceilings) {
  Roofs r;
  for (const auto& c : ceilings) {
    if (c.value <= 0) continue;
    if (c.kind == CeilingKind::bandwidth && c.level) {
      if (c.level_roof) {  // (a link both ways is a pass's ceiling by name, never its level's roof)
        auto& slot = r.bandwidth[*c.level];
        if (!slot || c.value > slot->value) slot = &c;
      }
      auto& named = r.bandwidth_by_name[c.name];
      if (!named || c.value > named->value) named = &c;
    } else if (c.kind == CeilingKind::compute && c.precision && c.unit) {
      auto& slot = r.compute[{*c.precision, *c.unit}];
      if (!slot || c.value > slot->value) slot = &c;
    } else if (c.kind == CeilingKind::transcendental && c.function) {
      auto& slot = r.transcendental[*c.function];
      if (!slot || c.value > slot->value) slot = &c;
    } else if (c.kind == CeilingKind::launch && c.function) {
      auto& slot = r.launch[*c.function];
      if (!slot || c.value > slot->value) slot = &c;
    }
  }
  auto view_of = [&r](const Ceiling* c) {
    if (!c || !c->value_sustained || !c->measurement_sustained || r.sustained.count(c)) return;
    auto v = std::make_shared<Ceiling>(*c);
    v->value = v->value_start = *c->value_sustained;
    v->measurement = *c->measurement_sustained;
    v->measurement_end.reset();
    v->value_end.reset();
    v->measurement_again.reset();
    v->value_again.reset();
    v->measurement_brief.reset();
    v->value_brief.reset();
    v->benchmark_brief.reset();
    r.sustained[c] = std::move(v);
  };
  for (const auto& [k, c] : r.compute) view_of(c);
  for (const auto& [k, c] : r.bandwidth) view_of(c);
  for (const auto& [k, c] : r.bandwidth_by_name) view_of(c);
  return r;
}

std::optional<double> samples_clock_hz(const Measurement& m) {
  std::vector<double> hz;
  for (double f : m.sample_clock_hz)
    if (f > 0) hz.push_back(f);
  if (hz.empty()) return m.clock_reference_hz;
  return quantile(std::move(hz), 0.5);
}

Roofs clock_matched(const Roofs& roofs, std::optional<double> clock_hz, std::set<std::string>* swapped) {
  Roofs out = roofs;
  if (!clock_hz || roofs.sustained.empty()) return out;
  auto swap = [&](const Ceiling*& slot) {
    const auto it = roofs.sustained.find(slot);
    if (it == roofs.sustained.end()) return;
    const auto burst = samples_clock_hz(slot->roof_pass()), held = samples_clock_hz(it->second->measurement);
    if (!burst || !held || !(*held < (1 - kClockStep) * *burst)) return;  // no step between them: one roof
    if (!(std::fabs(*clock_hz - *held) < std::fabs(*clock_hz - *burst))) return;
    if (swapped) swapped->insert(slot->name);
    slot = it->second.get();
  };
  for (auto& [k, c] : out.compute) swap(c);
  for (auto& [k, c] : out.bandwidth) swap(c);
  for (auto& [k, c] : out.bandwidth_by_name) swap(c);
  return out;
}

namespace {
// The levels a kernel timed warm may find its bytes in: its own and every cache inside it (a
// link, pcie, is the link whatever the cache holds).
bool inside_or_at(Level inner, Level level) {
  auto depth = [](Level l) {
    switch (l) {
      case Level::dram: return 0;
      case Level::l3: return 1;
      case Level::l2: return 2;
      case Level::l1:
      case Level::smem: return 3;
      case Level::pcie: return -1;
    }
    return -1;
  };
  return depth(level) >= 0 && depth(inner) >= depth(level);
}

std::optional<Placement> place_on(const BenchmarkResult& b, const Roofs& roofs, std::string* why);
}  // namespace

Roofs warm_roofs(const Roofs& roofs, Level level) {
  const Ceiling* fastest = nullptr;
  for (const auto& [l, c] : roofs.bandwidth)
    if (inside_or_at(l, level) && (!fastest || c->value > fastest->value)) fastest = c;
  Roofs warm = roofs;
  if (!fastest) return warm;
  for (auto& [l, c] : warm.bandwidth)
    if (inside_or_at(l, level)) c = fastest;
  for (auto& [name, c] : warm.bandwidth_by_name)
    if (c->level && inside_or_at(*c->level, level)) c = fastest;
  return warm;
}

std::optional<BenchmarkResult> with_counted_work(const BenchmarkResult& b) {
  if (b.bytes > 0 || !b.counters || !b.counters->ok()) return std::nullopt;
  const auto counted = b.counters->bytes.find(b.level);
  if (counted == b.counters->bytes.end() || !(counted->second > 0)) return std::nullopt;
  BenchmarkResult c = b;
  c.bytes = counted->second;
  if (!(c.flops > 0)) c.flops = b.counters->flops.value_or(0);
  return c;
}

std::string work_mismatch(const BenchmarkResult& b) {
  if (!b.counters || !b.counters->ok()) return "";
  std::vector<std::string> differ;
  auto compare = [&](const char* what, double declared, double counted) {
    if (declared > 0 && counted > 0 && std::fabs(counted / declared - 1) > kWorkMismatch)
      differ.push_back(fmt::format("{} declared, {:.4g} counted ({:+.0f}%)", what, counted,
                                   100 * (counted / declared - 1)));
  };
  if (const auto it = b.counters->bytes.find(b.level); it != b.counters->bytes.end())
    compare(fmt::format("{:.4g} bytes at {}", b.bytes, to_string(b.level)).c_str(), b.bytes, it->second);
  compare(fmt::format("{:.4g} FLOPs", b.flops).c_str(), b.flops, b.counters->flops.value_or(0));
  if (differ.empty()) return "";
  std::string text;
  for (const auto& d : differ) text += (text.empty() ? "" : "; ") + d;
  return fmt::format(
      "roofline: the work declared and the work CUPTI counted differ by more than {:.0f}%: {}. Placed by the "
      "declared work; counted above it, the kernel moves or computes more than its declaration says it must "
      "(re-reads, a cache too small for its reuse, redundant work); counted below, its declaration is too high",
      100 * kWorkMismatch, text);
}

std::optional<Placement> place(const BenchmarkResult& declared, const Roofs& roofs, std::string* why) {
  // Nothing declared: the work its counters counted, the same way.
  const std::optional<BenchmarkResult> counted = with_counted_work(declared);
  const BenchmarkResult& b = counted ? *counted : declared;
  // Each roof at the clock the kernel's samples ran at: the sustained roof for a kernel that ran
  // at the clock the power cap settles at, the burst roof otherwise.
  std::set<std::string> swapped;
  const Roofs matched = clock_matched(roofs, b.measurement ? samples_clock_hz(*b.measurement) : std::nullopt, &swapped);
  std::optional<Placement> p = place_on(b, matched, why);
  if (!p) return p;
  if (counted) p->work = "counted";
  for (const std::string& name : split_names(binding_ceilings(*p))) {  // the roofs that bind it
    if (swapped.count(name)) p->roof_clock = "sustained";
    for (const auto& [c, view] : roofs.sustained)
      if (c->name == name && p->roof_clock.empty()) p->roof_clock = "burst";
  }
  // The gate holds it to the highest roofs the machine showed: above a sustained roof and not
  // above the burst one, it ran at a clock between the two passes'.
  if (p->implausible && !swapped.empty())
    if (const auto burst = place_on(b, roofs, nullptr)) p->implausible = burst->implausible;
  // Timed warm, its bytes may have come from a cache: its level's roof is then no upper bound, and
  // only the fastest roof of the levels they could have come from can refuse it.
  if (p->implausible && !b.measurement->cold_cache)
    if (const auto w = place_on(b, warm_roofs(roofs, b.level), nullptr)) p->implausible = w->implausible;
  return p;
}

namespace {
// The model's time for one kernel, built up pass by pass.
struct ModelTime {
  double total = 0;
  // Seconds of it each kind of roof binds: the bound is the kind that binds the most of it.
  std::map<std::string, double> bound_time;
  std::vector<std::pair<double, std::string>> passes;  // each pass's time and the roof that binds it
  // The ceilings whose values make the model's time: each pass's binding roof, the link, the
  // launch paths when they bind. Their noise goes into the placement's.
  std::vector<const Ceiling*> binding;
  // The bandwidth ceilings of the passes, in pass order: all of them, and those of the passes
  // their bytes bind (what `bandwidth_ceiling` names when any does).
  std::vector<std::string> bandwidth_names, binding_names;
  std::set<std::string> math_ceilings;
  double math_total = 0;
};

void add_name(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// Each pass's time under its own roofs (a form not declared as passes is one): its bytes over its
// bandwidth ceiling (the level's, or the one it names), its FLOPs over the compute peak, its math
// calls over their rates; the longest binds the pass. "" or why a roof it needs is missing.
std::string time_passes(const BenchmarkResult& b, const Roofs& roofs, const Ceiling& bw, const Ceiling* peak,
                        ModelTime& m) {
  const std::vector<WorkPhase> one = {{"", b.flops, b.bytes, b.transcendentals, ""}};
  for (const WorkPhase& ph : b.phases.empty() ? one : b.phases) {
    const Ceiling* pass_bw = &bw;
    if (!ph.ceiling.empty()) {
      auto it = roofs.bandwidth_by_name.find(ph.ceiling);
      if (it == roofs.bandwidth_by_name.end()) return "no " + ph.ceiling + " bandwidth ceiling was measured";
      pass_bw = it->second;
    }
    add_name(m.bandwidth_names, pass_bw->name);
    double math_time = 0;
    std::vector<const Ceiling*> pass_math;
    for (const auto& [function, calls] : ph.transcendentals) {
      if (calls <= 0) continue;
      auto it = roofs.transcendental.find(function);
      if (it == roofs.transcendental.end()) return "no " + function + " transcendental ceiling was measured";
      math_time += calls / it->second->value;
      m.math_ceilings.insert(it->second->name);
      pass_math.push_back(it->second);
    }
    m.math_total += math_time;
    double t_phase = ph.bytes / pass_bw->value;
    std::string bound = "memory";
    if (ph.flops > 0 && peak && ph.flops / peak->value >= t_phase) {  // at the ridge exactly: compute
      t_phase = ph.flops / peak->value;
      bound = "compute";
    }
    if (math_time > t_phase) {
      t_phase = math_time;
      bound = "transcendental";
    }
    if (bound == "memory") add_name(m.binding_names, pass_bw->name);
    if (bound == "memory") m.binding.push_back(pass_bw);
    if (bound == "compute") m.binding.push_back(peak);
    if (bound == "transcendental") m.binding.insert(m.binding.end(), pass_math.begin(), pass_math.end());
    m.passes.emplace_back(t_phase, bound);
  }
  return "";
}

// The passes' times together. One after another, they add up. Pipelined over C chunks, one chunk
// goes through every pass and the other C - 1 follow at the pipeline's pace: the slowest pass's
// chunk, or with S streams each running its chunks' passes in turn, at least Σ t_k / S per chunk:
// Σ t_k / C + (C - 1) / C · max(max t_k, Σ t_k / S), each pass's share charged to its roof.
void combine_passes(const BenchmarkResult& b, const Roofs& roofs, ModelTime& m) {
  const auto& pass_times = m.passes;
  const double chunks = b.pipeline_chunks >= 1 && pass_times.size() > 1 ? b.pipeline_chunks : 1;
  std::size_t slowest = 0;
  double sum = 0;
  for (std::size_t k = 0; k < pass_times.size(); ++k) {
    if (pass_times[k].first > pass_times[slowest].first) slowest = k;
    sum += pass_times[k].first;
  }
  const bool stream_bound = chunks > 1 && b.pipeline_streams >= 1 && sum / b.pipeline_streams > pass_times[slowest].first;
  // The copies may share one link both ways (Work::shared_link): in the steady state their bytes
  // together move at no more than the link's rate with both directions busy, which is one more
  // floor under the pace, charged to that ceiling when it is the highest.
  // Not measured (left out, or from a file before it): the pace without it, and a warning says so
  // (apply_model). The link carries the bytes of the passes whose ceilings are of its level.
  double link_pace = 0;
  const Ceiling* link = nullptr;
  if (chunks > 1 && !b.pipeline_link.empty()) {
    auto it = roofs.bandwidth_by_name.find(b.pipeline_link);
    if (it != roofs.bandwidth_by_name.end()) {
      link = it->second;
      double link_bytes = 0;
      for (const WorkPhase& ph : b.phases) {
        if (ph.ceiling.empty()) continue;
        const Ceiling* own = roofs.bandwidth_by_name.at(ph.ceiling);  // measured: checked above
        if (own->level == link->level) link_bytes += ph.bytes;
      }
      link_pace = link_bytes / link->value;
    }
  }
  const double pace = stream_bound ? sum / b.pipeline_streams : pass_times[slowest].first;
  const bool link_bound = link && link_pace > pace;
  for (std::size_t k = 0; k < pass_times.size(); ++k) {
    const auto& [t_k, bound] = pass_times[k];
    const double steady = link_bound ? 0.0 : stream_bound ? t_k / b.pipeline_streams : (k == slowest ? t_k : 0.0);
    const double share = t_k / chunks + (chunks - 1) / chunks * steady;
    m.total += share;
    m.bound_time[bound] += share;
  }
  if (link_bound) {  // the link paces the pipeline: named first, as what binds the most of its time
    m.binding.push_back(link);
    const double share = (chunks - 1) / chunks * link_pace;
    m.total += share;
    m.bound_time["memory"] += share;
    m.binding_names.insert(m.binding_names.begin(), link->name);
  }
}

// Launches: each path's count at its measured rate. Launches are queued while earlier work runs
// (a GPU stream) or cost their time whatever the work (a fork and a join), so their time is one
// more lower bound on the whole form's: the larger of it and the work's model time binds. "" or
// why a launch ceiling it needs is missing.
std::string add_launches(const BenchmarkResult& b, const Roofs& roofs, Placement& p, ModelTime& m) {
  double launch_time = 0;
  std::vector<const Ceiling*> launch_paths;
  for (const auto& [path, count] : b.launches) {
    if (count <= 0) continue;
    auto it = roofs.launch.find(path);
    if (it == roofs.launch.end()) return "no " + path + " launch ceiling was measured";
    launch_time += count / it->second->value;
    p.launch_ceiling += (p.launch_ceiling.empty() ? "" : ", ") + it->second->name;
    launch_paths.push_back(it->second);
  }
  p.launch_time_s = launch_time;
  if (launch_time > m.total) {
    m.binding = launch_paths;
    m.bound_time.clear();
    m.bound_time["launch"] = launch_time;
    m.total = launch_time;
  }
  return "";
}

// Each pass's time at its roofs (time_passes), with the level's bandwidth ceiling and, for a
// kernel with FLOPs, its compute peak (*peak). "" or why a roof it needs is missing.
std::string roof_passes(const BenchmarkResult& b, const Roofs& roofs, ModelTime& m, const Ceiling** peak) {
  auto bw_it = roofs.bandwidth.find(b.level);
  if (bw_it == roofs.bandwidth.end()) return "no " + to_string(b.level) + " bandwidth ceiling was measured";
  *peak = nullptr;
  if (b.flops > 0) {
    auto cp_it = roofs.compute.find({b.roof_precision(), b.unit});
    if (cp_it == roofs.compute.end())
      return fmt::format("no {} {} compute ceiling was measured", to_string(b.roof_precision()), to_string(b.unit));
    *peak = cp_it->second;
  }
  return time_passes(b, roofs, *bw_it->second, *peak, m);
}

// Placement::overlap_measured: the pipeline's time from its passes as they ran in the serial form
// (the copies at their measured link ceilings, which they ran at there too; the other passes at
// what the serial form's median leaves, shared as their roofs share it) over the pipelined form's
// median. Absent where the two forms' work differs or the serial form left nothing for its kernels.
std::optional<double> overlap_against_measured_passes(const BenchmarkResult& b, const BenchmarkResult& serial,
                                                      const Roofs& roofs) {
  if (b.pipeline_chunks <= 1 || b.phases.size() < 2 || serial.bytes != b.bytes || serial.flops != b.flops ||
      !serial.measurement || !b.measurement || b.measurement->stats.median <= 0)
    return std::nullopt;
  ModelTime at_roofs;
  const Ceiling* peak = nullptr;
  if (!roof_passes(b, roofs, at_roofs, &peak).empty() || at_roofs.passes.size() != b.phases.size())
    return std::nullopt;
  double copies = 0, others = 0;
  for (std::size_t k = 0; k < b.phases.size(); ++k)
    (b.phases[k].ceiling.empty() ? others : copies) += at_roofs.passes[k].first;
  const double left = serial.measurement->stats.median - copies;
  if (left <= 0 || others <= 0) return std::nullopt;
  ModelTime as_run;
  for (std::size_t k = 0; k < b.phases.size(); ++k) {
    const auto& [t_k, bound] = at_roofs.passes[k];
    as_run.passes.emplace_back(b.phases[k].ceiling.empty() ? t_k * left / others : t_k, bound);
  }
  combine_passes(b, roofs, as_run);
  return as_run.total / b.measurement->stats.median;
}

std::optional<Placement> place_on(const BenchmarkResult& b, const Roofs& roofs, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Placement> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (!b.measured() || !b.measurement) return fail("not verified");
  const double t = b.measurement->stats.median;
  if (t <= 0) return fail("median time is zero");
  if (b.bytes <= 0)
    return fail(fmt::format("declares no bytes, and no counters counted any at {} (declare its work, or run it "
                            "with --counters on a GPU)",
                            to_string(b.level)));
  Placement p;
  p.flop_per_s = b.flops / t;
  p.bytes_per_s = b.bytes / t;
  // Each roof as the time it allows for the declared work; the longest binds. A form declared
  // as passes run one after another gets that per pass, and the passes' times add up.
  const Ceiling* peak = nullptr;
  ModelTime m;
  if (std::string missing = roof_passes(b, roofs, m, &peak); !missing.empty()) return fail(missing);
  if (peak) {
    p.intensity = b.flops / b.bytes;
    p.compute_ceiling = peak->name;
  }
  combine_passes(b, roofs, m);
  for (const auto& name : m.binding_names.empty() ? m.bandwidth_names : m.binding_names)
    p.bandwidth_ceiling += (p.bandwidth_ceiling.empty() ? "" : ", ") + name;
  if (std::string missing = add_launches(b, roofs, p, m); !missing.empty()) return fail(missing);
  for (const auto& name : m.math_ceilings)
    p.transcendental_ceiling += (p.transcendental_ceiling.empty() ? "" : ", ") + name;
  if (b.flops > 0 && m.math_total > 0) p.transcendental_flop_per_s = b.flops / m.math_total;
  p.bound = "memory";
  for (const char* k : {"memory", "compute", "transcendental", "launch"})
    if (m.bound_time[k] > m.bound_time[p.bound]) p.bound = k;
  p.model_time_s = m.total;
  if (b.flops > 0) p.attainable_flop_per_s = b.flops / m.total;
  p.roof_pct = 100.0 * m.total / t;
  double ceiling_noise = 0;
  for (const Ceiling* c : m.binding) ceiling_noise = std::max(ceiling_noise, ceiling_upside(*c));
  p.noise = b.measurement->stats.rel_iqr() + ceiling_noise;
  p.implausible = p.roof_pct > 100.0 * (1.0 + plausibility_allowance(p));
  return p;
}
}  // namespace

std::vector<std::string> gate_ceilings(const BenchmarkResult& declared, const Roofs& roofs) {
  std::vector<std::string> names;
  if (!declared.measurement) return names;
  const std::optional<BenchmarkResult> counted = with_counted_work(declared);
  const BenchmarkResult& b = counted ? *counted : declared;
  auto add = [&names](const std::optional<Placement>& p) {
    if (p)
      for (const std::string& n : split_names(binding_ceilings(*p))) add_name(names, n);
  };
  std::set<std::string> swapped;
  add(place_on(b, clock_matched(roofs, samples_clock_hz(*b.measurement), &swapped), nullptr));
  if (!swapped.empty()) add(place_on(b, roofs, nullptr));
  if (!b.measurement->cold_cache) add(place_on(b, warm_roofs(roofs, b.level), nullptr));
  return names;
}

double ceiling_upside(const Ceiling& c) {
  // Each pass's fastest sample, as a rate: its median rate x median / min time.
  double best = 0;
  auto pass = [&best](const Measurement& m, double value) {
    if (m.stats.min > 0) best = std::max(best, value * m.stats.median / m.stats.min);
  };
  pass(c.measurement, c.value_start);
  if (c.measurement_end && c.value_end) pass(*c.measurement_end, *c.value_end);
  if (c.measurement_again && c.value_again) pass(*c.measurement_again, *c.value_again);
  if (c.measurement_brief && c.value_brief) pass(*c.measurement_brief, *c.value_brief);
  return c.value > 0 && best > c.value ? best / c.value - 1 : 0;
}

double plausibility_allowance(const Placement& p) {
  return std::max(kRoofSlack, p.noise);
}

const std::string& binding_ceilings(const Placement& p) {
  return p.bound == "memory"           ? p.bandwidth_ceiling
         : p.bound == "transcendental" ? p.transcendental_ceiling
         : p.bound == "launch"         ? p.launch_ceiling
                                       : p.compute_ceiling;
}

std::vector<RidgePoint> ridge_points(const Roofs& roofs) {
  std::vector<RidgePoint> out;
  for (const auto& [key, peak] : roofs.compute)
    for (const auto& [level, bw] : roofs.bandwidth) out.push_back({peak->name, bw->name, peak->value / bw->value});
  return out;
}

namespace {
bool is_model_warning(const std::string& w) {
  return w.rfind("roofline:", 0) == 0 || w.rfind(kImplausibleKind, 0) == 0;
}

}  // namespace

std::vector<std::string> split_names(const std::string& names) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < names.size();) {
    const std::size_t comma = names.find(", ", at);
    out.push_back(names.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? names.size() : comma + 2;
  }
  return out;
}

namespace {
// What the evidence in the record points to first, of the four ways a number gets above its roof,
// and whether the roof itself is a suspect (a verified kernel, less than 10x above it, whose
// counters do not contradict its declared work): then the ceiling is told too.
struct Cause {
  std::string text;
  bool ceiling_suspect = false;
};

Cause likely_cause(const BenchmarkResult& b, const Roofs& roofs) {
  const Placement& p = *b.placement;
  if (p.work == "counted")  // no declaration to doubt: CUPTI counted the work that placed it
    return {"its work is what CUPTI counted, not a declaration: a timer that was fooled (work left running past the "
            "end of its timed region) or a roof too low is the likely cause",
            true};
  if (b.counters && b.counters->ok()) {  // counted work beside the declared: the first witness
    const auto counted = b.counters->bytes.find(b.level);
    if (counted != b.counters->bytes.end() && counted->second > 0 && b.bytes > (1 + kWorkMismatch) * counted->second)
      return {
          fmt::format("CUPTI counted {:.4g} bytes at {} against {:.4g} declared: the work is declared above what the "
                      "kernel does",
                      counted->second, to_string(b.level), b.bytes)};
    if (b.counters->flops && *b.counters->flops > 0 && b.flops > (1 + kWorkMismatch) * *b.counters->flops)
      return {
          fmt::format("CUPTI counted {:.4g} FLOPs against {:.4g} declared: the work is declared above what the "
                      "kernel does",
                      *b.counters->flops, b.flops)};
  }
  if (b.timing_only)
    return {"nothing checked its output (declared timing only): a kernel that skipped its work is the likely cause"};
  if (p.bound == "memory") {
    const auto best = roofs.bandwidth.find(b.level);
    for (const std::string& name : split_names(p.bandwidth_ceiling)) {
      const auto it = roofs.bandwidth_by_name.find(name);
      if (it == roofs.bandwidth_by_name.end() || best == roofs.bandwidth.end()) continue;
      const Ceiling& c = *it->second;
      if (c.level == b.level && c.value < 0.9 * best->second->value)
        return {fmt::format("its roof, {} at {:.4g} B/s, is {:.0f}% below the best {} ceiling ({}): a ceiling too weak "
                            "for the kernels of its shape is the likely cause",
                            c.name, c.value, 100 * (1 - c.value / best->second->value), to_string(b.level),
                            best->second->name),
                true};
    }
  }
  if (p.roof_pct > 1000)
    return {"more than 10x its roof: a timer that was fooled or work that was skipped is the likely cause"};
  return {
      "work declared above what the kernel does (its Work against what it really reads, writes and computes), "
      "a timer that was fooled, or a roof too low is the likely cause",
      true};
}

std::string implausible_warning(const BenchmarkResult& b, const Cause& cause) {
  const Placement& p = *b.placement;
  return fmt::format(
      "{} at {:.0f}% of its roof ({}), above it by more than the run's own noise (±{:.1f}%): "
      "faster than this machine goes, so the number is refused; {}. (What puts a number above its roof: work "
      "declared above what the kernel does, a timer that was fooled, a kernel that skipped work, or a ceiling too "
      "weak for its shape.)",
      kImplausibleKind, p.roof_pct, binding_ceilings(p), 100 * plausibility_allowance(p), cause.text);
}
}  // namespace

WaveModel wave_model(std::int64_t tile_m, std::int64_t tile_n, std::int64_t M, std::int64_t N,
                     std::int64_t blocks_per_sm, std::int64_t sms) {
  if (tile_m <= 0 || tile_n <= 0 || M <= 0 || N <= 0 || blocks_per_sm <= 0 || sms <= 0)
    throw std::invalid_argument("wave model needs positive tiles, sizes, blocks per SM and SMs");
  WaveModel w;
  w.tile_m = tile_m;
  w.tile_n = tile_n;
  w.blocks_per_sm = blocks_per_sm;
  w.sms = sms;
  w.tiles = ((M + tile_m - 1) / tile_m) * ((N + tile_n - 1) / tile_n);
  const std::int64_t slots = blocks_per_sm * sms;
  w.waves = static_cast<double>(w.tiles) / static_cast<double>(slots);
  const std::int64_t whole = (w.tiles + slots - 1) / slots;
  w.efficiency = static_cast<double>(w.tiles) / static_cast<double>(whole * slots);
  return w;
}

Results read_results(const std::string& path) {
  Results r = load_results(path);
  apply_model(r);
  return r;
}

void apply_model(Results& r) {
  for (auto& b : r.benchmarks) {
    if (b.counters) cupti::derive(*b.counters);
    if (b.waves) {
      try {
        *b.waves = wave_model(b.waves->tile_m, b.waves->tile_n, param(b.params, "M"), param(b.params, "N"),
                              b.waves->blocks_per_sm, b.waves->sms);
      } catch (const std::exception& e) {  // no M or N, or a zero: the file's wave model is no model
        throw InputError(b.name + ": bad waves: " + e.what());
      }
    }
  }
  for (auto& c : r.ceilings) {
    c.warnings.erase(std::remove_if(c.warnings.begin(), c.warnings.end(), is_model_warning), c.warnings.end());
    if (c.value_end && c.value_start > 0) {
      const double drift = *c.value_end / c.value_start - 1.0;
      if (std::fabs(drift) > kDriftTolerance)
        c.warnings.push_back(
            fmt::format("roofline: measured {:+.0f}% at the end of the run against its start: the machine did not hold "
                        "steady, and the roof is the better of the two",
                        100 * drift));
    }
    // Measured once more far above every earlier pass: those were no roof.
    const double earlier = std::max({c.value_start, c.value_end.value_or(0), c.value_sustained.value_or(0)});
    if (c.value_again && earlier > 0 && *c.value_again > (1 + kDriftTolerance) * earlier)
      c.warnings.push_back(fmt::format(
          "roofline: measured once more after a kernel came out above it, at {:.2f}x the best of its earlier passes "
          "({:.4g} against {:.4g} {}): those ran slow, the machine busy with other work then, so the roofs measured "
          "beside them may be low too (measure them again, alone: `roofbench ceilings`)",
          *c.value_again / earlier, *c.value_again, earlier, c.value_unit));
    // Measured in brief samples far above every pass of its own size: brief bursts ran faster.
    const double own = std::max(earlier, c.value_again.value_or(0));
    if (c.value_brief && c.benchmark_brief && own > 0 && *c.value_brief > (1 + kDriftTolerance) * own)
      c.warnings.push_back(fmt::format(
          "roofline: measured once more in samples as brief as the kernel's that came out above it ({}), at {:.2f}x "
          "the best of its passes in longer samples ({:.4g} against {:.4g} {}): this machine ran brief bursts faster "
          "than those (a CPU quota or time slice that throttles long samples, a turbo budget, or other work beside "
          "them), and a roof for brief kernels is measured in brief samples",
          *c.benchmark_brief, *c.value_brief / own, *c.value_brief, own, c.value_unit));
  }
  const Roofs roofs = select_roofs(r.ceilings);
  r.ridge_points = ridge_points(roofs);
  std::map<Ceiling*, std::vector<std::string>> weaker_than;  // a ceiling -> the kernels that beat it
  for (auto& b : r.benchmarks) {
    b.placement.reset();
    // Keep warnings from elsewhere; re-derive the model's own.
    b.warnings.erase(std::remove_if(b.warnings.begin(), b.warnings.end(), is_model_warning), b.warnings.end());
    if (!b.measured()) continue;
    std::string why;
    b.placement = place(b, roofs, &why);
    if (!b.placement) {
      b.warnings.push_back("roofline: not placed: " + why);
      continue;
    }
    if (b.pipeline_chunks > 1 && !b.pipeline_link.empty() && !roofs.bandwidth_by_name.count(b.pipeline_link))
      b.warnings.push_back("roofline: no " + b.pipeline_link +
                           " bandwidth ceiling was measured: the pipeline's pace leaves out the link its copies share "
                           "both ways, and its roof may be too high");
    const Placement& pl = *b.placement;
    if (pl.implausible) {
      const Cause cause = likely_cause(b, roofs);
      b.warnings.push_back(implausible_warning(b, cause));
      if (cause.ceiling_suspect)
        for (const std::string& name : split_names(binding_ceilings(pl)))
          for (auto& c : r.ceilings)
            if (c.name == name && c.value > 0)
              weaker_than[&c].push_back(fmt::format("{} at {:.0f}%", b.name, pl.roof_pct));
    } else if (pl.roof_pct > 100.0 * (1.0 + kRoofSlack) && !b.measurement->cold_cache &&
               pl.roof_pct > 100.0 * (1.0 + plausibility_allowance(pl))) {
      // Refused by nothing but a roof a warm kernel's bytes need not have met (place()).
      const auto w = place(b, warm_roofs(roofs, b.level), nullptr);
      b.warnings.push_back(fmt::format(
          "roofline: at {:.0f}% of its roof ({}), but timed warm: its bytes may have come from a cache, so "
          "that roof is no upper bound for it{}; not refused. Placed warm, a kernel is read against the "
          "level its bytes came from, or timed cold",
          pl.roof_pct, binding_ceilings(pl),
          w ? fmt::format(" (against the fastest cache's, {}, it is at {:.0f}%)", binding_ceilings(*w), w->roof_pct)
            : ""));
    } else if (pl.roof_pct > 100.0 * (1.0 + plausibility_allowance(pl)) && pl.roof_clock == "sustained") {
      // Not refused by the burst roofs (place()): read at the sustained roof of its clock, it ran
      // faster than that pass, at a clock between the two passes'.
      const auto counted = with_counted_work(b);
      const auto burst = place_on(counted ? *counted : b, roofs, nullptr);
      b.warnings.push_back(fmt::format(
          "roofline: at {:.0f}% of the sustained roof of its clock ({}), but {:.0f}% of the burst roof: its "
          "samples ran at a clock between the two passes', and the burst roof, the upper bound, holds",
          pl.roof_pct, binding_ceilings(pl), burst ? burst->roof_pct : 0.0));
    } else if (pl.roof_pct > 100.0 * (1.0 + kRoofSlack)) {
      b.warnings.push_back(fmt::format(
          "roofline: at {:.0f}% of its roof ({}), above it by less than the run's own noise (±{:.1f}%): within "
          "the measurement's spread, but a roof should not be passed at all",
          pl.roof_pct, binding_ceilings(pl), 100 * pl.noise));
    }
    if (pl.work == "counted")
      b.warnings.push_back(fmt::format(
          "roofline: placed by the work CUPTI counted ({:.4g} bytes at {}, {:.4g} FLOPs{}): it declares no bytes",
          pl.bytes_per_s * b.measurement->stats.median, to_string(b.level), pl.flop_per_s * b.measurement->stats.median,
          b.flops > 0 ? ", as declared" : ""));
    else if (const std::string w = work_mismatch(b); !w.empty())
      b.warnings.push_back(w);
  }
  // A pipelined form beside its serial form: its overlap against its passes as they ran.
  for (auto& b : r.benchmarks) {
    if (!b.placement || b.pipeline_chunks <= 1) continue;
    if (const BenchmarkResult* serial = compared_form(r.benchmarks, b);
        serial && serial->measured() && serial->pipeline_chunks <= 1)
      b.placement->overlap_measured = overlap_against_measured_passes(b, *serial, roofs);
  }
  for (auto& [c, kernels] : weaker_than)
    c->warnings.push_back(
        fmt::format("roofline: not an upper bound: {} verified kernel(s) ran above it by more than "
                    "the run's noise ({}{}); if their work is declared right, this ceiling is too "
                    "weak for its shape",
                    kernels.size(), kernels.front(), kernels.size() > 1 ? ", ..." : ""));
}

}  // namespace roofbench
