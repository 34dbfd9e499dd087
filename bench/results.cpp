#include "bench/results.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <lzma.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bench/power.h"

namespace roofbench {

std::map<Level, double> Counters::intensity() const {
  std::map<Level, double> out;
  if (!flops || *flops <= 0) return out;
  for (const auto& [level, b] : bytes)
    if (b > 0) out[level] = *flops / b;
  return out;
}

using nlohmann::json;

// A name as kernels declare it ("sin", "sin.approx", "pcie_h2d_pinned"): it reaches the reports.
bool valid_declared_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxDeclaredName) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

namespace {

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
template <class T>
std::optional<T> get_opt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

json params_json(const Params& p) {
  // An array of [name, value] pairs keeps the declaration order (M, N, K) that names use.
  json a = json::array();
  for (const auto& [k, v] : p) a.push_back(json::array({k, v}));
  return a;
}
Params params_from(const json& a) {
  Params p;
  for (const auto& kv : a) p.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::int64_t>());
  return p;
}

json stats_json(const SampleStats& s) {
  return {{"n", s.n},     {"min_s", s.min},       {"max_s", s.max}, {"mean_s", s.mean}, {"stddev_s", s.stddev},
          {"q1_s", s.q1}, {"median_s", s.median}, {"q3_s", s.q3},   {"iqr_s", s.iqr()}, {"rel_iqr", s.rel_iqr()}};
}

json verification_json(const Verification& v) {
  return {
      {"ok", v.ok},         {"checked", v.checked}, {"mismatches", v.mismatches}, {"max_abs_error", v.max_abs_error},
      {"method", v.method}, {"detail", v.detail}};
}
Verification verification_from(const json& j) {
  Verification v;
  v.ok = j.at("ok").get<bool>();
  v.checked = j.at("checked").get<std::int64_t>();
  v.mismatches = j.at("mismatches").get<std::int64_t>();
  v.max_abs_error = j.at("max_abs_error").get<double>();
  v.method = j.value("method", "");
  v.detail = j.value("detail", "");
  return v;
}

