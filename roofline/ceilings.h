#pragma once
// A measured ceiling of the roofline, made from the benchmark that measured it: its start-of-run
// pass and, where the run measured it again after the kernels, its end-of-run pass. The roof is
// the better of the two; datasheet and theoretical values go beside it for comparison.
#include <nlohmann/json.hpp>

#include "bench/registry.h"
#include "bench/results.h"

namespace roofbench {

// `v` is the ceiling variant (v.ceiling set); `start` its verified start-of-run result; `end` the
// end-of-run one or nullptr; `again` the pass a run takes once more when a kernel came out above
// the roof (Ceiling::value_again), or nullptr; `brief` the one it takes then in samples as brief
// as that kernel's (Ceiling::value_brief), or nullptr; `device` results.json's "device" of the
// machine that measured it.
// `sustained`: its sustained pass (CeilingSpec::sustained, held under load first), or nullptr.
Ceiling make_ceiling(const Variant& v, const BenchmarkResult& start, const BenchmarkResult* end,
                     const nlohmann::json& device, const BenchmarkResult* again = nullptr,
                     const BenchmarkResult* sustained = nullptr, const BenchmarkResult* brief = nullptr);

// Adds to `c` the pass its run took once more because a kernel came out above it (`again`, of
// variant `v`): Ceiling::value_again, the roof the better of it and the others; `why` goes into
// its method. A ceiling taken from another file (--ceilings-from) gets it this way.
void add_again_pass(Ceiling& c, const Variant& v, const BenchmarkResult& again, const char* why);

// Adds to `c` the pass in samples as brief as the kernel's that came out above it (`brief`, of
// variant `v` at another size, tagged kBriefPass): Ceiling::value_brief, measurement_brief and
// benchmark_brief, the roof the better of it and the others. A file's own brief pass is kept
// where it was the faster.
void add_brief_pass(Ceiling& c, const Variant& v, const BenchmarkResult& brief);

}  // namespace roofbench
