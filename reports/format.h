#pragma once
// Number and text formatting shared by every printer.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"
#include "bench/units.h"  // si(), duration()

namespace roofbench {

// Intensity in FLOP/byte with sensible digits: 0.125, 2.67, 171.
std::string intensity(double v);

std::string xml_escape(const std::string& s);
// Markdown of a string a results file holds (a name, a device, a reason): as text, in a table
// cell or a line, never as markup. md_cell escapes what could make it HTML, a link, an image, a
// code span or another table cell (\ ` [ ] < > & |; emphasis with * and _ is left alone, as in
// metric_names_like_these) and turns line breaks into spaces; md_code makes it a code span whose
// fence no backtick inside can close (the content shows literally; `|` is still escaped).
std::string md_cell(const std::string& s);
std::string md_code(const std::string& s);

// "dram_read" → "DRAM read"; "fp32_fma" → "FP32 FMA".
std::string ceiling_label(const Ceiling& c);
std::string ceiling_value(const Ceiling& c);  // "41.2 GB/s"

std::string device_line(const Results& r);  // "NVIDIA H200 (cuda, sm 9.0, 132 SMs)"
std::string provenance_line(const Results& r);  // ends with partial_text() for a partial run
std::string partial_text(const Partial& p);      // "PARTIAL: 12 of 40 benchmarks finished (stopped by SIGTERM)"
int count_implausible(const Results& r);         // benchmarks above their roof beyond the noise
// The closing lines of a command whose results hold `n` implausible benchmarks (exit 1).
std::string implausible_text(int n);

// How long a run took, and how much of that was spent inside timed samples: every benchmark's,
// and the ceilings' (both passes) where the file's own runs measured them rather than took them
// --ceilings-from another file. A merged file's parts ran one after another, so their times add
// up. The rest is the suite's own cost: inputs, reference checks, warm-ups, flushes, counter
// passes, starting the device. nullopt when the file, or one of its parts, does not say how long
// it ran (written before wall_s was recorded). Where several merged parts measured ceilings,
// the file holds one of each, so the others' samples are missing and the ratio errs high.
struct RunTime {
  double wall_s = 0;
  double timed_s = 0;
  // Energy passes and sustained holds (Measurement::energy_run): measuring too, but not in the
  // timed samples, so the ratio over the samples alone counts them as the run's cost.
  double passes_s = 0;
  std::size_t parts = 1;  // > 1: a merged file
};
std::optional<RunTime> run_time(const Results& r);

// Where the benchmarks' time outside their timed samples went (BenchmarkResult::host_s), summed
// over the file: "host time of the benchmarks' steps: sampling 37.9 s, verifying 45.1 s, ...; the
// most outside sampling: `a` (verify 3.10 s), ...". "" when no benchmark recorded its steps.
std::string host_time_line(const Results& r, std::size_t top = 3);

// The suite's own ceilings beside the vendor routines measured as their references in the same
// run (Ceiling::reference_for), in the order of the file: one line each, plain text,
// "DRAM copy 3.05 TB/s is 1.02× DRAM memcpy 2.99 TB/s". A reference whose ceiling is not in the
// file (skipped, or failed) gets no line.
std::vector<std::string> vendor_reference_lines(const Results& r);
// One line per ceiling measured sustained as well: "fp32_fma: burst 1 TFLOP/s at 1.98 GHz; held
// 10 s, 800 GFLOP/s (80% of the burst) at 1.60 GHz, 650 W at its end".
std::vector<std::string> sustained_lines(const Results& r);

// How tightly the run timed the kernels long enough to be timed tightly: of the measured
// benchmarks with a median of at least `min_median_s`, how many have an IQR within `target` of
// their median, the median of their IQR/median, and the widest. nullopt when there are none.
// "Spread: of the 24 kernels with a median of at least 50 us, 20 have an IQR within 1.0% of the
// median (median 0.42%; widest 3.1%, gemm/naive/...)".
struct Spread {
  std::size_t kernels = 0, within = 0;
  double min_median_s = 0, target = 0;
  double median_rel_iqr = 0, widest_rel_iqr = 0;
  std::string widest;  // the benchmark
};
std::optional<Spread> spread_of(const Results& r, double min_median_s = 50e-6, double target = 0.01);
std::string spread_text(const Spread& s);  // plain text, the benchmark's name as it is

// Rate columns of a benchmark: GFLOP/s and GB/s as text; "—" where not meaningful.
std::string flop_rate_text(const BenchmarkResult& b);
std::string byte_rate_text(const BenchmarkResult& b);
std::string status_text(const BenchmarkResult& b);  // "ok", "FAILED: ..."

// A ceiling's comparison values: "235 GFLOP/s (theoretical)" and "99.9%"; with both a datasheet
// and a theoretical value, both in that order ("67.0 TFLOP/s (datasheet), 59.5 TFLOP/s
// (theoretical)" and "88.8%, 99.9%": a GPU's datasheet is at its boost clock, the theoretical at
// the clock measured around the samples); both empty when the ceiling has neither.
struct CeilingReference {
  std::string value, ratio;
};
CeilingReference ceiling_reference(const Ceiling& c);

// "59.3 / 34.5 GB/s": the rate of the start and the end pass, and ", sustained 50.1" before the
// unit for a sustained ceiling's held pass; "" when it ran once.
std::string ceiling_passes(const Ceiling& c);

// Measured against declared: "1.02×"; "—" when nothing was declared.
std::string ratio_text(double measured, double declared);

// Counters beside the declared work, one line: "FLOPs 2.15 G (declared 2.15 G), HBM 805 MB
// (declared 805 MB, 1.00×), L2 1.21 GB, L1 3.40 GB". `declared_bytes` are at the DRAM level.
std::string counter_line(const Counters& c, double declared_flops, double declared_bytes);

}  // namespace roofbench
