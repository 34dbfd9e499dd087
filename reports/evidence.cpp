#include "reports/evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "reports/compare.h"
#include "reports/format.h"
#include "roofline/model.h"

namespace roofbench {

namespace {

// The lessons whose point is the model's own prediction: the same work on fewer bytes, fewer
// passes, or FLOPs traded for bytes, so both forms should reach the same share of their roofs.
// (The divergence lesson is what the roofline cannot see, and the launch and overlap lessons are
// judged by their own targets.)
constexpr const char* kModelLessons[] = {"fusion", "lowprec", "recompute"};

bool is_model_lesson(const BenchmarkResult& b) {
  return std::any_of(std::begin(kModelLessons), std::end(kModelLessons), [&](const char* f) { return b.family == f; });
}

bool placed(const BenchmarkResult* b) {
  return b && b->measured() && b->placement && !b->implausible() && b->placement->roof_pct > 0 &&
         b->placement->model_time_s > 0;
}

// A device's model, as results.json names it: a GPU by its name; a CPU also by its CPUID model
// (VMs of two Xeon generations both call theirs "Intel(R) Xeon(R) Processor"), its threads and ISA.
std::string machine_class(const Results& r) {
  std::string s = device_id(r);
  if (r.device.value("kind", std::string()) == "cpu") {
    if (r.device.contains("model")) s += fmt::format(", model {}", r.device["model"].dump());
    s += fmt::format(", {} threads, {}", r.device.value("threads", 0), r.device.value("isa", std::string("?")));
  }
  if (r.settings.value("quick", false)) s += ", quick";
  return s;
}

void check_lessons(const Results& r, const EvidenceOptions& opt, BaselineEvidence& e) {
  for (const auto& b : r.benchmarks) {
    if (b.compared_with.empty() || !is_model_lesson(b) || !placed(&b)) continue;
    if (const BenchmarkResult* form = compared_form(r.benchmarks, b); form && placed(form)) {
      const BenchmarkResult& a = *form;
      ++e.lessons;
      const double measured = a.measurement->stats.median / b.measurement->stats.median;
      const double predicted = a.placement->model_time_s / b.placement->model_time_s;
      const double apart = measured / predicted - 1;
      if (std::abs(apart) > opt.lesson_tolerance)
        e.failures.push_back(
            {"lesson", b.name,
             fmt::format("{} against {}: measured {:.2f}× where the run's roofs predict {:.2f}× ({:+.0f}%; {:.0f}% of "
                         "its roof against {:.0f}%)",
                         b.base_name(), a.base_name(), measured, predicted, 100 * apart, b.placement->roof_pct,
                         a.placement->roof_pct)});
    }
  }
}

void check_shares(const Results& r, const Results& prev, const EvidenceOptions& opt, BaselineEvidence& e) {
  for (const auto& b : r.benchmarks) {
    const BenchmarkResult* p = find_benchmark(prev, b.name);
    if (!placed(&b) || !placed(p)) continue;
    ++e.kernels_compared;
    const double now = b.placement->roof_pct, before = p->placement->roof_pct;
    if (now < (1 - opt.share_drop) * before)
      e.failures.push_back({"share", b.name,
                            fmt::format("{:.1f}% of its roof, down from {:.1f}% in the previous run of this machine "
                                        "class ({:+.0f}%)",
                                        now, before, 100 * (now / before - 1))});
  }
}

}  // namespace

std::vector<BaselineEvidence> check_evidence(const std::vector<Results>& runs, const std::vector<std::string>& paths,
                                             const EvidenceOptions& opt) {
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return runs[a].provenance.value("utc_time", std::string()) < runs[b].provenance.value("utc_time", std::string());
  });
  std::vector<BaselineEvidence> out;
  std::map<std::string, std::size_t> last_of_class;  // class -> index into runs
  for (std::size_t i : order) {
    const Results& r = runs[i];
    BaselineEvidence e;
    e.path = paths.at(i);
    e.machine = machine_class(r);
    e.time = r.provenance.value("utc_time", std::string("?"));
    e.commit = r.provenance.value("git_commit", std::string("unknown")).substr(0, 12);
    for (const auto& b : r.benchmarks)
      if (b.implausible())
        e.failures.push_back({"implausible", b.name,
                              fmt::format("{:.0f}% of its roof ({}), above it by more than the run's noise (±{:.1f}%)",
                                          b.placement->roof_pct, binding_ceilings(*b.placement),
                                          100 * plausibility_allowance(*b.placement))});
    check_lessons(r, opt, e);
    if (auto it = last_of_class.find(e.machine); it != last_of_class.end()) {
      e.previous = paths.at(it->second);
      check_shares(r, runs[it->second], opt, e);
    }
    last_of_class[e.machine] = i;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<BaselineEvidence> check_evidence(const std::vector<std::string>& results_files,
                                             const EvidenceOptions& opt) {
  std::vector<Results> runs;
  for (const auto& f : results_files) runs.push_back(read_results(f));
  return check_evidence(runs, results_files, opt);
}

std::string render_evidence_text(const std::vector<BaselineEvidence>& all) {
  std::string s;
  int failed = 0;
  for (const auto& e : all) {
    failed += e.ok() ? 0 : 1;
    s += fmt::format("{} {} ({}, {} at {}): {} lesson pair(s){}\n", e.ok() ? "PASS" : "FAIL", e.path, e.machine,
                     e.commit, e.time, e.lessons,
                     e.previous.empty() ? ", first of its class"
                                        : fmt::format(", {} kernels against {}", e.kernels_compared, e.previous));
    for (const auto& f : e.failures) s += fmt::format("  {}: {}: {}\n", f.check, f.benchmark, f.text);
  }
  s += fmt::format("{} of {} results files fail the evidence check\n", failed, all.size());
  return s;
}

std::string render_evidence_markdown(const std::vector<BaselineEvidence>& all) {
  std::string s = "| verdict | results | machine | checked | why |\n|---|---|---|---|---|\n";
  for (const auto& e : all) {
    std::string why;
    for (const auto& f : e.failures)
      why += (why.empty() ? "" : "<br>") + md_cell(f.check + ": " + md_code(f.benchmark) + " " + f.text);
    s += fmt::format("| {} | {} | {} | {} lesson pair(s){} | {} |\n", e.ok() ? "PASS" : "**FAIL**", md_code(e.path),
                     md_cell(e.machine), e.lessons,
                     e.previous.empty()
                         ? ", first of its class"
                         : fmt::format(", {} kernels against {}", e.kernels_compared, md_code(e.previous)),
                     why.empty() ? "—" : why);
  }
  return s;
}

nlohmann::json evidence_json(const std::vector<BaselineEvidence>& all, const EvidenceOptions& opt) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& e : all) {
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : e.failures)
      failures.push_back({{"check", f.check}, {"benchmark", f.benchmark}, {"text", f.text}});
    files.push_back({{"path", e.path},
                     {"machine", e.machine},
                     {"utc_time", e.time},
                     {"commit", e.commit},
                     {"previous", e.previous.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.previous)},
                     {"lessons", e.lessons},
                     {"kernels_compared", e.kernels_compared},
                     {"ok", e.ok()},
                     {"failures", failures}});
  }
  return {{"schema", "roofbench.evidence.v1"},
          {"options",
           {{"lesson_tolerance", opt.lesson_tolerance}, {"share_drop", opt.share_drop}, {"roof_slack", kRoofSlack}}},
          {"files", files}};
}

}  // namespace roofbench
