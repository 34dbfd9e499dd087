#pragma once
// roofbench evidence RESULTS... : the suite's own results held to its own model. Every results
// file is read as the model sees it now (roofline/model.h: read_results), and fails on
//   implausible  a kernel above its roof by more than its run's noise (the plausibility gate);
//   lesson       a lesson whose measured ratio (fused over unfused, FP16 over FP32, recompute
//                over store) is more than lesson_tolerance from the ratio the same run's roofs
//                predict for it: the two forms should sit at the same share of their roofs;
//   share        a kernel whose share of its roof fell by more than share_drop against the
//                previous file of the same machine class (the GPU's name; the CPU's name,
//                CPUID model, threads and ISA; and --quick or not), in run order: roof-normalised,
//                so a slower machine moves the roofs with the kernels.
// What a committed baseline that fails means is for a person to say: the README marks it with
// its first reasons (scripts/update-readme.sh), and its folder says what is known of it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/results.h"

namespace roofbench {

struct EvidenceOptions {
  double lesson_tolerance = 0.15;
  double share_drop = 0.25;
};

struct EvidenceFinding {
  std::string check;      // "implausible", "lesson" or "share"
  std::string benchmark;  // the benchmark it is about
  std::string text;       // one line: what was found, with its numbers
};

struct BaselineEvidence {
  std::string path;     // the results file
  std::string machine;  // its class: "cpu: AMD EPYC, 2 threads, avx512f" (", quick")
  std::string time, commit;
  std::string previous;                   // the previous file of its class, or "" (no share check)
  int lessons = 0, kernels_compared = 0;  // what was checked: lesson pairs, kernels against `previous`
  std::vector<EvidenceFinding> failures;
  bool ok() const { return failures.empty(); }
};

// Each file in run order (provenance utc_time). Throws InputError on a file it cannot read.
std::vector<BaselineEvidence> check_evidence(const std::vector<std::string>& results_files,
                                             const EvidenceOptions& opt = {});
// The same on results already read (tests): paths[i] names runs[i].
std::vector<BaselineEvidence> check_evidence(const std::vector<Results>& runs, const std::vector<std::string>& paths,
                                             const EvidenceOptions& opt = {});

std::string render_evidence_text(const std::vector<BaselineEvidence>& e);
std::string render_evidence_markdown(const std::vector<BaselineEvidence>& e);
nlohmann::json evidence_json(const std::vector<BaselineEvidence>& e,
                             const EvidenceOptions& opt);  // roofbench.evidence.v1

}  // namespace roofbench
