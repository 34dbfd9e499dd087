#pragma once
// Vendor datasheet figures, stored beside measured ceilings for comparison only: the model
// never uses them. Matched by the CUDA device name.
#include <optional>
#include <string>

#include "bench/results.h"

namespace roofbench {

// The datasheet value for a ceiling on a device, in the ceiling's unit (B/s or FLOP/s), or
// nullopt when the GPU or the ceiling is not in the table. Bandwidth ceilings of level "dram"
// all compare against the HBM peak.
std::optional<ReferenceValue> datasheet_value(const std::string& device_name, const Ceiling& c);

}  // namespace roofbench