json measurement_json(const Measurement& m) {
  json j = {{"samples_s", m.samples_s},
          {"stats", stats_json(m.stats)},
          {"warmup_runs", m.warmup_runs},
          {"stop_reason", m.stop_reason},
          {"timer", m.timer},
          {"launch", m.launch.empty() ? json(nullptr) : json(m.launch)},
          {"cold_cache", m.cold_cache},
          {"clock_hz",
           {{"before", opt(m.clock_before_hz)}, {"after", opt(m.clock_after_hz)}, {"reference", opt(m.clock_reference_hz)}}},
          {"sample_clock_hz", m.sample_clock_hz},
          {"throttled_samples", m.throttled},
          {"clock_limits", m.clock_limits}};
  // (A device that never names a limit, the CPU, would write an empty string a sample: left out.)
  if (std::any_of(m.sample_clock_limits.begin(), m.sample_clock_limits.end(), [](const std::string& l) { return !l.empty(); }))
    j["sample_clock_limits"] = m.sample_clock_limits;
  if (!m.sample_energy_j.empty()) {
    j["sample_energy_j"] = m.sample_energy_j;
    j["sample_window_s"] = m.sample_window_s;
  }
  if (!m.sample_energy_j.empty() || m.energy_run) j["energy_counter_interval_s"] = opt(m.energy_interval_s);
  if (m.energy_run)
    j["energy_run"] = {{"kind", m.energy_run->kind},
                       {"seconds", m.energy_run->seconds},
                       {"joules", m.energy_run->joules},
                       {"busy_s", m.energy_run->busy_s},
                       {"runs", m.energy_run->runs}};
  if (m.energy_run && m.energy_run->window)
    j["energy_run"]["window"] = {{"seconds", m.energy_run->window->seconds},
                                 {"joules", m.energy_run->window->joules},
                                 {"changes", m.energy_run->window->changes},
                                 {"gap_s", m.energy_run->window->gap_s}};
  if (!m.sample_power_w.empty()) j["sample_power_w"] = m.sample_power_w;
  if (!m.sample_temperature_c.empty()) j["sample_temperature_c"] = m.sample_temperature_c;
  if (m.cooldown_s > 0) j["cooldown_s"] = m.cooldown_s;
  if (m.held_s > 0) j["held_s"] = m.held_s;
  if (m.fresh_inputs) j["untrusted"] = {{"fresh_inputs", true}, {"spot_checks", m.spot_checks}};
  // Derived (energy_summary), written for readers of the file; derived again when it is read.
  std::string why;
  if (const auto e = energy_summary(m, &why))
    j["energy"] = {{"joules_per_run", e->joules_per_run},
                   {"mean_power_w", e->mean_power_w},
                   {"samples", e->samples},
                   {"samples_counted", e->samples_counted},
                   {"from", e->from},
                   {"window", e->window}};
  else if (!m.sample_energy_j.empty())
    j["energy"] = {{"unavailable", why}};
  if (!m.placement_samples.empty()) j["placement_samples"] = m.placement_samples;
  if (!m.sampling_s.empty()) j["sampling_s"] = m.sampling_s;
  return j;
}
Measurement measurement_from(const json& j) {
  Measurement m;
  m.samples_s = j.at("samples_s").get<std::vector<double>>();
  if (m.samples_s.empty()) throw InputError("a measurement has no samples");
  for (double s : m.samples_s)
    if (!(s > 0) || !std::isfinite(s)) throw InputError("a measurement has a sample that is not a positive time");
  m.stats = summarize(m.samples_s);  // derived data is recomputed, never trusted from the file
  m.warmup_runs = j.at("warmup_runs").get<int>();
  m.stop_reason = j.value("stop_reason", "");
  m.timer = j.at("timer").get<std::string>();
  if (auto it = j.find("launch"); it != j.end() && !it->is_null()) m.launch = it->get<std::string>();
  m.cold_cache = j.at("cold_cache").get<bool>();
  const json& c = j.at("clock_hz");
  m.clock_before_hz = get_opt<double>(c, "before");
  m.clock_after_hz = get_opt<double>(c, "after");
  m.clock_reference_hz = get_opt<double>(c, "reference");
  // Files from before per-sample clocks have none of the three below.
  m.sample_clock_hz = j.value("sample_clock_hz", std::vector<double>{});
  if (!m.sample_clock_hz.empty() && m.sample_clock_hz.size() != m.samples_s.size())
    throw InputError(fmt::format("a measurement has {} samples but {} per-sample clocks", m.samples_s.size(),
                                 m.sample_clock_hz.size()));
  m.throttled = j.value("throttled_samples", std::vector<int>{});
  for (int i : m.throttled)
    if (i < 0 || static_cast<std::size_t>(i) >= m.sample_clock_hz.size())
      throw InputError(fmt::format("a throttled-sample index ({}) points at no sample with a clock", i));
  m.clock_limits = j.value("clock_limits", std::vector<std::string>{});
  // Files from before per-sample power have none of these; each is one value per sample.
  auto per_sample = [&](const char* key, auto& into) {
    into = j.value(key, std::remove_reference_t<decltype(into)>{});
    if (!into.empty() && into.size() != m.samples_s.size())
      throw InputError(fmt::format("a measurement has {} samples but {} values of {}", m.samples_s.size(), into.size(), key));
  };
  m.cooldown_s = j.value("cooldown_s", 0.0);
  if (!(m.cooldown_s >= 0) || !std::isfinite(m.cooldown_s)) throw InputError("a measurement's cooldown_s is not a non-negative time");
  m.held_s = j.value("held_s", 0.0);
  if (!(m.held_s >= 0) || !std::isfinite(m.held_s)) throw InputError("a measurement's held_s is not a non-negative time");
  if (auto it = j.find("untrusted"); it != j.end()) {
    m.fresh_inputs = it->at("fresh_inputs").get<bool>();
    m.spot_checks = it->at("spot_checks").get<int>();
    if (m.spot_checks < 0 || static_cast<std::size_t>(m.spot_checks) > m.samples_s.size())
      throw InputError(fmt::format("a measurement has {} spot checks of {} samples", m.spot_checks, m.samples_s.size()));
  }
  per_sample("sample_clock_limits", m.sample_clock_limits);
  per_sample("sample_energy_j", m.sample_energy_j);
  per_sample("sample_window_s", m.sample_window_s);
  // Files from before the counter's interval was probed have none: their energy is not derived.
  m.energy_interval_s = get_opt<double>(j, "energy_counter_interval_s");
  if (auto it = j.find("energy_run"); it != j.end()) {
    Measurement::EnergyRun r;
    r.kind = it->at("kind").get<std::string>();
    r.seconds = it->at("seconds").get<double>();
    r.joules = it->at("joules").get<double>();
    r.busy_s = it->at("busy_s").get<double>();
    r.runs = it->at("runs").get<int>();
    if (r.kind != "hold" && r.kind != "pass") throw InputError("a measurement's energy_run.kind is not \"hold\" or \"pass\"");
    for (double v : {r.seconds, r.joules, r.busy_s})
      if (!(v >= 0) || !std::isfinite(v)) throw InputError("a measurement's energy_run has a time or energy that is not a finite, non-negative number");
    if (r.runs < 1) throw InputError("a measurement's energy_run has no runs");
    // Its runs' summed times within its wall time (the timers differ a little), and a hold where
    // the measurement says it was held, for as long.
    if (r.busy_s > 1.05 * r.seconds) throw InputError("a measurement's energy_run is busier than it was long (busy_s > seconds)");
    if ((r.kind == "hold") != (m.held_s > 0) || (r.kind == "hold" && std::fabs(m.held_s - r.seconds) > 1e-6 * r.seconds))
      throw InputError("a measurement's energy_run.kind does not agree with its held_s");
    if (auto w = it->find("window"); w != it->end()) {
      Measurement::EnergyRun::Window win;
      win.seconds = w->at("seconds").get<double>();
      win.joules = w->at("joules").get<double>();
      win.changes = w->at("changes").get<int>();
      win.gap_s = w->at("gap_s").get<double>();
      if (!(win.seconds > 0) || !std::isfinite(win.seconds) || win.seconds > r.seconds * (1 + 1e-9) ||
          !(win.joules >= 0) || win.joules > r.joules * (1 + 1e-9) + 1e-9 || win.changes < 1 || !(win.gap_s >= 0) ||
          !std::isfinite(win.gap_s))
        throw InputError("a measurement's energy_run.window is not a window inside its run (a positive time and "
                         "joules within the run's, at least one change, a non-negative gap)");
      r.window = win;
    }
    m.energy_run = r;
  }
  if (m.energy_interval_s && !(*m.energy_interval_s > 0 && std::isfinite(*m.energy_interval_s)))
    throw InputError("a measurement's energy_counter_interval_s is not a positive time");
  per_sample("sample_power_w", m.sample_power_w);
  per_sample("sample_temperature_c", m.sample_temperature_c);
  if (m.sample_energy_j.size() != m.sample_window_s.size())
    throw InputError("a measurement has per-sample energy without the windows it was read over, or windows without it");
  for (double v : m.sample_energy_j)
    if (!(v >= 0) || !std::isfinite(v)) throw InputError("a measurement has a per-sample energy that is not a finite, non-negative number of joules");
  for (double v : m.sample_window_s)
    if (!(v > 0) || !std::isfinite(v)) throw InputError("a measurement has a per-sample window that is not a positive time");
  for (double v : m.sample_power_w)
    if (!(v >= 0) || !std::isfinite(v)) throw InputError("a measurement has a per-sample power that is not a finite, non-negative number of watts");
  for (double v : m.sample_temperature_c)
    if (!std::isfinite(v)) throw InputError("a measurement has a per-sample temperature that is not a number");
  m.placement_samples = j.value("placement_samples", std::vector<int>{});
  std::size_t placed = 0;
  for (int n : m.placement_samples) {
    if (n < 1) throw InputError("a measurement has a placement with no samples");
    placed += static_cast<std::size_t>(n);
  }
  if (!m.placement_samples.empty() && placed != m.samples_s.size())
    throw InputError(fmt::format("a measurement's placements hold {} samples but it has {}", placed,
                                 m.samples_s.size()));
  if (auto it = j.find("sampling_s"); it != j.end() && !it->is_null()) {  // absent before 2026-11-30
    if (!it->is_object()) throw InputError("a measurement's \"sampling_s\" must be an object of seconds");
    for (const auto& [part, s] : it->items()) {
      const std::string& name = part;
      const bool known = std::any_of(std::begin(kSamplingParts), std::end(kSamplingParts),
                                     [&](const char* k) { return name == k; });
      if (!known || !s.is_number() || !(s.get<double>() >= 0) || !std::isfinite(s.get<double>()))
        throw InputError(fmt::format("a measurement's \"sampling_s\" holds seconds >= 0 of {}; got \"{}\": {}",
                                     fmt::join(std::begin(kSamplingParts), std::end(kSamplingParts), ", "), name,
                                     s.dump()));
      m.sampling_s[name] = s.get<double>();
    }
  }
  return m;
}

