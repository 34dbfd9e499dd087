#include "bench/harness.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <random>
#include <thread>

#include "bench/cpu_info.h"
#include "bench/power.h"

namespace roofbench {

nlohmann::json MeasureOptions::to_json() const {
  return {{"cold_cache", cold_cache},
          {"warmup_runs", warmup_runs},
          {"min_samples", min_samples},
          {"max_samples", max_samples},
          {"target_rel_iqr", target_rel_iqr},
          {"min_time_s", min_time_s},
          {"max_time_s", max_time_s},
          {"throttle_fraction", throttle_fraction},
          {"cooldown_s", cooldown_s},
          {"hide_launch", hide_launch},
          {"seed", seed},
          {"placements", placements},
          {"stop_at_noise_floor", stop_at_noise_floor},
          {"untrusted", untrusted}};
}

std::uint64_t recheck_seed(std::uint64_t seed) {
  // Another seed, the same for every benchmark of a run; a 32-bit seed stays one (NumPy's
  // legacy seeding takes no more).
  return seed ^ 0x9E3779B9ull;
}

void prepare_and_run(Device& dev, Instance& inst, std::uint64_t seed) {
  whole_openmp_teams();
  inst.prepare(seed);
  inst.run();
  dev.synchronize();
}

Verification prepare_and_verify(Device& dev, Instance& inst, std::uint64_t seed) {
  prepare_and_run(dev, inst, seed);
  return inst.verify();
}

namespace {
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "request_stop runs in a signal handler");
}  // namespace

void request_stop(int signal) {
  g_stop_signal.store(signal == 0 ? SIGTERM : signal);
}
int stop_signal() {
  return g_stop_signal.load();
}
void clear_stop() {
  g_stop_signal.store(0);
}
std::string stopped_by(int sig) {
  return sig == SIGINT    ? "stopped by SIGINT"
         : sig == SIGTERM ? "stopped by SIGTERM"
                          : fmt::format("stopped by signal {}", sig);
}

StopSignalHandler::StopSignalHandler(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGINT, &sa, &old_int_);
}
StopSignalHandler::~StopSignalHandler() {
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGINT, &old_int_, nullptr);
}

namespace {
void throw_if_stopped() {
  if (const int sig = stop_signal()) throw Interrupted(stopped_by(sig));
}

// Waits, up to opt.cooldown_s, for the clock to read above the throttle fraction of the reference
// again; returns the seconds waited.
double cool_down(Device& dev, const MeasureOptions& opt, double reference_hz) {
  using clock = std::chrono::steady_clock;
  if (!(opt.cooldown_s > 0)) return 0;
  const auto t0 = clock::now();
  auto waited = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  while (waited() < opt.cooldown_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    throw_if_stopped();
    const auto hz = dev.sample_clock_hz();
    if (!hz || *hz >= opt.throttle_fraction * reference_hz) break;
  }
  return waited();
}

// `times` runs of an instance as one: a batch of back_to_back's, launched as one sample.
class Repeated final : public Instance {
 public:
  Repeated(Instance& inner, int times) : inner_(inner), times_(times) {}
  void prepare(std::uint64_t seed) override { inner_.prepare(seed); }
  void run() override {
    for (int i = 0; i < times_; ++i) inner_.run();
  }
  Verification verify() override { return inner_.verify(); }

