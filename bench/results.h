#pragma once
// The results model: what one `roofbench run` measured. results.json is this model serialized;
// every printer (console, SVG, HTML, Markdown, compare) reads it and nothing else.
// The schema is documented in docs/results-schema.md; bump kResultsSchema on any breaking change.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/stats.h"
#include "roofbench/types.h"
#include "roofbench/verify.h"
#include "roofbench/waves.h"
#include "roofbench/work.h"

namespace roofbench {

inline constexpr const char* kResultsSchema = "roofbench.results.v1";


// Timed samples of one benchmark and the conditions they were taken in.
struct Measurement {
  std::vector<double> samples_s;  // every timed sample, seconds
  SampleStats stats;              // over samples_s
  int warmup_runs = 0;
  std::string stop_reason;
  std::string timer;   // "cuda-events" or "steady-clock"
  std::string launch;  // GPU: how each sample started (bench/launch_timing.h); "" on the CPU
  bool cold_cache = true;
  std::optional<double> clock_before_hz, clock_after_hz;  // SM / core clock, where readable
  // The clock read after every sample (Device::sample_clock_hz), same length as samples_s, or
  // empty where it is not readable; the reading after the warm-up is the reference.
  std::vector<double> sample_clock_hz;
  std::optional<double> clock_reference_hz;
  std::vector<int> throttled;                   // indices of samples read below the throttle fraction of the reference
  std::vector<std::string> clock_limits;        // every limit seen after a sample (NVML's reasons, the CPU's cpu_quota)
  // Per sample, where read (same length as samples_s, or empty): the clock-limit reasons seen
  // with its clock ("" for none, else joined by ","), and its power and energy (bench/power.h),
  // read just before and just after its timed run: the energy counter's difference across it, the
  // host's wall time between the two readings, and the power and temperature after it.
  std::vector<std::string> sample_clock_limits;
  std::vector<double> sample_energy_j, sample_window_s;
  // How often the energy counter advanced when it was read (Device::energy_counter_interval_s,
  // probed once per process): a window shorter than a few of these holds a whole update or none.
  std::optional<double> energy_interval_s;
  // The energy counter read across a run of the kernel back to back (no flushes): the sustained
  // pass's hold before the samples ("hold"), or, where the samples are too brief for the counter,
  // an energy pass after them ("pass", MeasureOptions::energy_pass_s). Its difference, its wall
  // time, its runs and their summed times (how busy it kept the device).
  struct EnergyRun {
    std::string kind;  // "hold" or "pass"
    double seconds = 0, joules = 0, busy_s = 0;
    int runs = 0;
    // An energy pass's counter read after its batches, between two changes it saw: their
    // difference (exact: whole updates, none cut), the time between the two readings that saw
    // them, how late either can have been seen (the time since the reading before it began: the
    // window's time is within that), and the changes seen after the first.
    struct Window {
      double seconds = 0, joules = 0, gap_s = 0;
      int changes = 0;
    };
    std::optional<Window> window;
  };
  std::optional<EnergyRun> energy_run;
  std::vector<double> sample_power_w, sample_temperature_c;
  double held_s = 0;      // a sustained pass: seconds it ran back to back before its samples (MeasureOptions::hold_s)
  double cooldown_s = 0;  // seconds waited after throttled samples for the clock to recover (--cooldown)
  // --untrusted (MeasureOptions::untrusted): fresh inputs before every sample, and how many of the
  // samples were checked against the reference after they were timed.
  bool fresh_inputs = false;
  int spot_checks = 0;
  // With --placements N > 1: how many of samples_s (in order) each fresh instance took; empty
  // when the benchmark ran on one instance.
  std::vector<int> placement_samples;
  // Where the sampling step's wall time went, by part (kSamplingParts): what a sample costs
  // beyond its kernel, so that a run slow for its samples says why. Summed over placements.
  std::map<std::string, double> sampling_s;
};

// The parts of the sampling step that Measurement::sampling_s times: a sustained pass's hold; the
// warm-up runs; fresh inputs (--untrusted); the cache flushes; the device's readings around the
// samples (clocks, power, temperature, energy, clock limits) and the stop rules' statistics; the
// timed runs as the host waits for them (launch, the hold they queue behind, the readings taken
// while they run, the wait, the timer's read); waits for a throttled clock (--cooldown); spot
// checks (--untrusted); the energy counter's probe and the energy pass after the samples.
inline constexpr const char* kSamplingParts[] = {"hold",     "warmup",   "inputs", "flush", "readings",
                                                 "runs",     "cooldown", "checks", "energy"};

// Where a benchmark sits on the roofline (roofline/model.h computes it).
struct Placement {
  double flop_per_s = 0;
  double bytes_per_s = 0;
  std::optional<double> intensity;              // FLOP/byte; absent when the kernel does no FLOPs
  std::optional<double> attainable_flop_per_s;  // min(peak, I x BW); absent when no FLOPs
  double roof_pct = 0;                          // achieved / attainable, in percent
  std::string bound;                            // "memory", "compute", "transcendental" or "launch"
  std::string compute_ceiling;                  // ceiling names used
  std::string bandwidth_ceiling;
  // Kernels that declare math calls: the transcendental ceilings used ("cpu_sin, cpu_cos") and
  // the FLOP rate their roof allows, FLOPs / Σ calls_f / rate_f (absent when no FLOPs).
  std::string transcendental_ceiling;
  std::optional<double> transcendental_flop_per_s;
  // Kernels that declare launches: the launch ceilings used ("launch_omp_region") and the time
  // their launches need at those rates, Σ launches_p / rate_p.
  std::string launch_ceiling;
  double launch_time_s = 0;
  // The time the binding roof allows for the declared work: max(bytes / BW, FLOPs / peak,
  // Σ calls_f / rate_f, Σ launches_p / rate_p). roof_pct = model_time_s / measured time; Lessons predict speedups from it.
  double model_time_s = 0;
  // The run's own noise around this point, relative: the kernel's IQR / median plus the largest
  // upside of the ceilings its roof is made of (how much faster than the roof a ceiling's fastest
  // sample ran: roofline/model.h, ceiling_upside).
  double noise = 0;
  // Above its roof by more than max(kRoofSlack, noise) (roofline/model.h): a number faster than
  // the machine, refused. Derived by the model on every load, like everything here.
  bool implausible = false;
  // Whose work placed it: "declared" (its Work), or "counted" (it declares no bytes, and CUPTI
  // counted them at its level: roofline/model.h, with_counted_work).
  std::string work = "declared";
  // Which pass of its roofs placed it, where a roof of it was also measured sustained
  // (CeilingSpec::sustained): "burst", or "sustained" when its samples' clock was nearer the
  // sustained pass's (roofline/model.h, clock_matched). "" where no roof of it has two.
  std::string roof_clock;
  // A pipelined form (Work::pipelined) measured beside its serial form at the same parameters
  // (compared_with): its overlap efficiency against its passes as they ran, not as its roofs allow.
  // The copies at their measured link ceilings; the other passes at what the serial form's median
  // leaves after those copies, shared among them as their roofs share it; the pipeline's time from
  // those passes (roofline/model.cpp, combine_passes) over its median. Absent for other forms, and
  // where the serial form ran no slower than its copies alone.
  std::optional<double> overlap_measured;
};


// CUPTI Activity records (CONCURRENT_KERNEL and MEMCPY) of a few more runs of one benchmark,
// apart from the timed samples and the profiled passes: the GPU's own start and end stamps of
// each kernel and copy, so launch overhead and the time before the first one starts are left out.
// A cross-check of the event timing, never a source of the benchmark's number; and the evidence
// that a pipelined form's copies and kernels really ran at once, on several streams.
struct KernelTrace {
  std::vector<double> span_s;        // per run: the last kernel's or copy's end - the first one's start
  std::vector<double> busy_s;        // per run: the time at least one of its kernels or copies ran
  std::vector<std::string> kernels;  // the kernels of one run, in launch order (the same every run)
  std::string error;                 // non-empty: no trace; one line, why
  std::vector<double> overlap_s;     // per run: the time two or more of them ran at once
  std::size_t copies = 0;            // the copies of one run (host-device, device-device)
  std::size_t streams = 0;           // the streams its kernels and copies ran on, in run 1
  bool ok() const { return error.empty() && !span_s.empty(); }
};

// Hardware counters of one benchmark, from a separate profiled pass (never the timed one):
// the metric values CUPTI evaluated for one run of the kernel, and what the model derives from
// them (roofline/cupti/metrics.h: derive, at collection and on every load through apply_model).
// Counter-measured work sits beside the declared work.
struct Counters {
  std::vector<std::string> metrics;      // collected, in the order asked for
  std::map<std::string, double> values;  // metric -> value for the profiled run
  int passes = 0;                        // replay passes CUPTI needed for them
  std::string set;                       // "default" (chosen from the kernel) or "user" (--metrics)
  std::string error;                     // non-empty: the collection failed; one line, why
  // Derived from `values` by the model (never read from a file):
  std::optional<double> flops;                // measured FLOPs: FP instructions or tensor ops
  std::string flops_formula;                  // which counters, e.g. "fadd + fmul + 2·ffma (SASS, per thread)"
  std::map<Level, double> bytes;              // by level: l1, l2, dram
  std::optional<double> time_s, sm_clock_hz;  // the profiled run's duration and SM clock
  std::optional<double> threads_per_instruction;  // 32 when no lane ever idles
  std::optional<double> branch_uniformity;        // share of branch targets taken by all active threads alike
  std::optional<KernelTrace> trace;               // the Activity API's kernel records, where taken
  bool ok() const { return error.empty() && !values.empty(); }
  // FLOP per byte at each level where both are known and the bytes are non-zero.
  std::map<Level, double> intensity() const;
};

// The steps of a benchmark's run that BenchmarkResult::host_s times, in the order they run.
inline constexpr const char* kHostSteps[] = {"make", "prepare", "verify", "sample", "recheck", "after"};

struct BenchmarkResult {
  std::string name;  // family/variant/precision/params
  std::string family, variant;
  Precision precision = Precision::fp32;
  std::string base_name() const { return family + "/" + variant + "/" + to_string(precision); }  // as Variant's
  Backend backend = Backend::cpu;
  Unit unit = Unit::simd;     // the compute unit it runs on
  Level level = Level::dram;  // the memory level its bytes are declared at
  bool vendor_reference = false;  // the vendor library (cuBLAS, OpenBLAS) the ladder is measured against
  // The precision its arithmetic runs in when that differs from its data's (FP16 inputs
  // accumulated in FP32 on CUDA cores run on the FP32 pipe): picks the compute roof.
  std::optional<Precision> math;
  Params params;
  double flops = 0;  // declared
  double bytes = 0;  // declared: the fewest bytes it must move
  // declared: calls of each math function ("sin": n), placed against the transcendental ceilings
  std::map<std::string, double> transcendentals;
  // declared: launches by each path ("kernel", "graph_node", "omp_region"), placed against the
  // launch ceilings
  std::map<std::string, double> launches;
  // declared: a form that runs as several passes one after another, each pass's share of the
  // work (they add up to the totals above); empty for one kernel
  std::vector<WorkPhase> phases;
  // declared: the passes run as a pipeline over this many chunks (Work::pipelined); 0: one after
  // another
  double pipeline_chunks = 0;
  double pipeline_streams = 0;  // the streams the chunks take turns on; 0: as many as it takes
  // the bandwidth ceiling of the link the passes that name a ceiling share both ways at once
  // (Work::shared_link: "pcie_duplex_pinned"); empty: none
  std::string pipeline_link;
  std::string work;  // the one-line derivation of flops and bytes
  Verification verification;
  // The check again after the timed samples, on fresh inputs from another seed (prepare, run,
  // verify): a kernel whose output did not follow its inputs (a cached result, a stale buffer,
  // work still pending when run() returned) fails it. Absent: not taken (timing only, a file
  // written before it, or a benchmark that failed earlier).
  std::optional<Verification> recheck;
  std::string error;                       // non-empty: failed, and carries no numbers
  std::optional<Measurement> measurement;  // present only for verified kernels
  std::optional<Placement> placement;
  std::optional<WaveModel> waves;  // fixed-tile GPU kernels
  // The lesson families: the base name (family/variant/precision) of the form this one is
  // measured against at the same parameters, e.g. a fused kernel against its unfused chain.
  std::string compared_with;
  std::optional<Counters> counters;  // `run --counters` / `--metrics` on a GPU
  std::vector<std::string> warnings;
  // The wall time of each step of the benchmark's run, seconds, summed over its placements:
  // "make" (the instance: allocations), "prepare" (inputs, uploads and one run), "verify" (the
  // reference check), "sample" (warm-ups and timed samples, flushes included), "recheck" (fresh
  // inputs, one run and the check again) and "after" (the counter pass). Where a run's time outside its timed samples
  // goes; empty in older files.
  std::map<std::string, double> host_s;  // keys: kHostSteps
  Precision roof_precision() const { return math.value_or(precision); }
  // Declared timing_only by its author (a user's kernel with no reference): it carries numbers
  // and a placement, but nothing checked them, and every report says so.
  bool timing_only = false;
  bool verified() const { return verification.ok && error.empty(); }
  // Placed above its roof by more than the run's noise (Placement::implausible): it has numbers,
  // but no report draws them as a real point and no verdict calls them FASTER.
  bool implausible() const { return placement && placement->implausible; }
  // It ran and carries numbers: verified, or timing only.
  bool measured() const { return error.empty() && (verification.ok || timing_only); }
};

// The form a lesson's benchmark is measured against among `all`: its compared_with at the same
// parameters; nullptr for a benchmark that names none, or whose form is not there.
const BenchmarkResult* compared_form(const std::vector<BenchmarkResult>& all, const BenchmarkResult& b);

// A value quoted for comparison (datasheet) or computed from the hardware (theoretical).
struct ReferenceValue {
  double value = 0;
  std::string source;
};

struct Ceiling {
  std::string name;  // "dram_triad", "fp32_fma"
  CeilingKind kind = CeilingKind::bandwidth;
  std::optional<Level> level;          // bandwidth only
  std::optional<Precision> precision;  // compute only
  std::optional<Unit> unit;            // compute and transcendental
  // transcendental: the math function ("sin", "exp", ...); launch: the launch path ("kernel",
  // "graph_node", "omp_region"); as kernels declare them
  std::optional<std::string> function;
  double value = 0;                    // measured: B/s or FLOP/s, the best of the passes
  std::string value_unit;              // "B/s" or "FLOP/s"
  std::string method;                  // how it was measured
  std::string benchmark;               // the benchmark that measured it
  std::optional<ReferenceValue> datasheet;
  std::optional<ReferenceValue> theoretical;
  Measurement measurement;                     // at the start of the run
  std::optional<Measurement> measurement_end;  // again at its end, after the kernels (`run` only)
  double value_start = 0;                      // the rate of each pass; `value` is the highest
  std::optional<double> value_end;
  // Once more, after the end pass, when a kernel of the run came out above it beyond the noise
  // (`run` only): a roof measured while the machine was loaded is measured again before a kernel
  // is refused as faster than the machine. Absent when not needed.
  std::optional<Measurement> measurement_again;
  std::optional<double> value_again;
  // Once more in samples as brief as the kernel's that came out above it, its repeat count scaled
  // down (CeilingSpec::repeat_param; `run` only): a machine that throttles long samples and not
  // brief ones has the higher roof for brief kernels. `benchmark_brief` is the benchmark that
  // measured it, another size of `benchmark` ("ceiling/fp32_fma/fp32/threads:2/values:192/
  // iters:22753"). Absent when not needed, or where the ceiling's work does not scale.
  std::optional<Measurement> measurement_brief;
  std::optional<double> value_brief;
  std::optional<std::string> benchmark_brief;
  // A sustained ceiling's (CeilingSpec::sustained) pass held under load first (its
  // Measurement::held_s): the roof where the clock settles under the power cap, beside the burst
  // roof of the start pass. Absent for the others and when the run held none (--sustain 0).
  std::optional<Measurement> measurement_sustained;
  std::optional<double> value_sustained;
  // The pass `value` comes from: the start, end, again, brief or sustained pass, whichever was
  // fastest.
  const Measurement& roof_pass() const;
  std::vector<std::string> warnings;
  // bandwidth: may be its level's roof (CeilingSpec::level_roof); false: used by name only
  bool level_roof = true;
  // A vendor routine's ceiling (CeilingSpec::reference_for): the suite's own ceiling it is the
  // reference for ("dram_copy").
  std::optional<std::string> reference_for;
};

// A name results.json carries from a declaration (a math function, a launch path, a pass's or a
// shared link's ceiling): [a-z0-9_.], at most kMaxDeclaredName characters. The reader refuses any
// other, so the registry refuses to declare one (register_variant).
inline constexpr std::size_t kMaxDeclaredName = 32;
bool valid_declared_name(const std::string& s);

struct RidgePoint {
  std::string compute_ceiling, bandwidth_ceiling;
  double intensity = 0;  // FLOP/byte where the two roofs meet
};

// A registered benchmark this device cannot run (code for another GPU architecture): left out
// of the run rather than failed.
struct NotRun {
  std::string benchmark;  // family/variant/precision
  std::string why;        // one line
};

// A run that did not finish: stopped (a signal, a time limit) or still going when the file was
// written. Such a file holds every benchmark that finished, whole.
struct Partial {
  std::size_t completed = 0;  // benchmarks (ceiling passes included) that finished
  std::size_t planned = 0;    // benchmarks the run set out to take
  std::string reason;         // "running" (a snapshot written after each benchmark), "stopped by SIGTERM"
};

struct Results {
  std::string schema = kResultsSchema;
  nlohmann::json provenance = nlohmann::json::object();  // version, git, command line, time, host
  nlohmann::json device = nlohmann::json::object();      // "kind", "name" and per-kind properties
  nlohmann::json settings = nlohmann::json::object();    // how the run measured
  // Counter collection for the run: null when not asked for; else whether counters were
  // available and, when not, the one-line reason and how to fix it (docs/results-schema.md).
  nlohmann::json counters = nullptr;
  std::vector<Ceiling> ceilings;
  std::vector<RidgePoint> ridge_points;
  std::vector<BenchmarkResult> benchmarks;
  std::vector<NotRun> not_run;  // written only when some were left out
  std::optional<Partial> partial;  // absent: the run finished
};

void to_json(nlohmann::json& j, const Results& r);
void from_json(const nlohmann::json& j, Results& r);  // throws InputError with a one-line reason

// What a results file may hold; the reader refuses more (InputError), before it builds anything
// from it where it can. Far above any run's (the H200's full run: 237 benchmarks, 31 ceilings,
// nesting 6, its longest string 437 characters), and low enough that any file is read
// or refused in a few seconds (tests/scripts/test_hostile_files.py).
inline constexpr std::size_t kMaxBenchmarks = 1000;
inline constexpr std::size_t kMaxCeilings = 1000;
inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxJsonString = 64 * 1024;

// A results file may be stored compressed, gzip or xz (committed baselines are results.json.xz;
// a CI artifact often arrives as .json.gz): the reader knows it by its first bytes, whatever its
// name, and decompresses it whole in memory first. No results file comes near this; a file that
// decompresses past it (a decompression bomb) is refused as it decompresses.
inline constexpr std::size_t kMaxResultsBytes = std::size_t(512) << 20;
// The names a run folder's results file may have: as written, and compressed.
inline constexpr const char* kResultsFileNames[] = {"results.json", "results.json.xz", "results.json.gz"};

// Reads and validates a results file; throws InputError (missing, unreadable, malformed,
// wrong schema, a broken or oversized compressed stream) with a one-line message naming the file.
Results load_results(const std::string& path);
// The same for the text of one (tests/fuzz/fuzz_results.cpp feeds it arbitrary bytes).
Results parse_results(const std::string& text);
// The JSON text of a results file's bytes: decompressed when they are gzip or xz (by their
// magic), else as they are. Throws InputError, naming `what`, for a broken compressed stream or
// one that decompresses past max_bytes.
std::string results_text(std::string bytes, const std::string& what, std::size_t max_bytes = kMaxResultsBytes);
// A file's JSON text, through results_text; throws InputError when it cannot be read.
std::string read_results_text(const std::string& path);
std::string dump_results(const Results& r);  // pretty JSON text, ends with a newline
// The results file of a run folder (one of kResultsFileNames), or "" when it holds none. Throws
// InputError when it holds more than one: which of them is the run's cannot be told.
std::string results_file_in(const std::string& dir);
// A results file given as itself or as the folder that holds it (results_file_in).
std::string results_path(const std::string& file_or_dir);
// Every results file (kResultsFileNames) under a folder, recursively, sorted by path; a run
// folder's hidden .roofbench/ (the generations its visible files link to: the same run again) is
// left out. Throws InputError when the folder cannot be read, or one of its folders holds two.
std::vector<std::string> results_files_under(const std::string& dir);

}  // namespace roofbench