json placement_json(const Placement& p) {
  return {{"flop_per_s", p.flop_per_s},
          {"bytes_per_s", p.bytes_per_s},
          {"intensity", opt(p.intensity)},
          {"attainable_flop_per_s", opt(p.attainable_flop_per_s)},
          {"roof_pct", p.roof_pct},
          {"bound", p.bound},
          {"compute_ceiling", p.compute_ceiling},
          {"bandwidth_ceiling", p.bandwidth_ceiling},
          {"transcendental_ceiling", p.transcendental_ceiling.empty() ? json(nullptr) : json(p.transcendental_ceiling)},
          {"transcendental_flop_per_s", opt(p.transcendental_flop_per_s)},
          {"launch_ceiling", p.launch_ceiling.empty() ? json(nullptr) : json(p.launch_ceiling)},
          {"launch_time_s", p.launch_time_s},
          {"model_time_s", p.model_time_s},
          {"noise", p.noise},
          {"implausible", p.implausible},
          {"work", p.work},
          {"roof_clock", p.roof_clock.empty() ? json(nullptr) : json(p.roof_clock)},
          {"overlap_measured", opt(p.overlap_measured)}};
}
Placement placement_from(const json& j) {
  Placement p;
  p.flop_per_s = j.at("flop_per_s").get<double>();
  p.bytes_per_s = j.at("bytes_per_s").get<double>();
  p.intensity = get_opt<double>(j, "intensity");
  p.attainable_flop_per_s = get_opt<double>(j, "attainable_flop_per_s");
  p.roof_pct = j.at("roof_pct").get<double>();
  p.bound = j.at("bound").get<std::string>();
  p.compute_ceiling = j.at("compute_ceiling").get<std::string>();
  p.bandwidth_ceiling = j.at("bandwidth_ceiling").get<std::string>();
  // Written since the transcendental roof; the model recomputes all of them on load.
  if (auto it = j.find("transcendental_ceiling"); it != j.end() && !it->is_null())
    p.transcendental_ceiling = it->get<std::string>();
  p.transcendental_flop_per_s = get_opt<double>(j, "transcendental_flop_per_s");
  if (auto it = j.find("launch_ceiling"); it != j.end() && !it->is_null()) p.launch_ceiling = it->get<std::string>();
  p.launch_time_s = j.value("launch_time_s", 0.0);
  p.model_time_s = j.value("model_time_s", 0.0);
  p.noise = j.value("noise", 0.0);
  p.implausible = j.value("implausible", false);
  p.work = j.value("work", "declared");
  if (auto it = j.find("roof_clock"); it != j.end() && it->is_string()) p.roof_clock = it->get<std::string>();
  p.overlap_measured = get_opt<double>(j, "overlap_measured");
  return p;
}

json reference_json(const std::optional<ReferenceValue>& r) {
  if (!r) return nullptr;
  return {{"value", r->value}, {"source", r->source}};
}
std::optional<ReferenceValue> reference_from(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return ReferenceValue{it->at("value").get<double>(), it->at("source").get<std::string>()};
}

json waves_json(const WaveModel& w) {
  return {{"tile_m", w.tile_m},   {"tile_n", w.tile_n}, {"tiles", w.tiles},          {"blocks_per_sm", w.blocks_per_sm},
          {"sms", w.sms},         {"waves", w.waves},   {"efficiency", w.efficiency}};
}
WaveModel waves_from(const json& j) {
  // tiles, waves and efficiency are derived: the model recomputes them from the grid.
  WaveModel w;
  w.tile_m = j.at("tile_m").get<std::int64_t>();
  w.tile_n = j.at("tile_n").get<std::int64_t>();
  w.blocks_per_sm = j.at("blocks_per_sm").get<std::int64_t>();
  w.sms = j.at("sms").get<std::int64_t>();
  if (w.tile_m <= 0 || w.tile_n <= 0 || w.blocks_per_sm <= 0 || w.sms <= 0)
    throw InputError("bad waves: tiles, blocks per SM and SMs must be positive");
  return w;
}

// {"dram": 1.0, "l2": 2.0}: a map by level, keyed by the level's name.
json by_level(const std::map<Level, double>& m) {
  json j = json::object();
  for (const auto& [level, v] : m) j[to_string(level)] = v;
  return j;
}

json counters_json(const Counters& c) {
  json derived = {{"flops", opt(c.flops)},
                  {"flops_formula", c.flops_formula.empty() ? json(nullptr) : json(c.flops_formula)},
                  {"bytes", by_level(c.bytes)},
                  {"intensity", by_level(c.intensity())},
                  {"time_s", opt(c.time_s)},
                  {"sm_clock_hz", opt(c.sm_clock_hz)},
                  {"threads_per_instruction", opt(c.threads_per_instruction)},
                  {"branch_uniformity", opt(c.branch_uniformity)}};
  json j = {{"set", c.set},
            {"metrics", c.metrics},
            {"passes", c.passes},
            {"values", c.values},
            {"error", c.error.empty() ? json(nullptr) : json(c.error)},
            {"derived", derived}};
  if (c.trace)
    j["trace"] = {{"span_s", c.trace->span_s},
                  {"busy_s", c.trace->busy_s},
                  {"overlap_s", c.trace->overlap_s},
                  {"kernels", c.trace->kernels},
                  {"copies", c.trace->copies},
                  {"streams", c.trace->streams},
                  {"error", c.trace->error.empty() ? json(nullptr) : json(c.trace->error)}};
  return j;
}
Counters counters_from(const json& j) {
  Counters c;
  c.set = j.value("set", "");
  c.metrics = j.at("metrics").get<std::vector<std::string>>();
  c.passes = j.value("passes", 0);
  c.values = j.at("values").get<std::map<std::string, double>>();
  if (auto it = j.find("error"); it != j.end() && !it->is_null()) c.error = it->get<std::string>();
  for (const auto& [name, v] : c.values)
    if (!std::isfinite(v)) throw InputError("counter '" + name + "' is not a finite number");
  if (auto it = j.find("trace"); it != j.end() && !it->is_null()) {
    KernelTrace t;
    t.span_s = it->at("span_s").get<std::vector<double>>();
    t.busy_s = it->at("busy_s").get<std::vector<double>>();
    t.kernels = it->at("kernels").get<std::vector<std::string>>();
    // Absent in files from before copies were traced.
    t.overlap_s = it->value("overlap_s", std::vector<double>{});
    t.copies = it->value("copies", std::size_t{0});
    t.streams = it->value("streams", std::size_t{0});
    if (auto e = it->find("error"); e != it->end() && !e->is_null()) t.error = e->get<std::string>();
    if (t.busy_s.size() != t.span_s.size()) throw InputError("trace: span_s and busy_s differ in length");
    if (!t.overlap_s.empty() && t.overlap_s.size() != t.span_s.size())
      throw InputError("trace: span_s and overlap_s differ in length");
    for (const auto* list : {&t.span_s, &t.busy_s, &t.overlap_s})
      for (double v : *list)
        if (!std::isfinite(v) || v < 0) throw InputError("trace: a time is not finite and non-negative");
    c.trace = std::move(t);
  }
  return c;  // derived values are the model's to recompute (apply_model), never read from the file
}