 private:
  Instance& inner_;
  int times_;
};

// The kernel run back to back for at least `seconds` (no flushes), the energy counter read across
// it where there is one (joules < 0 where not). In batches, each launched as the samples are
// (`launch`: on a GPU queued behind a blocking kernel, the events bracketing the GPU's work alone)
// and timed as one, with a synchronize only between batches: one run at a time, a synchronize
// after each, a kernel of 50 us kept the GPU busy for less than kEnergyBusyShare of the pass (the
// synchronize and the next launch cost 10-15 us), and its pass gave no energy. The first run is
// alone, and its time sizes the batches: as many runs as fit in 4 ms (a pass) or 20 ms (a hold), and at most
// kMaxBatchLaunches / the launches a run declares (a held stream takes only so many before the
// host blocks; a variant that declares none counts as one a run, so an unfused chain of five
// kernels queues 80, far below the queue's depth).
// An energy pass reads the counter after its batches too (energy alone, at most every
// kReadEveryS): between two changes it saw, the difference is whole updates, none cut
// (EnergyRun::Window). It ends once such a window spans kEnergyWindowChanges changes and is timed
// within kEnergyWindowSlack (its batches are short, 4 ms, for that): about 0.4 s on NVML's
// counter, not the 1.1 s ten updates take unaligned.
Measurement::EnergyRun back_to_back(Device& dev, Instance& inst, double seconds, const char* kind, Launch launch,
                                    int launches_per_run) {
  using clock = std::chrono::steady_clock;
  const bool pass = std::string(kind) == "pass";
  const double batch_s = pass ? 0.004 : 0.02;
  constexpr int kMaxBatchLaunches = 16;
  constexpr double kReadEveryS = 0.001;
  Measurement::EnergyRun r;
  r.kind = kind;
  dev.synchronize();
  const auto start = clock::now();
  const std::optional<double> before = dev.energy_j();  // read from 0 on: a change after it is later
  auto now_s = [&start] { return std::chrono::duration<double>(clock::now() - start).count(); };
  int batch = 1;
  // The counter's changes as the pass saw them: the reading's value, when it returned, and how
  // long before that the last reading that did not see it began (the change came in between).
  struct Change {
    double t, e, gap;
  };
  std::vector<Change> changes;
  std::optional<double> last = before;
  double last_began = 0;
  do {
    Repeated runs(inst, batch);
    r.busy_s += dev.time_run(runs, r.runs == 0 ? Launch::synchronous : launch);
    r.runs += batch;
    throw_if_stopped();
    if (r.runs == 1) {
      const int most = std::max(1, kMaxBatchLaunches / std::max(1, launches_per_run));
      const double each = r.busy_s;
      batch = each > 0 ? static_cast<int>(std::clamp(std::floor(batch_s / each), 1.0, static_cast<double>(most))) : 1;
    }
    if (pass && before && now_s() - last_began >= kReadEveryS) {
      const double began = now_s();
      const std::optional<double> e = dev.energy_j();
      const double t = now_s();
      if (e) {
        if (last && *e > *last) {
          changes.push_back({t, *e, t - last_began});
          // The longest window that ends at this change, spans kEnergyWindowChanges or more, and
          // is timed within the slack at both ends (a late reading at one change leaves the others).
          const Change& end = changes.back();
          for (std::size_t i = 0; i + kEnergyWindowChanges < changes.size(); ++i) {
            const double span = end.t - changes[i].t, gap = std::max(changes[i].gap, end.gap);
            if (gap <= kEnergyWindowSlack * span) {
              r.window = Measurement::EnergyRun::Window{span, end.e - changes[i].e, gap,
                                                        static_cast<int>(changes.size() - 1 - i)};
              break;
            }
          }
        }
        last = e;
        last_began = began;
      }
      if (r.window) break;
    }
    r.seconds = now_s();
  } while (r.seconds < seconds);
  r.seconds = now_s();
  const std::optional<double> after = dev.energy_j();
  r.joules = before && after && *after >= *before ? *after - *before : -1;
  return r;
}

void add_limits(std::vector<std::string>& into, const std::vector<std::string>& now) {
  for (const auto& r : now)
    if (std::find(into.begin(), into.end(), r) == into.end()) into.push_back(r);
}
}  // namespace

