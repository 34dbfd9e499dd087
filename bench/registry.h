#pragma once
// The kernel registry: the one list of variants, filled by ROOFBENCH_REGISTER
// (roofbench/variant.h).
#include <string>
#include <vector>

#include "roofbench/variant.h"

namespace roofbench {

const std::vector<Variant>& registry();

// Why `v` cannot run on a device of this compute capability ("8.0"; empty for the CPU), or ""
// when it can.
std::string not_here(const Variant& v, const std::string& compute_capability);
}  // namespace roofbench