json phases_json(const std::vector<WorkPhase>& phases) {
  json out = json::array();
  for (const auto& p : phases) {
    json ph = {{"name", p.name}, {"flops", p.flops}, {"bytes", p.bytes}, {"transcendentals", p.transcendentals}};
    if (!p.ceiling.empty()) ph["ceiling"] = p.ceiling;
    out.push_back(std::move(ph));
  }
  return out;
}

json benchmark_json(const BenchmarkResult& b) {
  json j = {{"name", b.name},
            {"family", b.family},
            {"variant", b.variant},
            {"precision", to_string(b.precision)},
            {"backend", to_string(b.backend)},
            {"unit", to_string(b.unit)},
            {"math_precision", b.math ? json(to_string(*b.math)) : json(nullptr)},
            {"level", to_string(b.level)},
            {"vendor_reference", b.vendor_reference},
            {"params", params_json(b.params)},
            {"flops", b.flops},
            {"bytes", b.bytes},
            {"transcendentals", b.transcendentals},
            {"launches", b.launches},
            {"phases", phases_json(b.phases)},
            {"pipeline_chunks", b.pipeline_chunks > 0 ? json(b.pipeline_chunks) : json(nullptr)},
            {"pipeline_streams", b.pipeline_streams > 0 ? json(b.pipeline_streams) : json(nullptr)},
            {"pipeline_link", b.pipeline_link.empty() ? json(nullptr) : json(b.pipeline_link)},
            {"work", b.work},
            {"verified", b.verified()},
            {"timing_only", b.timing_only},
            {"verification", verification_json(b.verification)},
            {"recheck", b.recheck ? verification_json(*b.recheck) : json(nullptr)},
            {"error", b.error.empty() ? json(nullptr) : json(b.error)},
            {"warnings", b.warnings}};
  j["measurement"] = b.measurement ? measurement_json(*b.measurement) : json(nullptr);
  j["placement"] = b.placement ? placement_json(*b.placement) : json(nullptr);
  j["waves"] = b.waves ? waves_json(*b.waves) : json(nullptr);
  j["compared_with"] = b.compared_with.empty() ? json(nullptr) : json(b.compared_with);
  j["counters"] = b.counters ? counters_json(*b.counters) : json(nullptr);
  j["host_s"] = b.host_s.empty() ? json(nullptr) : json(b.host_s);
  // Convenience copies of the headline numbers for jq users; recomputed on load. Null, like
  // every absent value, for a benchmark without a measurement.
  j["median_s"] = b.measurement ? json(b.measurement->stats.median) : json(nullptr);
  j["iqr_s"] = b.measurement ? json(b.measurement->stats.iqr()) : json(nullptr);
  return j;
}
std::map<std::string, double> calls_from(const json& j, const std::string& who,
                                         const std::string& field = "transcendentals") {
  std::map<std::string, double> out;
  if (j.is_null()) return out;
  if (!j.is_object()) throw InputError(who + ": \"" + field + "\" is not an object");
  for (const auto& [fn, calls] : j.items()) {
    if (!valid_declared_name(fn) || !calls.is_number() || !(calls.get<double>() >= 0))
      throw InputError(who + ": \"" + field + "\" needs names ([a-z0-9_.], at most " +
                       std::to_string(kMaxDeclaredName) + " characters) and counts >= 0");
    out[fn] = calls.get<double>();
  }
  return out;
}

// A form's passes must add up to its totals: the model sums their times, and a file whose passes
// say something else than its totals would be placed by numbers no one declared.
std::vector<WorkPhase> phases_from(const json& j, const BenchmarkResult& b) {
  std::vector<WorkPhase> out;
  if (j.is_null()) return out;
  if (!j.is_array()) throw InputError("benchmark '" + b.name + "': \"phases\" is not a list");
  double flops = 0, bytes = 0;
  std::map<std::string, double> calls;
  for (const auto& p : j) {
    WorkPhase ph;
    ph.name = p.at("name").get<std::string>();
    ph.flops = p.at("flops").get<double>();
    ph.bytes = p.at("bytes").get<double>();
    if (!(ph.flops >= 0) || !(ph.bytes >= 0))
      throw InputError("benchmark '" + b.name + "': a pass with negative FLOPs or bytes");
    ph.transcendentals = calls_from(p.value("transcendentals", json(nullptr)), "benchmark '" + b.name + "'");
    if (auto it = p.find("ceiling"); it != p.end() && !it->is_null()) {  // absent before per-pass ceilings
      ph.ceiling = it->get<std::string>();
      if (!valid_declared_name(ph.ceiling))
        throw InputError("benchmark '" + b.name + "': a pass's \"ceiling\" is not a ceiling name ([a-z0-9_.])");
    }
    flops += ph.flops;
    bytes += ph.bytes;
    for (const auto& [fn, n] : ph.transcendentals) calls[fn] += n;
    out.push_back(std::move(ph));
  }
  auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); };
  bool same = !out.empty() && near(flops, b.flops) && near(bytes, b.bytes) && calls.size() == b.transcendentals.size();
  for (const auto& [fn, n] : calls) {
    const auto it = b.transcendentals.find(fn);
    same = same && it != b.transcendentals.end() && near(n, it->second);
  }
  if (!same)
    throw InputError("benchmark '" + b.name + "': its \"phases\" do not add up to its flops, bytes and transcendentals");
  return out;
}