Measurement measure(Device& dev, Instance& inst, const MeasureOptions& opt, Launch launch) {
  using clock = std::chrono::steady_clock;
  throw_if_stopped();
  if (!opt.hide_launch) launch = Launch::synchronous;
  if (opt.untrusted) launch = Launch::device_wide;  // a side stream's work is timed too
  Measurement m;
  m.timer = dev.timer();
  m.cold_cache = opt.cold_cache;
  // lap("part"): the wall time since the last lap, into m.sampling_s["part"] (kSamplingParts).
  auto mark = clock::now();
  auto lap = [&m, &mark](const char* part) {
    const auto now = clock::now();
    m.sampling_s[part] += std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  if (opt.hold_s > 0) {  // a sustained pass: held back to back first, no flush to let it cool
    m.energy_run = back_to_back(dev, inst, opt.hold_s, "hold", launch, opt.launches_per_run);
    m.held_s = m.energy_run->seconds;
    if (!(m.energy_run->joules >= 0)) m.energy_run.reset();  // no counter: the hold alone
    lap("hold");
  }
  // --untrusted: fresh inputs before every warm-up and sample, their seeds and the choice of the
  // samples checked from the operating system's entropy, which the kernel cannot replay. 32-bit
  // seeds: NumPy's legacy seeding takes no more.
  std::mt19937_64 untrusted_rng(opt.untrusted ? std::random_device{}() : 0u);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  m.fresh_inputs = opt.untrusted;
  for (int i = 0; i < opt.warmup_runs; ++i) {
    if (opt.untrusted) inst.prepare(untrusted_rng() & 0xFFFFFFFFull);
    if (opt.cold_cache) dev.flush_cache();
    // The first warm-up is not held: a kernel whose module is not loaded yet (lazy loading) may
    // wait for the GPU at its first launch, which a held stream would turn into a timeout.
    dev.time_run(inst, i == 0 && launch == Launch::hidden ? Launch::synchronous : launch);
    throw_if_stopped();
  }
  if (opt.warmup_runs > 0) lap("warmup");
  m.launch = dev.launch_method(launch);  // after the warm-up: a hold it gave up on is already said
  m.warmup_runs = opt.warmup_runs;
  m.clock_before_hz = dev.clock_hz();
  // The reference for throttled samples: the cheap per-sample reading, taken once the clock has
  // had the warm-up to ramp up, so that both sides of the comparison are read the same way.
  m.clock_reference_hz = dev.sample_clock_hz();
  bool per_sample_clock = m.clock_reference_hz.has_value();

  // Power and energy around each sample, while the device answers (a series that stops is dropped
  // whole rather than misaligned with the samples).
  bool per_sample_energy = dev.energy_j().has_value();
  bool per_sample_power = true, per_sample_temperature = true;
  lap("readings");

  const auto t0 = clock::now();
  for (;;) {
    lap("readings");  // (and the stop rules' statistics of the sample before)
    if (opt.untrusted) {
      inst.prepare(untrusted_rng() & 0xFFFFFFFFull);
      lap("inputs");
    }
    if (opt.cold_cache) {
      dev.flush_cache();
      lap("flush");
    }
    dev.sample_begins();
    // Before the run only the energy counter: power and temperature are read once a sample, after
    // it (NVML answers each query on its own: on the second H200 a 55 us kernel took 27 samples in
    // 0.2 s, 7 ms of host time a sample).
    const std::optional<double> energy_before = per_sample_energy ? dev.energy_j() : std::nullopt;
    lap("readings");
    const auto w0 = clock::now();
    const double t = dev.time_run(inst, launch);
    const auto w1 = clock::now();
    lap("runs");
    const PowerReading after = dev.power_reading();
    dev.sample_ends();
    throw_if_stopped();
    const int i = static_cast<int>(m.samples_s.size());
    m.samples_s.push_back(t);
    if (per_sample_energy && energy_before && after.energy_j && *after.energy_j >= *energy_before) {
      m.sample_energy_j.push_back(*after.energy_j - *energy_before);
      m.sample_window_s.push_back(std::chrono::duration<double>(w1 - w0).count());
    } else if (per_sample_energy) {
      per_sample_energy = false;
      m.sample_energy_j.clear();
      m.sample_window_s.clear();
    }
    per_sample_power = per_sample_power && after.power_w;
    per_sample_power ? m.sample_power_w.push_back(*after.power_w) : m.sample_power_w.clear();
    per_sample_temperature = per_sample_temperature && after.temperature_c;
    per_sample_temperature ? m.sample_temperature_c.push_back(*after.temperature_c) : m.sample_temperature_c.clear();
    if (per_sample_clock) {
      const std::optional<double> hz = dev.sample_clock_hz();
      if (!hz) {  // it stopped answering: drop the partial series rather than misalign it
        per_sample_clock = false;
        m.sample_clock_hz.clear();
        m.throttled.clear();
      } else {
        m.sample_clock_hz.push_back(*hz);
        if (*hz < opt.throttle_fraction * *m.clock_reference_hz) {
          m.throttled.push_back(i);
          lap("readings");
          m.cooldown_s += cool_down(dev, opt, *m.clock_reference_hz);
          lap("cooldown");
        }
      }
    }
    {  // the limits, whether or not the clock was read (the CPU's cpu_quota needs no clock)
      const std::vector<std::string> limits = dev.clock_limits();
      add_limits(m.clock_limits, limits);
      std::string joined;
      for (const auto& l : limits) joined += (joined.empty() ? "" : ",") + l;
      m.sample_clock_limits.push_back(joined);
    }
    lap("readings");
    if (opt.untrusted && unit(untrusted_rng) * (i + 1) < 2.0) {
      dev.synchronize();
      const Verification v = inst.verify();
      ++m.spot_checks;
      if (!v.ok)
        throw std::runtime_error(fmt::format(
            "spot check of timed sample {} (fresh inputs, checked after it was timed) failed: {}: its timed runs did "
            "not compute what its checked runs did; a number from them would be of work it did not do",
            i + 1, v.detail));
      lap("checks");
    }
    const int n = i + 1;
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    if (n >= opt.max_samples) {
      m.stop_reason = "max_samples";
      break;
    }
    if (n >= opt.min_samples && wall >= opt.min_time_s && n >= 2 &&
        summarize(m.samples_s).rel_iqr() <= opt.target_rel_iqr) {
      m.stop_reason = "noise_target";
      break;
    }
    if (opt.stop_at_noise_floor && n >= 2 * opt.min_samples && wall >= opt.min_time_s &&
        noise_floor_rel_iqr(m.samples_s) > opt.target_rel_iqr) {
      m.stop_reason = "noise_floor";
      break;
    }
    if (wall >= opt.max_time_s && n >= std::min(opt.min_samples, MeasureOptions::kMinSamples)) {
      m.stop_reason = "time_budget";
      break;
    }
  }
  if (!per_sample_clock) m.clock_reference_hz.reset();
  // A device that had to give up hiding the launch part-way (bench/cuda_device.cu) says so.
  if (const std::string now = dev.launch_method(launch); now != m.launch)
    m.launch = now + " (the samples before the change were " + m.launch + ")";
  m.clock_after_hz = dev.clock_hz();
  m.stats = summarize(m.samples_s);
  lap("readings");
  // How often the counter advances, probed once per device and only now: a probe between the
  // warm-up (or the hold) and the samples would leave the GPU idle for it first.
  const bool energy = !m.sample_energy_j.empty() || m.energy_run;
  if (energy) m.energy_interval_s = dev.energy_counter_interval_s();
  // Samples too brief for the energy counter: an energy pass, where 10 of its updates fit in it.
  // Not for --untrusted kernels (the pass repeats one input, unchecked), nor where it would throw
  // away good samples by failing: it is left out instead.
  if (!m.sample_energy_j.empty() && m.energy_interval_s && !m.energy_run && opt.energy_pass_s > 0 && !opt.untrusted) {
    const double need = kEnergyUpdatesPerWindow * *m.energy_interval_s;
    if (!energy_summary(m) && need <= opt.energy_pass_s) {
      try {
        Measurement::EnergyRun run =
            back_to_back(dev, inst, std::min(1.1 * need, opt.energy_pass_s), "pass", launch, opt.launches_per_run);
        if (run.joules >= 0) m.energy_run = run;
      } catch (const Interrupted&) {
        throw;
      } catch (const std::exception&) {
        // (the samples stand; the benchmark's check again after them still runs)
      }
    }
  }
  if (energy) lap("energy");  // the counter's probe (once a device) and the pass, where it ran
  return m;
}

void merge_measurements(Measurement& into, const Measurement& m) {
  const int offset = static_cast<int>(into.samples_s.size());
  const bool clocks = !into.sample_clock_hz.empty() && !m.sample_clock_hz.empty();
  into.samples_s.insert(into.samples_s.end(), m.samples_s.begin(), m.samples_s.end());
  if (clocks) {
    into.sample_clock_hz.insert(into.sample_clock_hz.end(), m.sample_clock_hz.begin(), m.sample_clock_hz.end());
    for (int i : m.throttled) into.throttled.push_back(offset + i);
  } else {
    into.sample_clock_hz.clear();
    into.throttled.clear();
    into.clock_reference_hz.reset();
  }
  add_limits(into.clock_limits, m.clock_limits);
  // Each per-sample series goes on where both have it, else it is dropped whole.
  auto append = [offset](auto& to, const auto& from) {
    if (!to.empty() && !from.empty() && static_cast<int>(to.size()) == offset)
      to.insert(to.end(), from.begin(), from.end());
    else
      to.clear();
  };
  append(into.sample_clock_limits, m.sample_clock_limits);
  append(into.sample_energy_j, m.sample_energy_j);
  append(into.sample_window_s, m.sample_window_s);
  if (!into.energy_interval_s) into.energy_interval_s = m.energy_interval_s;
  append(into.sample_power_w, m.sample_power_w);
  append(into.sample_temperature_c, m.sample_temperature_c);
  into.warmup_runs += m.warmup_runs;
  into.cooldown_s += m.cooldown_s;
  into.spot_checks += m.spot_checks;
  for (const auto& [part, s] : m.sampling_s) into.sampling_s[part] += s;
  into.fresh_inputs = into.fresh_inputs && m.fresh_inputs;
  if (!into.placement_samples.empty() && !m.placement_samples.empty())
    into.placement_samples.insert(into.placement_samples.end(), m.placement_samples.begin(), m.placement_samples.end());
  else
    into.placement_samples.clear();
  into.stop_reason = m.stop_reason;
  into.clock_after_hz = m.clock_after_hz;
  into.stats = summarize(into.samples_s);
}

std::vector<std::string> measurement_warnings(const Measurement& m, const MeasureOptions& opt) {
  std::vector<std::string> w;
  if (!m.throttled.empty() && m.clock_reference_hz) {
    double lowest = *m.clock_reference_hz;
    for (int i : m.throttled) lowest = std::min(lowest, m.sample_clock_hz.at(static_cast<std::size_t>(i)));
    std::string limits;
    for (const auto& r : m.clock_limits) limits += (limits.empty() ? "" : ", ") + r;
    w.push_back(fmt::format("clock: {} of {} samples ({:.0f}%) ran below {:.0f}% of the clock after warm-up ({:.2f} GHz; "
                            "lowest {:.2f} GHz){}",
                            m.throttled.size(), m.samples_s.size(),
                            100.0 * static_cast<double>(m.throttled.size()) / static_cast<double>(m.samples_s.size()),
                            100 * opt.throttle_fraction,
                            *m.clock_reference_hz / 1e9, lowest / 1e9,
                            limits.empty() ? "" : "; limited by " + limits) +
                (m.cooldown_s > 0 ? fmt::format("; {:.2f} s waited for the clock to recover (--cooldown)", m.cooldown_s)
                                  : std::string()));
  }
  // Samples that waited for the cgroup's CPU quota (the CPU's "cpu_quota" limit): slow by the
  // wait, not by the machine; a ceiling's roof among them is measured low.
  const auto quota = std::count_if(m.sample_clock_limits.begin(), m.sample_clock_limits.end(),
                                   [](const std::string& l) { return l.find("cpu_quota") != std::string::npos; });
  if (quota > 0)
    w.push_back(fmt::format("host: {} of {} samples ({:.0f}%) waited for the cgroup's CPU quota: their times hold the "
                            "wait for the next quota period, not the machine's speed",
                            quota, m.samples_s.size(),
                            100.0 * static_cast<double>(quota) / static_cast<double>(m.samples_s.size())));
  if (m.stop_reason == "noise_floor")
    w.push_back(fmt::format("noise: an IQR of {:.1f}% of the median after {} samples, above the {:.1f}% target with "
                            "95% confidence: stopped, since more samples measure a spread, not shrink it",
                            100 * m.stats.rel_iqr(), m.stats.n, 100 * opt.target_rel_iqr));
  if (m.stop_reason == "time_budget" || m.stop_reason == "max_samples") {
    if (m.stats.rel_iqr() > opt.target_rel_iqr)
      w.push_back(fmt::format("noise: stopped at the {} with an IQR of {:.1f}% of the median, above the {:.1f}% target",
                              m.stop_reason == "time_budget" ? fmt::format("{:g} s budget", opt.max_time_s)
                                                             : fmt::format("{}-sample limit", opt.max_samples),
                              100 * m.stats.rel_iqr(), 100 * opt.target_rel_iqr));
  }
  return w;
}

BenchmarkResult declare(const Variant& v, const Params& params) {
  BenchmarkResult r;
  r.name = v.name(params);
  r.family = v.family;
  r.variant = v.variant;
  r.precision = v.precision;
  r.backend = v.backend;
  r.unit = v.unit;
  r.math = v.math;
  r.compared_with = v.compared_with;
  r.level = v.level;
  r.params = params;
  r.flops = v.work.flops(params);
  r.bytes = v.work.bytes(params);
  r.transcendentals = v.work.transcendentals(params);
  r.launches = v.work.launches(params);
  r.phases = v.work.phases(params);
  r.pipeline_chunks = v.work.pipeline_chunks(params);
  r.pipeline_streams = v.work.pipeline_streams(params);
  r.pipeline_link = v.work.pipeline_link();
  r.work = v.work.derivation();
  r.vendor_reference = v.vendor_reference;
  r.timing_only = v.timing_only;
  return r;
}

namespace {
// The limits of one of `opt.placements` instances: the samples and time split evenly, never
// below MeasureOptions::kMinSamples samples each (or the whole minimum, where that is fewer).
MeasureOptions placement_slice(const MeasureOptions& opt) {
  const int k = std::max(1, opt.placements);
  if (k == 1) return opt;
  MeasureOptions o = opt;
  o.min_samples = std::min(opt.min_samples, std::max(MeasureOptions::kMinSamples, (opt.min_samples + k - 1) / k));
  o.max_samples = std::max(o.min_samples, opt.max_samples / k);
  o.min_time_s = opt.min_time_s / k;
  o.max_time_s = opt.max_time_s / k;
  return o;
}
}  // namespace

BenchmarkResult run_benchmark(Device& dev, const Variant& v, const Params& params, const MeasureOptions& opt,
                              const AfterMeasure& after) {
  whole_openmp_teams();  // on the thread that runs and times the kernel (cpu_info.h)
  BenchmarkResult r = declare(v, params);
  std::unique_ptr<Instance> inst;
  const int placements = std::max(1, opt.placements);
  MeasureOptions slice = placement_slice(opt);
  if (v.ceiling) slice.untrusted = false;  // the suite's own loops: measured as in every run
  if (v.warm) slice.cold_cache = false;  // its subject is not memory: never flushed (Variant::warm)
  double launches = 0;  // a back-to-back batch's size (harness.h): every launch a run queues
  for (const auto& [path, n] : v.work.launches(params))
    if (path != "omp_region") launches += n;
  slice.launches_per_run = static_cast<int>(std::clamp(launches, 1.0, 1e6));
  using clock = std::chrono::steady_clock;
  auto t = clock::now();
  auto step = [&](const char* name) {  // the time since the last step, into r.host_s[name]
    const auto now = clock::now();
    r.host_s[name] += std::chrono::duration<double>(now - t).count();
    t = now;
  };
  try {
    for (int p = 0; p < placements; ++p) {
      if (p > 0) inst.reset();  // its memory goes back before the next instance takes some
      inst = v.make(params);
      if (p == 0) r.waves = inst->waves();
      step("make");
      prepare_and_run(dev, *inst, opt.seed);
      step("prepare");
      if (v.timing_only) {  // its author declared no reference: one run, for its errors, and no check
        r.verification.method = "none: declared timing only, with no reference";
      } else {
        Verification ver = inst->verify();
        step("verify");
        if (!ver.ok) {
          r.verification = ver;
          r.measurement.reset();
          r.error = placements == 1 ? "verification failed: " + ver.detail
                                    : fmt::format("verification failed on placement {} of {}: {}", p + 1,
                                                  placements, ver.detail);
          return r;
        }
        if (p == 0) {
          r.verification = ver;
        } else {  // the instances check the same outputs: count each check, keep the worst error
          r.verification.checked += ver.checked;
          r.verification.max_abs_error = std::max(r.verification.max_abs_error, ver.max_abs_error);
        }
      }
      Measurement m = measure(dev, *inst, slice, v.launch());
      step("sample");
      m.placement_samples = {static_cast<int>(m.samples_s.size())};
      if (p == 0) {
        r.measurement = std::move(m);
      } else {
        merge_measurements(*r.measurement, m);
      }
    }
    if (placements == 1) r.measurement->placement_samples.clear();
    if (!v.timing_only) {
      // The check again, on inputs it has not seen: an output that did not follow them (cached,
      // stale, or still being computed when run() returned) gets no number.
      const std::uint64_t seed = recheck_seed(opt.seed);
      r.recheck = prepare_and_verify(dev, *inst, seed);
      step("recheck");
      if (!r.recheck->ok) {
        r.measurement.reset();
        r.error = fmt::format(
            "verification after the timed samples failed, on fresh inputs (seed {}): {}: its output did not follow "
            "its inputs (a cached or stale result, or work still pending when run() returned); a number from it "
            "would be of work it did not do",
            seed, r.recheck->detail);
        return r;
      }
    }
    r.warnings = measurement_warnings(*r.measurement, opt);
    if (v.timing_only)
      r.warnings.insert(r.warnings.begin(),
                        "unverified: declared timing only: no reference checks its output, so its numbers may "
                        "come from a wrong kernel");
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    r.measurement.reset();
    r.error = e.what();
    return r;
  }
  if (after) {
    after(*inst, r);
    step("after");
  }
  return r;
}

}  // namespace roofbench
