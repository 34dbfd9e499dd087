#pragma once
// roofbench compare BASE NEW: a verdict per benchmark from the raw samples of two results files.
//
// Verdicts work on rates (FLOP/s, else B/s, else runs per second), so higher is always better
// and a change is new/base - 1 of the median rate. Each benchmark gets one of:
//   SAME    the bootstrap interval of the change lies inside ±threshold (an equivalence test:
//           "not significant" alone never makes SAME);
//   FASTER  significant (Mann-Whitney U, Benjamini-Hochberg over the whole comparison) and at
//   SLOWER  least the threshold (default 5%) in size;
//   UNSURE  neither: too few samples, an interval that reaches past the threshold, or a change
//           that the machine explains (the clock per sample, or the kernel's own roof measured
//           in the same runs moving just as much); the reason says what to do;
//   FAILED  NEW has no number (verification or launch failed).
// Improvements never fail a comparison; SLOWER, FAILED or IMPLAUSIBLE kernels do (exit 1).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"
#include "bench/stats.h"

namespace roofbench {

//   IMPLAUSIBLE NEW is above its roof by more than its run's noise (roofline/model.h): a number
//           faster than the machine, which no verdict may call FASTER; it fails the comparison.
//           Where only BASE is, the row is UNSURE (never SLOWER) and says to re-baseline.
enum class Verdict { failed, implausible, slower, unsure, faster, same };  // in the order rows are listed
inline constexpr Verdict kVerdicts[] = {Verdict::failed, Verdict::implausible, Verdict::slower,
                                        Verdict::unsure, Verdict::faster,      Verdict::same};
std::string to_string(Verdict v);  // "SLOWER"

// The statistics of a comparison read at most this many samples a side. A results file with
// 1,000,000 samples a benchmark (71 MB) took `compare` 93 s for two benchmarks, nearly all of it in
// the bootstrap; more samples than this are read evenly spaced (every k-th, in the order taken),
// and the row says so. 10,000 a side resolve a median's change far below any threshold.
inline constexpr std::size_t kMaxComparedSamples = 10000;
// And over the whole comparison, at most this many a side: with more kernels than 100, each reads
// kMaxComparedTotal / kernels (at least kMinComparedSamples), so that any file a reader accepts is
// compared in seconds (2,000 kernels of 3,500 samples took 4.4 s before, on 2 cores).
inline constexpr std::size_t kMaxComparedTotal = 1000000;
inline constexpr std::size_t kMinComparedSamples = 500;

struct CompareOptions {
  double threshold = 0.05;  // the smallest change that counts, relative
  // Overrides by benchmark-name regular expression (a family: "^gemm/naive/"); where several
  // match, the largest threshold wins, as asv's regressions_thresholds do.
  std::vector<std::pair<std::string, double>> thresholds;
  double alpha = 0.01;        // for the Benjamini-Hochberg adjusted p-value
  double confidence = 0.95;   // of the bootstrap interval
  int min_samples = 5;        // per side; with fewer, UNSURE
  int resamples = 2000;       // bootstrap
  int change_point_permutations = 499;  // history's change points: shuffles a segment's test draws
  std::size_t max_samples = kMaxComparedSamples;  // a side, per kernel (compare_results lowers it for many kernels)
  bool allow_device_mismatch = false;
  // Judge each kernel by its share of its roof (its rate over the roof it is placed under, both
  // from the same run) rather than by its rate: a machine-wide change of bandwidth or clock moves
  // the roofs of each run as much as the kernels, and cancels. Kernels with no placement on a
  // side are judged by their rate, and say so.
  bool by_roof = false;
  // Per benchmark, the noise between two runs (a calibration file, `roofbench calibrate`): the
  // threshold becomes max(threshold_for(name), noise_sigmas x its noise / sqrt(rounds pooled)).
  std::map<std::string, double> noise;  // benchmark name -> sd of the log rate ratio of two runs
  double noise_sigmas = 3;
  double threshold_for(const std::string& name) const;  // throws InputError on a bad regex
  // threshold_for(name), raised by the calibrated noise of `name` for a comparison whose every
  // side pools `rounds` independent runs (1 for compare: one run against one run).
  double calibrated_threshold(const std::string& name, int rounds = 1) const;
};

// What two sets of samples say about one benchmark. Rates: higher is better.

struct Evidence {
  int n_base = 0, n_new = 0;  // the samples the statistics read (CompareOptions::max_samples at most)
  int base_samples = 0, new_samples = 0;  // the samples each side holds
  double base_median = 0, new_median = 0;  // of the rate
  double change = 0;                       // new_median / base_median - 1
  Interval change_ci;                      // bootstrap, same units as change
  double p = 1, q = 1;                     // Mann-Whitney two-sided; q adjusted over the comparison
  bool exact = false;
  double p_min = 1;  // the smallest p these sample counts allow
  // Where both sides read the clock after every sample: the change in work per cycle, and the
  // median clocks. A change in time that vanishes in cycles is the machine's, not the code's.
  std::optional<double> cycle_change;
  std::optional<double> base_clock_hz, new_clock_hz;
  int base_throttled = 0, new_throttled = 0;
  std::string unit = "samples";  // what n counts: "samples" (compare), "rounds" (ab)
};

// `work` turns times into rates (1 for time-only benchmarks); `seed` fixes the bootstrap.
Evidence gather_evidence(const Measurement& base, double base_work, const Measurement& fresh, double new_work,
                         const CompareOptions& opt, std::uint64_t seed);

// The verdict and the one-line reason for it, given evidence whose q is already adjusted.
std::pair<Verdict, std::string> decide(const Evidence& e, double threshold, const CompareOptions& opt);

struct CompareRow {
  std::string name;
  std::string metric;  // "FLOP/s", "B/s" or "1/s" (time only: runs per second)
  std::optional<Evidence> evidence;  // absent when a side has no number
  double threshold = 0;
  Verdict verdict = Verdict::unsure;
  std::string reason;
  std::vector<std::string> notes;  // declared work changed, throttled samples, clock limits
  // The roof family: "bandwidth/dram", "compute/fp32/simt". A ceiling's own; for a kernel, that of
  // the ceiling bounding it in NEW (its placement).
  std::string roof_group;
  // Which view decided: "rate" or "roof share" (CompareOptions::by_roof); and the change the
  // other view saw, shown beside it (absent where a side has no placement).
  std::string decided_by = "rate";
  std::optional<double> other_change;
};

// A row whose NEW number is implausible becomes IMPLAUSIBLE, one whose BASE number alone is
// becomes UNSURE, whatever their samples said.
void refuse_implausible(CompareRow& row, const BenchmarkResult* base, const BenchmarkResult* fresh);

struct EnvironmentDifference {
  std::string what, base, fresh;
};

struct Comparison {
  struct Side {
    std::string path, commit, time, device;
    std::string partial;  // a run that did not finish: partial_text of it; "" when whole
  };
  Side base, fresh;
  CompareOptions options;
  bool same_device = true;
  std::vector<EnvironmentDifference> environment;
  std::vector<CompareRow> kernels;   // decide the exit code
  std::vector<CompareRow> ceilings;  // the machine's, shown for context only
  std::vector<std::string> only_base, only_new;
  int rounds = 0;  // an interleaved A/B (ab): the rounds its verdicts are paired over; 0 for compare
  std::optional<double> geomean_change;  // of the kernels' median rates, new over base, minus 1
  int geomean_n = 0;