BenchmarkResult benchmark_from(const json& j) {
  BenchmarkResult b;
  b.name = j.at("name").get<std::string>();
  b.family = j.at("family").get<std::string>();
  b.variant = j.at("variant").get<std::string>();
  b.precision = precision_from_string(j.at("precision").get<std::string>());
  b.backend = backend_from_string(j.at("backend").get<std::string>());
  b.unit = unit_from_string(j.at("unit").get<std::string>());
  if (auto it = j.find("math_precision"); it != j.end() && !it->is_null())
    b.math = precision_from_string(it->get<std::string>());
  b.level = level_from_string(j.at("level").get<std::string>());
  if (auto it = j.find("vendor_reference"); it != j.end())
    b.vendor_reference = it->get<bool>();
  else  // files written before the flag: the two vendor libraries of the time were these
    b.vendor_reference = b.family == "gemm" && (b.variant == "cublas" || b.variant == "openblas");
  b.params = params_from(j.at("params"));
  b.flops = j.at("flops").get<double>();
  b.bytes = j.at("bytes").get<double>();
  if (!(b.flops >= 0) || !std::isfinite(b.flops) || !(b.bytes >= 0) || !std::isfinite(b.bytes))
    throw InputError("benchmark '" + b.name + "': \"flops\" and \"bytes\" need finite numbers >= 0");
  if (auto it = j.find("transcendentals"); it != j.end())  // absent in files from before the third roof
    b.transcendentals = calls_from(*it, "benchmark '" + b.name + "'");
  if (auto it = j.find("launches"); it != j.end())  // absent in files from before the launch roof
    b.launches = calls_from(*it, "benchmark '" + b.name + "'", "launches");
  if (auto it = j.find("phases"); it != j.end() && !(it->is_array() && it->empty()))
    b.phases = phases_from(*it, b);
  if (auto it = j.find("pipeline_chunks"); it != j.end() && !it->is_null()) {  // absent before pipelines
    b.pipeline_chunks = it->is_number() ? it->get<double>() : 0;
    if (!(b.pipeline_chunks >= 1) || !std::isfinite(b.pipeline_chunks) || b.phases.size() < 2)
      throw InputError("benchmark '" + b.name + "': \"pipeline_chunks\" needs a number >= 1 and two or more passes");
  }
  if (auto it = j.find("pipeline_streams"); it != j.end() && !it->is_null()) {
    b.pipeline_streams = it->is_number() ? it->get<double>() : 0;
    if (!(b.pipeline_streams >= 1) || !std::isfinite(b.pipeline_streams) || b.pipeline_chunks < 1)
      throw InputError("benchmark '" + b.name + "': \"pipeline_streams\" needs a number >= 1 and a pipeline");
  }
  if (auto it = j.find("pipeline_link"); it != j.end() && !it->is_null()) {  // absent before shared links
    b.pipeline_link = it->is_string() ? it->get<std::string>() : "";
    const bool copies = std::any_of(b.phases.begin(), b.phases.end(), [](const WorkPhase& ph) { return !ph.ceiling.empty(); });
    if (!valid_declared_name(b.pipeline_link) || b.pipeline_chunks < 1 || !copies)
      throw InputError("benchmark '" + b.name +
                       "': \"pipeline_link\" needs a ceiling's name, a pipeline and a pass that names a ceiling");
  }
  b.work = j.value("work", "");
  b.verification = verification_from(j.at("verification"));
  if (auto it = j.find("recheck"); it != j.end() && !it->is_null()) b.recheck = verification_from(*it);
  b.timing_only = j.value("timing_only", false);
  if (!j.at("error").is_null()) b.error = j.at("error").get<std::string>();
  b.warnings = j.value("warnings", std::vector<std::string>{});
  if (!j.at("measurement").is_null()) b.measurement = measurement_from(j.at("measurement"));
  if (!j.at("placement").is_null()) b.placement = placement_from(j.at("placement"));
  if (auto it = j.find("waves"); it != j.end() && !it->is_null()) b.waves = waves_from(*it);
  if (auto it = j.find("compared_with"); it != j.end() && !it->is_null()) b.compared_with = it->get<std::string>();
  if (auto it = j.find("counters"); it != j.end() && !it->is_null()) b.counters = counters_from(*it);
  if (auto it = j.find("host_s"); it != j.end() && !it->is_null()) {  // absent before 2026-11-27
    if (!it->is_object()) throw InputError("benchmark '" + b.name + "': \"host_s\" must be an object of seconds");
    for (const auto& [step, s] : it->items()) {
      const std::string& name = step;  // a structured binding is not captured in C++17
      const bool known =
          std::any_of(std::begin(kHostSteps), std::end(kHostSteps), [&](const char* k) { return name == k; });
      if (!known || !s.is_number() || !(s.get<double>() >= 0) || !std::isfinite(s.get<double>()))
        throw InputError("benchmark '" + b.name +
                         "': \"host_s\" holds seconds >= 0 of make, prepare, verify, "
                         "sample, recheck and after; got \"" +
                         step + "\": " + s.dump());
      b.host_s[step] = s.get<double>();
    }
  }
  if (b.timing_only && b.verification.ok)
    throw InputError("benchmark '" + b.name + "' is timing only but says it was verified");
  if (b.measured() && !b.measurement)
    throw InputError("benchmark '" + b.name + "' is " + (b.timing_only ? "timing only" : "verified") +
                     " but has no measurement");
  if (!b.measured() && b.measurement)
    throw InputError("benchmark '" + b.name + "' failed verification but carries a measurement");
  if (b.measurement) {  // every rate a report derives from the work and a sample must be a number
    std::vector<double> work = {b.flops, b.bytes};
    for (const auto* calls : {&b.transcendentals, &b.launches})
      for (const auto& [fn, n] : *calls) work.push_back(n);
    for (double w : work)
      if (!std::isfinite(w / b.measurement->stats.min))
        throw InputError("benchmark '" + b.name + "': its declared work over its fastest sample is not a finite rate");
  }
  return b;
}

