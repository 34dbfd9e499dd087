#pragma once
// Verify, warm up, then take timed samples, each after a cache flush (cold) by default.
#include <csignal>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/device.h"
#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

// When to stop sampling. Sampling stops as soon as the samples are precise enough: their
// relative IQR (IQR / median) is at most `target_rel_iqr`, with at least `min_samples` samples
// taken over at least `min_time_s` of wall time (elapsed, flushes included: a 5 us kernel would
// need 20,000 samples to add up 0.1 s of its own time, and stopped at the sample cap instead). A noisy benchmark stops
// instead when its budget of wall time runs out (never before kMinSamples samples) or at `max_samples`. Each result
// records why it stopped.
struct MeasureOptions {
  bool cold_cache = true;
  int warmup_runs = 2;           // untimed runs first (clocks ramp up, code and TLBs warm)
  int min_samples = 20;          // enough for a rank test to see a 5% change (see roofbench compare)
  int max_samples = 2000;
  double target_rel_iqr = 0.01;  // stop once IQR / median <= this...
  double min_time_s = 0.1;       // ...and sampling has gone on this long (wall time)
  double max_time_s = 5.0;       // the budget per benchmark: wall time, flushes and clock readings included
  double throttle_fraction = 0.9;  // a sample whose clock reads below this x the reference is flagged
  // After a throttled sample, wait up to this long for the clock to read above the throttle
  // fraction again before the next sample (polled every 10 ms; Measurement::cooldown_s).
  double cooldown_s = 0;
  // Before the warm-up, run the kernel back to back for this long, untimed: a sustained ceiling
  // pass (CeilingSpec::sustained), whose samples then see the clock the power cap and the heat
  // settle at (Measurement::held_s).
  double hold_s = 0;
  // Where the samples are too brief for the energy counter (energy_summary, bench/power.h) and
  // 10 of its updates take at most this long, run the kernel back to back for that long after the
  // samples, the counter read across it (Measurement::energy_run): RAPL's 1 ms updates need 10 ms,
  // NVML's 100 ms ones a second (--energy-pass).
  double energy_pass_s = 0.1;
  // The launches one run makes (Work::launches, set per benchmark by the harness; 1 where none are
  // declared): a back-to-back batch (the hold, the energy pass) holds at most 16 / this many runs.
  int launches_per_run = 1;
  // False: every GPU sample starts after a synchronize, as under a profiler that serializes
  // launches (ncu, compute-sanitizer), where a stream held by a blocking kernel only times out.
  bool hide_launch = true;
  std::uint64_t seed = 20261121;
  // Fresh instances (fresh allocations) each benchmark is measured on in turn, the sample and
  // time limits split between them. Where memory lands decides a bandwidth-bound kernel's speed
  // for as long as its buffers live (docs/measurement.md: a 7-15% spread between allocations on a
  // 2-core VM, 2-8% within one); several placements average that luck instead of keeping one
  // draw for the whole benchmark. Each instance is verified before it is timed.
  int placements = 1;
  // Stop once the noise target is out of reach: after 2 x min_samples, when even the 95%
  // distribution-free lower bound of the IQR (noise_floor_rel_iqr, bench/stats.h) is above the
  // target. More samples measure a spread more precisely; they do not make it smaller.
  bool stop_at_noise_floor = true;
  // For kernels nobody has read (an optimisation loop's, `python -m roofbench score`): before
  // every warm-up and timed sample, fresh inputs from a seed drawn at random (std::random_device),
  // so that no run repeats inputs the kernel has seen and a cache of its results never hits; and timed
  // samples chosen at random checked against the reference afterwards (untimed), so that a kernel
  // that tells a timed call from a checked one cannot return less work while timed. Sample i
  // (from 0) is checked with probability min(1, 2 / (i + 1)): the first two always, about
  // 2 + 2 ln(n / 2) of n in all. Ceilings, the suite's own loops, are measured as always.
  bool untrusted = false;

  static constexpr int kMinSamples = 5;  // the budget never stops a benchmark with fewer

  static MeasureOptions full() { return {}; }
  // `run --profile`: one warm-up and one sample, launches not held, for a run under ncu or nsys.
  static MeasureOptions profile() {
    MeasureOptions o;
    o.warmup_runs = 1;
    o.min_samples = o.max_samples = 1;
    o.min_time_s = 0;
    o.hide_launch = false;
    o.energy_pass_s = 0;
    return o;
  }
  static MeasureOptions quick() {
    MeasureOptions o;
    o.warmup_runs = 1;
    o.min_samples = 10;
    o.max_samples = 500;
    o.min_time_s = 0.02;
    o.max_time_s = 0.75;
    return o;
  }
  nlohmann::json to_json() const;
};

// prepare(seed) → run → synchronize: the run a check reads (run_benchmark times it apart from
// the check). Throws whatever the instance throws.
void prepare_and_run(Device& dev, Instance& inst, std::uint64_t seed);
// prepare_and_run, then verify. Throws whatever the instance throws.
Verification prepare_and_verify(Device& dev, Instance& inst, std::uint64_t seed);
// The seed of the second check, after the timed samples (BenchmarkResult::recheck): fresh inputs.
std::uint64_t recheck_seed(std::uint64_t seed);

// A run asked to stop (SIGTERM, SIGINT, a time limit): the benchmark being measured stops at
// its next sample and gets no number, and the run writes what finished, marked partial.
// request_stop is async-signal-safe.
void request_stop(int signal);
int stop_signal();  // the signal that asked, or 0
void clear_stop();  // for tests, which stop runs on purpose
// What a stop by `sig` is called in results and messages: "stopped by SIGTERM".
std::string stopped_by(int sig);

// SIGTERM (timeout, a scheduler) and SIGINT (Ctrl-C) go to `handler` while this lives; the
// previous handlers come back after.
class StopSignalHandler {
 public:
  explicit StopSignalHandler(void (*handler)(int));
  ~StopSignalHandler();
  StopSignalHandler(const StopSignalHandler&) = delete;
  StopSignalHandler& operator=(const StopSignalHandler&) = delete;

 private:
  struct sigaction old_term_ {}, old_int_ {};
};
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Warm-up and timed samples of an already verified instance. Throws Interrupted once a stop was
// requested.
Measurement measure(Device& dev, Instance& inst, const MeasureOptions& opt, Launch launch = Launch::hidden);

// Repetitions (--benchmark_repetitions) add samples to one measurement: the statistics cover all
// of them, and the per-sample clocks stay aligned with the samples or go when one had none.
void merge_measurements(Measurement& into, const Measurement& m);

// What a reader of the numbers should know about how they were taken: throttled samples, and a
// benchmark that ran out of budget before reaching the noise target.
std::vector<std::string> measurement_warnings(const Measurement& m, const MeasureOptions& opt);

// A fresh BenchmarkResult carrying the variant's declarations for `params`.
BenchmarkResult declare(const Variant& v, const Params& params);

// What a caller does with a benchmark right after its timed samples, while its instance lives:
// a run's counter pass (bench/counters.h) and progress line. Not called for a failed benchmark.
using AfterMeasure = std::function<void(Instance&, BenchmarkResult&)>;

// The whole sequence for one benchmark, the one that runs and tests both take: declare, make,
// the wave model, verify and (only if verified) measure, warnings, then `after`. Exceptions from
// the kernel become an error on the result; only Interrupted is thrown (a stop was requested).
BenchmarkResult run_benchmark(Device& dev, const Variant& v, const Params& params, const MeasureOptions& opt,
                              const AfterMeasure& after = {});

}  // namespace roofbench
