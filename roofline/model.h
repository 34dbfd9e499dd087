#pragma once
// The roofline model. For a kernel with intensity I = FLOPs / bytes (both declared):
//   attainable = min(peak[precision, unit], I x BW[level])  (precision: of the arithmetic, see
//                                                            BenchmarkResult::math)
//   roof %     = achieved / attainable
//   bound      = memory when I x BW < peak (left of the ridge), else compute
//   ridge      = peak / BW, the intensity where the two roofs meet
// A kernel that declares math calls (calls_f of each function f: sin, exp, ...) has a third roof,
// the rate R_f at which this machine runs each function in the same code the kernel calls:
//   T_math     = Σ calls_f / R_f, and the roof it allows is FLOPs / T_math
//   attainable = min(peak, I x BW, FLOPs / T_math), bound = whichever is lowest
// Said in time: the model's time is max(bytes / BW, FLOPs / peak, T_math), and roof % is that
// time over the measured one (the same ratio as above, and defined when a kernel has no FLOPs).
// A form declared as passes that run one after another (Work::phase: an unfused chain of five
// kernels) gets that time per pass, and its model time is their sum: one pass's math cannot hide
// behind another's bytes. Its bound is the roof that binds the most of that time. A pass may name
// its own bandwidth ceiling (a copy over PCIe: pcie_h2d_pinned). A form whose passes run as a
// pipeline over C chunks (Work::pipelined: copies and kernels on several streams) takes
// Σ t_k / C + (C - 1) / C · max(max t_k, Σ t_k / S) instead of Σ t_k: one chunk through every
// pass, the rest at the slowest pass's pace, or a stream's when its S streams are too few; when
// its copies share one link both ways (Work::shared_link), the pace is also at least their bytes
// together over that link's ceiling. Its roof % is then the overlap efficiency, model / measured.
// The roofs are the highest measured ceiling of each kind: the best bandwidth reached at each
// memory level (of the ceilings that may be its roof: not a link both ways, Ceiling::level_roof),
// the best FLOP rate of each precision on each unit, and the best call rate of each math function.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"