json ceiling_json(const Ceiling& c) {
  return {{"name", c.name},
          {"kind", to_string(c.kind)},
          {"level", c.level ? json(to_string(*c.level)) : json(nullptr)},
          {"precision", c.precision ? json(to_string(*c.precision)) : json(nullptr)},
          {"unit", c.unit ? json(to_string(*c.unit)) : json(nullptr)},
          {"function", c.function ? json(*c.function) : json(nullptr)},
          {"value", c.value},
          {"value_unit", c.value_unit},
          {"method", c.method},
          {"benchmark", c.benchmark},
          {"datasheet", reference_json(c.datasheet)},
          {"theoretical", reference_json(c.theoretical)},
          {"measurement", measurement_json(c.measurement)},
          {"value_start", c.value_start},
          {"value_end", opt(c.value_end)},
          {"measurement_end", c.measurement_end ? measurement_json(*c.measurement_end) : json(nullptr)},
          {"value_again", opt(c.value_again)},
          {"measurement_again", c.measurement_again ? measurement_json(*c.measurement_again) : json(nullptr)},
          {"value_brief", opt(c.value_brief)},
          {"measurement_brief", c.measurement_brief ? measurement_json(*c.measurement_brief) : json(nullptr)},
          {"benchmark_brief", c.benchmark_brief ? json(*c.benchmark_brief) : json(nullptr)},
          {"value_sustained", opt(c.value_sustained)},
          {"measurement_sustained", c.measurement_sustained ? measurement_json(*c.measurement_sustained) : json(nullptr)},
          {"level_roof", c.level_roof},
          {"reference_for", c.reference_for ? json(*c.reference_for) : json(nullptr)},
          {"warnings", c.warnings}};
}
Ceiling ceiling_from(const json& j);
}  // namespace

const Measurement& Ceiling::roof_pass() const {
  const Measurement* best = &measurement;
  double v = value_start;
  if (value_end && measurement_end && *value_end > v) best = &*measurement_end, v = *value_end;
  if (value_again && measurement_again && *value_again > v) best = &*measurement_again, v = *value_again;
  if (value_brief && measurement_brief && *value_brief > v) best = &*measurement_brief, v = *value_brief;
  if (value_sustained && measurement_sustained && *value_sustained > v) best = &*measurement_sustained;
  return *best;
}

namespace {
Ceiling ceiling_from(const json& j) {
  Ceiling c;
  c.name = j.at("name").get<std::string>();
  try {
    c.kind = ceiling_kind_from_string(j.at("kind").get<std::string>());
  } catch (const InputError& e) {
    throw InputError("ceiling '" + c.name + "': " + e.what());
  }
  if (!j.at("level").is_null()) c.level = level_from_string(j.at("level").get<std::string>());
  if (!j.at("precision").is_null()) c.precision = precision_from_string(j.at("precision").get<std::string>());
  if (!j.at("unit").is_null()) c.unit = unit_from_string(j.at("unit").get<std::string>());
  if (c.kind == CeilingKind::bandwidth && !c.level)
    throw InputError("bandwidth ceiling '" + c.name + "' has no level");
  if (auto it = j.find("level_roof"); it != j.end() && !it->is_null()) {  // absent before it: true
    if (!it->is_boolean()) throw InputError("ceiling '" + c.name + "': \"level_roof\" is not true or false");
    c.level_roof = it->get<bool>();
  }
  if (auto it = j.find("reference_for"); it != j.end() && !it->is_null()) {  // absent before it: none
    if (!it->is_string() || !valid_declared_name(it->get<std::string>()))
      throw InputError("ceiling '" + c.name + "': \"reference_for\" is not a ceiling's name ([a-z0-9_.], at most " +
                       std::to_string(kMaxDeclaredName) + " characters)");
    c.reference_for = it->get<std::string>();
    if (*c.reference_for == c.name) throw InputError("ceiling '" + c.name + "' is the reference for itself");
  }
  if (c.kind == CeilingKind::compute && (!c.precision || !c.unit))
    throw InputError("compute ceiling '" + c.name + "' has no precision or unit");
  if (auto it = j.find("function"); it != j.end() && !it->is_null()) c.function = it->get<std::string>();
  if (c.kind == CeilingKind::transcendental && (!c.function || !valid_declared_name(*c.function) || !c.unit))
    throw InputError("transcendental ceiling '" + c.name + "' has no unit or no function name ([a-z0-9_.], at most " +
                     std::to_string(kMaxDeclaredName) + " characters)");
  if (c.kind == CeilingKind::launch && (!c.function || !valid_declared_name(*c.function)))
    throw InputError("launch ceiling '" + c.name + "' has no launch path in \"function\" ([a-z0-9_.], at most " +
                     std::to_string(kMaxDeclaredName) + " characters)");
  c.value = j.at("value").get<double>();
  c.value_unit = j.at("value_unit").get<std::string>();
  c.method = j.at("method").get<std::string>();
  c.benchmark = j.at("benchmark").get<std::string>();
  c.datasheet = reference_from(j, "datasheet");
  c.theoretical = reference_from(j, "theoretical");
  c.measurement = measurement_from(j.at("measurement"));
  c.value_start = j.at("value_start").get<double>();
  c.value_end = get_opt<double>(j, "value_end");
  c.value_again = get_opt<double>(j, "value_again");          // absent before 2026-11-28
  c.value_sustained = get_opt<double>(j, "value_sustained");  // absent before 2026-11-29
  c.value_brief = get_opt<double>(j, "value_brief");          // absent before 2026-11-29
  for (double v : {c.value, c.value_start, c.value_end.value_or(0), c.value_again.value_or(0),
                   c.value_sustained.value_or(0), c.value_brief.value_or(0)})
    if (!(v >= 0) || !std::isfinite(v))
      throw InputError("ceiling '" + c.name +
                       "': \"value\", \"value_start\", \"value_end\", \"value_again\", \"value_sustained\" and "
                       "\"value_brief\" need finite numbers >= 0");
  if (!j.at("measurement_end").is_null()) c.measurement_end = measurement_from(j.at("measurement_end"));
  if (auto it = j.find("measurement_again"); it != j.end() && !it->is_null())
    c.measurement_again = measurement_from(*it);
  if (c.value_again.has_value() != c.measurement_again.has_value())
    throw InputError("ceiling '" + c.name + "': \"value_again\" and \"measurement_again\" go together");
  // The brief pass (absent before 2026-11-29): its rate, its samples and its benchmark, another
  // size of the ceiling's own (its family/variant/precision/, other params), all three or none.
  if (auto it = j.find("measurement_brief"); it != j.end() && !it->is_null()) c.measurement_brief = measurement_from(*it);
  if (auto it = j.find("benchmark_brief"); it != j.end() && !it->is_null()) {
    const std::size_t base = c.benchmark.find('/', c.benchmark.find('/', c.benchmark.find('/') + 1) + 1);
    if (!it->is_string() || base == std::string::npos ||
        it->get<std::string>().compare(0, base + 1, c.benchmark, 0, base + 1) != 0 ||
        it->get<std::string>().size() <= base + 1 || it->get<std::string>() == c.benchmark)
      throw InputError("ceiling '" + c.name + "': \"benchmark_brief\" is another size of its \"benchmark\"");
    c.benchmark_brief = it->get<std::string>();
  }
  if (c.value_brief.has_value() != c.measurement_brief.has_value() ||
      c.value_brief.has_value() != c.benchmark_brief.has_value())
    throw InputError("ceiling '" + c.name + "': \"value_brief\", \"measurement_brief\" and \"benchmark_brief\" go together");
  if (auto it = j.find("measurement_sustained"); it != j.end() && !it->is_null())
    c.measurement_sustained = measurement_from(*it);
  if (c.value_sustained.has_value() != c.measurement_sustained.has_value())
    throw InputError("ceiling '" + c.name + "': \"value_sustained\" and \"measurement_sustained\" go together");
  c.warnings = j.value("warnings", std::vector<std::string>{});
  return c;
}

}  // namespace

