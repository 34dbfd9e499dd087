#pragma once
// The roofline model. For a kernel with intensity I = FLOPs / bytes (both declared):
//   attainable = min(peak[precision, unit], I x BW[level])  (precision: of the arithmetic, see
//                                                            BenchmarkResult::math)
//   roof %     = achieved / attainable
//   bound      = memory when I x BW < peak (left of the ridge), else compute
//   ridge      = peak / BW, the intensity where the two roofs meet
// The roofs are the highest measured ceiling of each kind: the best bandwidth reached at each
// memory level and the best FLOP rate of each precision on each unit.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"

namespace roofbench {

struct Roofs {
  std::map<Level, const Ceiling*> bandwidth;                     // by level
  std::map<std::pair<Precision, Unit>, const Ceiling*> compute;  // by (precision, unit)
};

Roofs select_roofs(const std::vector<Ceiling>& ceilings);

// Places a measured kernel; nullopt (with the reason in *why) when a roof it needs is missing.
std::optional<Placement> place(const BenchmarkResult& b, const Roofs& roofs, std::string* why);

std::vector<RidgePoint> ridge_points(const Roofs& roofs);

// A kernel above its own roof by more than this fraction gets a warning: the roof is too low
// (or the declared work too high), and the chart would lie.
inline constexpr double kRoofTolerance = 0.05;

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
