#pragma once
// Which hardware counters a kernel gets, and what their values mean. Plain C++ (no CUPTI), so
// the model and the reports use it everywhere; roofline/cupti/host.h checks the names against a
// chip and counts the replay passes they need.
//
// The metric names are Hopper's (GH100, CUPTI 13.0), chosen so that a kernel's default set
// stays within kPassBudget replay passes (../shared/reference/roofline_cupti.md §3):
//   always   gpu__time_duration.sum, sm__cycles_elapsed.avg(.per_second)   time and SM clock
//            dram__bytes_read.sum + dram__bytes_write.sum                   HBM bytes
//            lts__t_sectors_srcunit_tex.sum × 32                            L2 bytes (SM-side requests;
//                                                                            lts__t_bytes also counts the
//                                                                            traffic between the two L2 halves)
//            l1tex__t_bytes.sum                                             L1 bytes (LSU/TEX requests)
//   FLOPs    CUDA cores: smsp__sass_thread_inst_executed_op_{x}{add,mul,fma}_pred_on.sum of the
//            arithmetic's precision (x = d, f, h); tensor cores: the sm__ops_path_tensor_src_*
//            counter of the input type (not 512 × tensor instructions: that factor was V100's)
//   divergence  smsp__thread_inst_executed.sum / smsp__inst_executed.sum (threads per instruction)
//            and smsp__sass_branch_targets{,_threads_uniform}.sum (branch uniformity)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/results.h"

namespace roofbench::cupti {

inline constexpr const char* kHopperChip = "GH100";  // H100 and H200
inline constexpr int kPassBudget = 2;                // the most replay passes a default set may need

// The default metric set of a benchmark, from what it declares (family, precision of its data
// and of its arithmetic, the unit it runs on).
std::vector<std::string> default_metrics(const BenchmarkResult& b);

// No CUPTI metric name comes near this (Hopper's longest, with a rollup, is under 100).
inline constexpr std::size_t kMaxMetricName = 256;

// "a,b, c" -> {"a","b","c"}, repeats dropped; throws InputError on an empty list, an empty name or
// a name longer than kMaxMetricName.
std::vector<std::string> parse_metric_list(const std::string& csv);

// How far a name may be from a known one to be suggested: a typo or two, more in a long name.
inline constexpr std::size_t near_limit(std::size_t length) { return std::max<std::size_t>(3, length / 3); }

// Edit distance of a and b if it is at most `limit`, else limit + 1 (banded, with early exit).
std::size_t bounded_edit_distance(const std::string& a, const std::string& b, std::size_t limit);

// Up to `n` names from `known` closest to `name`'s base (the part before the first '.') and within
// near_limit of it: edit distance first, then shared prefix; the rollup is kept as typed. Empty
// when nothing is near: a "did you mean" that names unrelated metrics only misleads.
std::vector<std::string> near_names(const std::string& name, const std::vector<std::string>& known,
                                    std::size_t n = 4);

// Fills the derived fields of `c` from its values (FLOPs, bytes per level, time, clock,
// divergence measures). Values that are absent leave their fields empty.
void derive(Counters& c);


// The Activity API's kernel records of a benchmark beside its event timing, as medians.
struct TraceCheck {
  double events_s = 0;  // the timed samples (CUDA events)
  double span_s = 0;    // the trace: the first kernel's start to the last kernel's end
  double busy_s = 0;    // the trace: the time a kernel or copy ran
  double outside_s() const { return events_s - span_s; }  // in the events, not in any kernel's span
  double gaps_s() const { return span_s - busy_s; }       // between the kernels (copies) of one run
};
inline constexpr double kTraceTolerance = 0.05;  // of the events' median ...
inline constexpr double kTraceFloorS = 2e-6;     // ... and at least this much, for a warning

// One kernel's or copy's GPU interval in a trace, [start, end) in ns.
struct Interval {
  std::uint64_t start = 0, end = 0;
};
// What a run's intervals say together: the first start to the last end, the time at least one
// ran, the time two or more ran at once (copies beside kernels, on several streams).
struct Concurrency {
  double span_s = 0, busy_s = 0, overlap_s = 0;
};
Concurrency concurrency(const std::vector<Interval>& intervals);

// Both medians, when the trace is there and the benchmark was timed.
std::optional<TraceCheck> trace_check(const Counters& c, const Measurement& m);
// A `timing:` warning when the events and the trace disagree by more than kTraceTolerance of the
// events' median and kTraceFloorS; "" when they agree.
std::string trace_warning(const TraceCheck& t);

// A `counters:` warning when the counters read no FLOPs where the benchmark declares some and its
// kernels moved bytes through L1 or L2 (so they ran): the FLOPs are FP adds, multiplies and FMAs
// from SASS instruction counts and tensor ops, so declared work of another kind reads 0 (relu's
// compare), and so do kernels launched from a CUDA graph, whose SASS counts they miss
// (launch/graph on an H200, 2026-11-27: 0 FLOPs, its bytes counted). "" otherwise, and where
// FLOPs were not asked for.
std::string flops_warning(const Counters& c, double declared_flops);

// A demangled kernel signature without its return type and parameter list:
// "void ns::(anonymous namespace)::k<float>(float const*, int)" -> "ns::(anonymous namespace)::k<float>".
// (Cut at the first "(" it was "ns::" for every kernel in an anonymous namespace, and crosscheck
// found none of them in ncu's list.)
std::string strip_signature(const std::string& demangled);
// A traced kernel's name: demangled, then strip_signature; a name that does not demangle, stripped
// as it is.
std::string kernel_name(const std::string& mangled);

}  // namespace roofbench::cupti
