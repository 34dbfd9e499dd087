#pragma once
// A measured ceiling of the roofline, made from the benchmark that measured it: its start-of-run
// pass and, where the run measured it again after the kernels, its end-of-run pass. The roof is
// the better of the two; datasheet and theoretical values go beside it for comparison.
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

// `v` is the ceiling variant (v.ceiling set); `start` its verified start-of-run result; `end` the
// end-of-run one or nullptr; `again` the passes a run takes once more when a kernel came out above
// the roof, at its own size and, where its repeat count scales, in brief samples (the faster is
// Ceiling::value_again), or none; `device` results.json's "device" of the machine that measured
// it.
// `sustained`: its sustained pass (CeilingSpec::sustained, held under load first), or nullptr.
Ceiling make_ceiling(const Variant& v, const BenchmarkResult& start, const BenchmarkResult* end,
                     const nlohmann::json& device, const std::vector<const BenchmarkResult*>& again = {},
                     const BenchmarkResult* sustained = nullptr);

// Adds to `c` a pass its run took once more because a kernel came out above it (`again`, of
// variant `v`, at its own size or another: Ceiling::benchmark_again): Ceiling::value_again where
// it is the fastest such pass, the roof the better of it and the others; `why` goes into its
// method. A ceiling taken from another file (--ceilings-from) gets it this way.
void add_again_pass(Ceiling& c, const Variant& v, const BenchmarkResult& again, const char* why);

}  // namespace roofbench