void to_json(json& j, const Results& r) {
  j = json::object();
  j["schema"] = r.schema;
  j["provenance"] = r.provenance;
  j["device"] = r.device;
  j["settings"] = r.settings;
  j["counters"] = r.counters;
  j["ceilings"] = json::array();
  for (const auto& c : r.ceilings) j["ceilings"].push_back(ceiling_json(c));
  j["ridge_points"] = json::array();
  for (const auto& rp : r.ridge_points)
    j["ridge_points"].push_back({{"compute_ceiling", rp.compute_ceiling},
                                 {"bandwidth_ceiling", rp.bandwidth_ceiling},
                                 {"intensity", rp.intensity}});
  j["benchmarks"] = json::array();
  for (const auto& b : r.benchmarks) j["benchmarks"].push_back(benchmark_json(b));
  for (const auto& n : r.not_run) j["not_run"].push_back({{"benchmark", n.benchmark}, {"why", n.why}});
  j["partial"] = r.partial ? json{{"completed", r.partial->completed},
                                  {"planned", r.partial->planned},
                                  {"reason", r.partial->reason}}
                           : json(nullptr);
}

void from_json(const json& j, Results& r) {
  if (!j.is_object()) throw InputError("not a roofbench results file (top level is not an object)");
  auto it = j.find("schema");
  if (it == j.end() || !it->is_string()) throw InputError("not a roofbench results file (no \"schema\" field)");
  if (*it != kResultsSchema)
    throw InputError("unsupported schema '" + it->get<std::string>() + "' (this roofbench reads " + kResultsSchema +
                     ")");
  try {
    r.schema = *it;
    r.provenance = j.at("provenance");
    r.device = j.at("device");
    if (!r.device.is_object() || !r.device.contains("kind") || !r.device.contains("name"))
      throw InputError("\"device\" needs \"kind\" and \"name\"");
    r.settings = j.at("settings");
    r.counters = j.value("counters", json(nullptr));
    r.ceilings.clear();
    if (j.at("ceilings").size() > kMaxCeilings)
      throw InputError(fmt::format("{} ceilings: a results file holds at most {}", j.at("ceilings").size(), kMaxCeilings));
    if (j.at("benchmarks").size() > kMaxBenchmarks)
      throw InputError(fmt::format("{} benchmarks: a results file holds at most {} (split the run with --filter)",
                                   j.at("benchmarks").size(), kMaxBenchmarks));
    for (const auto& c : j.at("ceilings")) r.ceilings.push_back(ceiling_from(c));
    r.ridge_points.clear();
    for (const auto& rp : j.at("ridge_points"))
      r.ridge_points.push_back({rp.at("compute_ceiling").get<std::string>(),
                                rp.at("bandwidth_ceiling").get<std::string>(), rp.at("intensity").get<double>()});
    std::set<std::string> seen;
    for (const auto& c : r.ceilings)
      if (!seen.insert(c.name).second) throw InputError("ceiling '" + c.name + "' is listed twice");
    r.benchmarks.clear();
    seen.clear();
    for (const auto& b : j.at("benchmarks")) {
      r.benchmarks.push_back(benchmark_from(b));
      if (!seen.insert(r.benchmarks.back().name).second)
        throw InputError("benchmark '" + r.benchmarks.back().name + "' is listed twice");
    }
    r.not_run.clear();
    if (auto n = j.find("not_run"); n != j.end())
      for (const auto& e : *n)
        r.not_run.push_back({e.at("benchmark").get<std::string>(), e.at("why").get<std::string>()});
    r.partial.reset();
    if (auto p = j.find("partial"); p != j.end() && !p->is_null())
      r.partial = Partial{p->at("completed").get<std::size_t>(), p->at("planned").get<std::size_t>(),
                          p->at("reason").get<std::string>()};
  } catch (const json::exception& e) {
    // nlohmann's messages start with "[json.exception.type_error.302] "; keep the readable part.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError("malformed results: " + what);
  }
}

namespace {

// Decompresses a whole gzip or xz stream into text, refusing one that decompresses past max_bytes
// (checked a chunk at a time: the text grows at most a chunk past it).
constexpr std::size_t kChunk = std::size_t(1) << 20;

std::string too_big(const std::string& what, const char* format, std::size_t max_bytes) {
  return fmt::format("{}: {} that decompresses past {} MiB: not a roofbench results file (none comes near it)", what,
                     format, max_bytes >> 20);
}

std::string gunzip(const std::string& in, const std::string& what, std::size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw InputError(what + ": cannot start a gzip decoder");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  std::size_t left = in.size();
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && left > 0) {  // avail_in is 32 bits: feed a large file in pieces
      z.avail_in = static_cast<uInt>(std::min<std::size_t>(left, std::size_t(1) << 30));
      left -= z.avail_in;
    }
    if (out.size() > max_bytes) {
      inflateEnd(&z);
      throw InputError(too_big(what, "a gzip file", max_bytes));
    }
    const std::size_t have = out.size();
    out.resize(have + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(&out[have]);
    z.avail_out = static_cast<uInt>(kChunk);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(have + kChunk - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && left == 0) rc = Z_DATA_ERROR;  // cut short
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = z.msg ? z.msg : rc == Z_DATA_ERROR ? "the stream ends early" : "decoder error";
      inflateEnd(&z);
      throw InputError(what + ": a broken gzip file (" + why + ")");
    }
  }
  const bool trailing = z.avail_in > 0 || left > 0;
  inflateEnd(&z);
  if (trailing) throw InputError(what + ": a gzip file with bytes after its stream (two files in one?)");
  if (out.size() > max_bytes) throw InputError(too_big(what, "a gzip file", max_bytes));
  return out;
}

