#pragma once
// Theoretical GPU peaks: SMs x FLOPs (MUFU results, shared-memory bytes) per clock per SM x the
// SM clock measured around a ceiling's samples. Stored beside the measured ceilings for comparison (the "x% of theoretical
// at the recorded clock" check); the model never uses them.
#include <optional>
#include <string>

#include "bench/results.h"

namespace roofbench {

// Dense FLOPs per clock per SM (an FMA is 2) of a (precision, unit) on a compute capability
// ("9.0"); nullopt for combinations not in the table.
std::optional<double> gpu_flops_per_clock_per_sm(const std::string& compute_capability, Precision p, Unit unit);

// The theoretical peak of a compute ceiling, a MUFU math ceiling or the shared-memory bandwidth
// ceiling on `device` (results.json "device": needs
// compute_capability and sm_count) at `sm_clock_hz`, with its derivation as the source.
std::optional<ReferenceValue> gpu_theoretical(const nlohmann::json& device, const Ceiling& c, double sm_clock_hz);

}  // namespace roofbench
