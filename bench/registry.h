#pragma once
// The kernel registry: the one list of variants, filled by ROOFBENCH_REGISTER
// (roofbench/variant.h).
#include <string>
#include <vector>

#include "roofbench/variant.h"

namespace roofbench {

const std::vector<Variant>& registry();

// Benchmarks declared while the program runs (the Python package's callables): checked as
// ROOFBENCH_REGISTER checks a declaration, but a bad one throws InputError instead of aborting.
// `source` names where they came from; forget_variants(source) takes every one of them out again.
// Neither may be called while a run holds jobs (they point into the registry).
void register_variant_at_run_time(Variant v, const std::string& source);
void forget_variants(const std::string& source);

// Why `v` cannot run on a device of this compute capability ("8.0"; empty for the CPU), or ""
// when it can.
std::string not_here(const Variant& v, const std::string& compute_capability);
}  // namespace roofbench