namespace roofbench {

struct Roofs {
  std::map<Level, const Ceiling*> bandwidth;                     // by level
  std::map<std::string, const Ceiling*> bandwidth_by_name;       // by name: a pass's own ceiling
  std::map<std::pair<Precision, Unit>, const Ceiling*> compute;  // by (precision, unit)
  std::map<std::string, const Ceiling*> transcendental;          // by function
  std::map<std::string, const Ceiling*> launch;                  // by launch path
  // Each roof measured sustained as well (Ceiling::value_sustained): its sustained view, a copy
  // whose value and pass are the sustained pass's. clock_matched() puts it in the roof's place.
  std::map<const Ceiling*, std::shared_ptr<const Ceiling>> sustained;
};

Roofs select_roofs(const std::vector<Ceiling>& ceilings);

// The clock a measurement's samples ran at: the median of its per-sample readings, else the
// reading after its warm-up; none where neither was read.
std::optional<double> samples_clock_hz(const Measurement& m);

// The roofs for a kernel whose samples ran at `clock_hz`: each roof with a sustained pass whose
// clock read more than kClockStep below its burst pass's is replaced by its sustained view when
// the kernel's clock is nearer the sustained pass's than the burst's. A roof is read at the clock
// the kernel ran at; the plausibility gate still holds the kernel to the burst roofs (place()).
inline constexpr double kClockStep = 0.02;
// `swapped`, where given, gets the names of the roofs replaced.
Roofs clock_matched(const Roofs& roofs, std::optional<double> clock_hz, std::set<std::string>* swapped = nullptr);

// Places a measured kernel; nullopt (with the reason in *why) when a roof it needs is missing.
// A kernel that declares no bytes is placed by the work CUPTI counted for it (its counters' bytes
// at its level, and their FLOPs where it declares none either): Placement::work says which.
std::optional<Placement> place(const BenchmarkResult& b, const Roofs& roofs, std::string* why);

// The kernel with the work its counters counted in place of the work it left undeclared: bytes at
// its level, and FLOPs where it declares none. nullopt when it declares its bytes or nothing was
// counted at its level.
std::optional<BenchmarkResult> with_counted_work(const BenchmarkResult& b);

// "" or a "roofline:" warning: the work declared and the work counted both exist and differ by more
// than kWorkMismatch, in either direction, with both figures.
inline constexpr double kWorkMismatch = 0.10;
std::string work_mismatch(const BenchmarkResult& b);

// A kernel timed warm (no flush before its samples) may find its bytes in any cache inside the
// level it declares: these are the roofs with each such level's bandwidth roof, and each pass
// ceiling of such a level, replaced by the fastest of them. place() refuses a warm kernel only
// above these: its own level's roof is no upper bound for it.
Roofs warm_roofs(const Roofs& roofs, Level level);

std::vector<RidgePoint> ridge_points(const Roofs& roofs);

// How much faster than the roof (its best pass's median) the ceiling's fastest sample of any pass
// ran, relative: the machine demonstrably did that much. On a quiet machine a few percent; on a
// loaded one, where every pass of a ceiling can read slow, as much as the load took away.
double ceiling_upside(const Ceiling& c);
// How far above its roof a placed kernel may sit before it is implausible, relative:
// max(kRoofSlack, its noise).
double plausibility_allowance(const Placement& p);

// The ceilings of every roof the plausibility gate holds a kernel to (see place()): those that
// bind it at its clock, at the burst clock where a sustained roof took a burst one's place, and,
// timed warm, among the fastest roofs of the levels its bytes could have come from. A kernel
// refused as implausible was refused by these: a run measures them once more before it refuses.
std::vector<std::string> gate_ceilings(const BenchmarkResult& b, const Roofs& roofs);

// The ceilings of the roof that binds a placed kernel (its `bound`): one name, or for a math or
// launch roof every ceiling whose rate makes it ("math_cos, math_sin").
const std::string& binding_ceilings(const Placement& p);
// The names of such a list, one each: "math_cos, math_sin" -> {"math_cos", "math_sin"}.
std::vector<std::string> split_names(const std::string& names);

// The plausibility gate. A roof is an upper bound or it is not a roof, so a kernel above its
// own roof is either noise or a wrong number. Above it by more than the run's own noise,
// max(kRoofSlack, Placement::noise), it is IMPLAUSIBLE (Placement::implausible): refused as a
// real point on the chart, never called FASTER, and the run exits 1. The likely causes: work
// declared above what the kernel does, a timer that was fooled, a kernel that skipped work, or a ceiling too weak
// for the kernels of its shape. Above it by less than that, it gets a warning only.
inline constexpr double kRoofSlack = 0.03;
// The warning an implausible kernel carries begins with this (its kind in every report).
inline constexpr const char* kImplausibleKind = "implausible:";

// A ceiling whose start and end passes differ by more than this fraction gets a warning: the
// machine did not hold steady through the run, and the kernels between saw either roof.
inline constexpr double kDriftTolerance = 0.10;

// The wave model of a fixed-tile kernel at M x N (see WaveModel); throws std::invalid_argument
// on zeros.
WaveModel wave_model(std::int64_t tile_m, std::int64_t tile_n, std::int64_t M, std::int64_t N,
                     std::int64_t blocks_per_sm, std::int64_t sms);

// Everything a results model derives from what was measured, recomputed rather than trusted from
// a file: each benchmark's counters (FLOPs, bytes per level, time: roofline/cupti/metrics.h) and
// wave model, its placement and roof warnings, the ceilings' drift warnings, and ridge points.
void apply_model(Results& r);

// A results file as the model sees it: load_results (bench/results.h), then apply_model.
Results read_results(const std::string& path);

}  // namespace roofbench
