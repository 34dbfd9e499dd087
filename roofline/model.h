#pragma once
// The roofline model. For a kernel with intensity I = FLOPs / bytes (both declared):
//   attainable = min(peak[precision, unit], I x BW[level])  (precision: of the arithmetic, see
//                                                            BenchmarkResult::math)
//   roof %     = achieved / attainable
//   bound      = memory when I x BW < peak (left of the ridge), else compute
//   ridge      = peak / BW, the intensity where the two roofs meet
// The roofs are the highest measured ceiling of each kind: the best bandwidth reached at each
// memory level and the best FLOP rate of each precision on each unit.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"

namespace roofbench {

struct Roofs {
  std::map<std::string, const Ceiling*> bandwidth;                      // by level
  std::map<std::pair<Precision, std::string>, const Ceiling*> compute;  // by (precision, unit)
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

// Fills placements, roof and drift warnings and ridge points of a results model from its ceilings.
void apply_model(Results& r);

}  // namespace roofbench