  int count(Verdict v) const;
  // 1 when any kernel is SLOWER, FAILED or IMPLAUSIBLE, or NEW is a partial run (its missing benchmarks could
  // hide a regression), else 0.
  int exit_code() const;
};

// Throws InputError when the devices differ (unless allowed) or nothing is in common.
Comparison compare_results(const Results& base, const Results& fresh, const CompareOptions& opt,
                           const std::string& base_path = "BASE", const std::string& new_path = "NEW");

// The ceilings two runs share, matched by name on their start-of-run passes, each with its
// change and verdict (one false-discovery control over them), and its roof group.
std::vector<CompareRow> compare_ceilings(const Results& base, const Results& fresh, const CompareOptions& opt);
// The benchmark of `r` named `name`, or null; whether it has a number (measured, with samples).
const BenchmarkResult* find_benchmark(const Results& r, const std::string& name);
bool has_number(const BenchmarkResult* b);
// How a comparison names one of its sides: path, commit (12 digits), time, device.
Comparison::Side comparison_side(const Results& r, const std::string& path);

// Shared with `ab` (reports/ab.h): the device, version and settings that differ between two runs;
// the adjusted p over rows with evidence and each row's verdict; worst first; the geometric mean.
void environment_differences(const Results& base, const Results& fresh, const CompareOptions& opt, Comparison& c);
void decide_rows(std::vector<CompareRow>& rows, const CompareOptions& opt);
void sort_rows(std::vector<CompareRow>& rows);
void set_geomean(Comparison& c);

// The roof group of the ceiling that bounds `b` in run `r` (its placement); empty when unplaced.
std::string kernel_roof_group(const Results& r, const BenchmarkResult& b);
// Why a SLOWER or FASTER kernel says more about the machine than about the code: its change lies
// within the changes of its roof group's ceilings between the same two runs, in the same
// direction (within half its threshold). compare and history then call it UNSURE with this.
std::optional<std::string> roof_explanation(const CompareRow& kernel, const std::vector<CompareRow>& ceilings);

// The printers (reports/compare_render.cpp).
std::string render_compare_text(const Comparison& c);
std::string render_compare_markdown(const Comparison& c);
nlohmann::json compare_json(const Comparison& c);  // schema "roofbench.compare.v1"

// "+1.2%", "−10.0%" (a true minus sign).
std::string percent_change(double change);
std::string percent(double fraction);  // 0.05 -> "5%"

// What compare and history measure a benchmark by: FLOP/s where it declares FLOPs, else B/s,
// else runs per second ("1/s"), with the work of one run (1 for "1/s").
std::pair<std::string, double> rate_metric(const BenchmarkResult& b);
// The rate every one of `runs` of a benchmark can be judged by: FLOP/s where all declare FLOPs,
// else B/s where all declare bytes, else 1/s (time alone); never one's FLOP/s against another's
// B/s. And the work behind that metric in one of them.
std::string shared_rate_metric(const std::vector<const BenchmarkResult*>& runs);
double work_for(const BenchmarkResult& b, const std::string& metric);
// The work of one run over the rate its roof allows in its own run (its placement), in the units
// of rate_metric: divided by a sample's time, the share of its roof that sample reached. Absent
// when the benchmark is not placed.
std::optional<double> roof_share_work(const BenchmarkResult& b);
std::string rate_text(const std::string& metric, double rate);  // "48.1 TFLOP/s"; a time for "1/s"
std::string device_id(const Results& r);                        // "cuda: NVIDIA H200"
std::uint64_t name_seed(const std::string& name);  // a bootstrap seed, the same on every platform

}  // namespace roofbench