std::string unxz(const std::string& in, const std::string& what, std::size_t max_bytes) {
  lzma_stream z = LZMA_STREAM_INIT;
  // The decoder's memory is bounded too: xz -9's dictionary needs 65 MiB; a header may ask for 1.5 GiB.
  constexpr std::uint64_t kDecoderMemory = std::uint64_t(128) << 20;
  if (lzma_stream_decoder(&z, kDecoderMemory, LZMA_CONCATENATED) != LZMA_OK)
    throw InputError(what + ": cannot start an xz decoder");
  std::string out;
  z.next_in = reinterpret_cast<const uint8_t*>(in.data());
  z.avail_in = in.size();
  lzma_ret rc = LZMA_OK;
  while (rc != LZMA_STREAM_END) {
    if (out.size() > max_bytes) {
      lzma_end(&z);
      throw InputError(too_big(what, "an xz file", max_bytes));
    }
    const std::size_t have = out.size();
    out.resize(have + kChunk);
    z.next_out = reinterpret_cast<uint8_t*>(&out[have]);
    z.avail_out = kChunk;
    rc = lzma_code(&z, z.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
    out.resize(have + kChunk - z.avail_out);
    if (rc != LZMA_OK && rc != LZMA_STREAM_END) {
      lzma_end(&z);
      const char* why = rc == LZMA_BUF_ERROR || rc == LZMA_DATA_ERROR ? "the stream ends early or is corrupt"
                        : rc == LZMA_FORMAT_ERROR                     ? "not an xz stream"
                        : rc == LZMA_MEM_ERROR                        ? "out of memory"
                        : rc == LZMA_MEMLIMIT_ERROR ? "its decoder would need more than 128 MiB; xz -9's needs 65"
                                                                      : "decoder error";
      throw InputError(what + ": a broken xz file (" + why + ")");
    }
  }
  lzma_end(&z);
  if (out.size() > max_bytes) throw InputError(too_big(what, "an xz file", max_bytes));
  return out;
}

bool starts_with(const std::string& s, std::initializer_list<unsigned char> magic) {
  if (s.size() < magic.size()) return false;
  std::size_t i = 0;
  for (const unsigned char m : magic)
    if (static_cast<unsigned char>(s[i++]) != m) return false;
  return true;
}

}  // namespace

std::string results_text(std::string bytes, const std::string& what, std::size_t max_bytes) {
  if (starts_with(bytes, {0x1f, 0x8b})) return gunzip(bytes, what, max_bytes);
  if (starts_with(bytes, {0xfd, '7', 'z', 'X', 'Z', 0x00})) return unxz(bytes, what, max_bytes);
  return bytes;
}

std::string read_results_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return results_text(std::move(ss).str(), path);
}

Results load_results(const std::string& path) {
  const std::string text = read_results_text(path);
  try {
    return parse_results(text);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

namespace {
// nlohmann's DOM builder behind limits a results file never reaches: nesting, a string's length.
// A hostile file (arrays nested 50 million deep took 18 s to refuse; a 100 MB name was carried
// into every table) is refused as it is read, before anything is built from it.
class LimitedDom {
 public:
  explicit LimitedDom(json& root) : dom_(root, /*allow_exceptions=*/false) {}
  std::string why;  // the limit passed, if any

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
  bool string(std::string& v) { return short_enough(v) && dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return deeper() && dom_.start_object(n); }
  bool key(std::string& v) { return short_enough(v) && dom_.key(v); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) { return deeper() && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  bool parse_error(std::size_t pos, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(pos, token, e);
  }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::size_t depth_ = 0;
  bool deeper() {
    if (++depth_ <= kMaxJsonDepth) return true;
    why = fmt::format("nested deeper than {} levels", kMaxJsonDepth);
    return false;
  }
  bool short_enough(const std::string& v) {
    if (v.size() <= kMaxJsonString) return true;
    why = fmt::format("a string of {} characters (at most {})", v.size(), kMaxJsonString);
    return false;
  }
};
}  // namespace

Results parse_results(const std::string& text) {
  json j;
  LimitedDom dom(j);
  const bool ok = json::sax_parse(text, &dom, json::input_format_t::json, /*strict=*/true);
  if (!dom.why.empty()) throw InputError("not a roofbench results file: " + dom.why);
  if (!ok) throw InputError("not valid JSON");
  return j.get<Results>();
}

std::string dump_results(const Results& r) {
  return json(r).dump(2) + "\n";
}

namespace {
bool is_results_file_name(const std::string& name) {
  for (const char* n : kResultsFileNames)
    if (name == n) return true;
  return false;
}
}  // namespace

const BenchmarkResult* compared_form(const std::vector<BenchmarkResult>& all, const BenchmarkResult& b) {
  if (b.compared_with.empty()) return nullptr;
  for (const auto& a : all)
    if (a.base_name() == b.compared_with && a.params == b.params) return &a;
  return nullptr;
}

std::string results_file_in(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* n : kResultsFileNames)  // a file, or a link to one (a run folder shows its files so)
    if (fs::is_regular_file(fs::path(dir) / n, ec)) found.push_back(n);
  if (found.size() > 1)
    throw InputError(fmt::format("folder '{}' holds {}: which is its run's cannot be told (keep one)", dir,
                                 fmt::join(found, " and ")));
  return found.empty() ? "" : (fs::path(dir) / found[0]).string();
}

std::vector<std::string> results_files_under(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory() && it->path().filename().string().rfind('.', 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_results_file_name(it->path().filename().string()))
      found.push_back(it->path().string());
  }
  if (ec) throw InputError("cannot read folder '" + dir + "': " + ec.message());
  std::sort(found.begin(), found.end());
  for (std::size_t i = 1; i < found.size(); ++i)
    if (fs::path(found[i]).parent_path() == fs::path(found[i - 1]).parent_path())
      results_file_in(fs::path(found[i]).parent_path().string());  // throws, naming both
  return found;
}

std::string results_path(const std::string& file_or_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(file_or_dir, ec)) {
    std::string p = results_file_in(file_or_dir);
    if (p.empty())
      throw InputError("folder '" + file_or_dir + "' holds no results.json (nor results.json.xz or .gz)");
    return p;
  }
  return file_or_dir;
}

}  // namespace roofbench
