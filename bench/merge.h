#pragma once
// One results file from several of the same machine and the same build: the parts of a run split
// to fit time limits (the GPU check's `numbers` stage runs the ceilings once and each family as a
// part of its own with --ceilings-from), or runs of disjoint filters.
#include <string>
#include <vector>

#include "bench/results.h"

namespace roofbench {

// Which machine a results file was measured on: a GPU by its UUID, the CPU by its model and
// host name. Two files with the same id came from the same device.
std::string machine_id(const Results& r);

// Joins `parts` (read from `paths`, named in messages). Refuses with InputError (exit 2): fewer
// than two files, another machine or another commit than the first file's, a benchmark in two
// files. Ceilings measured in several parts keep the better value, as a run's two passes do
// (identical copies, from --ceilings-from, are one). Partial parts make a partial merge. The
// placement is left to apply_model; provenance names every part.
Results merge_results(const std::vector<Results>& parts, const std::vector<std::string>& paths);

}  // namespace roofbench
