#pragma once
// The `roofbench` subcommands, one function each; cli/driver.cpp parses the command line and
// calls them. Each returns the process exit code (kExitOk and the others, below) and throws
// InputError for bad input, which the driver prints on one line with exit 2.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "bench/device.h"
#include "bench/harness.h"
#include "reports/compare.h"

namespace roofbench::cli {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2;

// The command line, parsed and run, in this process as it is: what roofbench_main does after it
// has restarted for OpenBLAS where it must (bench/openblas_core.h). A process that may not
// restart itself, Python with the roofbench package loaded, calls this.
int run_command_line(int argc, char** argv);

struct RunArgs {
  DeviceSpec device;  // --device, parsed once (bench/device.h)
  std::string filter;
  std::string skip;  // --skip REGEX
  bool quick = false;
  bool warm = false;
  bool dry_run = false;        // print the plan and its time estimate, measure nothing
  bool profile = false;        // under a profiler: one sample each, launches not held
  bool verbose = false;        // every warning on the console, not a count of each kind
  bool no_builtin = false;     // roofbench's own families left out: a user's kernels and the ceilings
  bool untrusted = false;      // fresh inputs every sample and random spot checks (MeasureOptions::untrusted)
  std::string ceilings_from;   // a results file of this machine whose ceilings this run uses
  std::string out;
  std::uint64_t seed = MeasureOptions{}.seed;
  std::optional<double> noise_target_pct, budget_s, cooldown_s;
  std::optional<double> energy_pass_s;  // --energy-pass (MeasureOptions::energy_pass_s)
  std::optional<double> sustain_s;  // --sustain: the hold of the sustained ceiling passes (PlanOptions::sustain_s)
  std::optional<int> min_samples;  // --min-samples: before the noise target or floor may stop sampling
  int placements = 1;  // --placements: fresh instances per benchmark (MeasureOptions::placements)
  bool counters = false;
  std::string metrics;  // --metrics a,b,c
  std::vector<std::string> gbench_args;
  bool concurrent = false;  // --device all: every GPU at once, not one after another
};
// `run` and `ceilings` (ceilings_only). The exit code of a run stopped by a signal is 128 + the
// signal's number, after its partial results are written.
int cmd_run(const RunArgs& a, bool ceilings_only, int argc, char** argv);

int cmd_report(const std::vector<std::string>& paths, const std::string& out);
int cmd_merge(const std::vector<std::string>& paths, const std::string& out, int argc, char** argv);
// Nsight Compute's counters for one benchmark (ncu --csv output) beside the run's CUPTI counters.
int cmd_crosscheck(const std::string& results, const std::string& ncu_csv, const std::vector<std::string>& benchmarks,
                   const std::string& json_out);

struct CompareArgs {
  std::string base, fresh, markdown, json;
  std::string chart, html;  // --chart FILE.svg, --html FILE.html: the roofline diff
  double threshold_pct = 5;
  std::vector<std::string> threshold_for;  // "REGEX=PCT"
  double alpha = CompareOptions{}.alpha;
  bool allow_device_mismatch = false;
  bool by_roof = false;  // --by-roof
  std::string noise;     // --noise FILE (roofbench calibrate)
};
// The options compare, history and ab share; throws InputError on a bad --threshold-for.
CompareOptions compare_options(double threshold_pct, const std::vector<std::string>& threshold_for, double alpha);
int cmd_compare(const CompareArgs& a);

struct HistoryArgs {
  std::vector<std::string> paths;
  std::string out;
  double threshold_pct = 5;
  std::vector<std::string> threshold_for;
  double alpha = CompareOptions{}.alpha;
  bool by_roof = false;
  std::string noise;
};
int cmd_history(const HistoryArgs& a);

// roofbench fleet PATHS... [--out DIR] [--threshold PCT] [--mad K] (cli/cmd_results.cpp).
struct FleetArgs {
  std::vector<std::string> paths;
  std::string out;
  double threshold_pct = 5;
  double mad_k = 0;
};
int cmd_fleet(const FleetArgs& a);

// roofbench evidence PATHS... [--markdown FILE] [--json FILE] (cli/cmd_results.cpp): each results
// file held to the model (reports/evidence.h); exit 1 when any fails.
struct EvidenceArgs {
  std::vector<std::string> paths;
  std::string markdown, json;
  double lesson_tolerance_pct = 15;
  double share_drop_pct = 25;
};
int cmd_evidence(const EvidenceArgs& a);

// roofbench ab BASE_BIN NEW_BIN [options] -- [run options] (cli/cmd_ab.cpp).
struct AbArgs {
  std::string base_bin, new_bin;
  std::vector<std::string> run_args;  // after --: what each `run` gets
  int rounds = 10;
  std::uint64_t seed = 1;  // of the order within each round
  std::string out = "results/ab", noise, markdown;
  double threshold_pct = 5;
  std::vector<std::string> threshold_for;
  double alpha = CompareOptions{}.alpha;
};
int cmd_ab(const AbArgs& a);

// roofbench calibrate BIN [options] -- [run options]: an A/A whose noise file compare and ab take.
struct CalibrateArgs {
  std::string bin;
  std::vector<std::string> run_args;
  int rounds = 10;
  std::uint64_t seed = 1;
  std::string out = "results/calibrate";
};
int cmd_calibrate(const CalibrateArgs& a);

struct MetricsArgs {
  std::string chip;  // empty: GH100
  std::string filter;
  std::string metrics;
  bool all = false;
};
int cmd_metrics(const MetricsArgs& a);
int cmd_list(bool builtin);  // builtin false: roofbench's own families left out, the ceilings kept

// What the command line asks for, parsed (cli/cmd_line.cpp) and not yet run.
struct CommandLine {
  int exit_code = -1;   // >= 0: parsing ended it (help or version printed, or a usage error said): exit so
  std::string command;  // the subcommand: run, ceilings, report, merge, ...
  RunArgs run_args;
  std::vector<std::string> report_paths, merge_paths;
  std::string report_out, merge_out;
  std::string xc_results, xc_csv, xc_json;
  std::vector<std::string> xc_benchmarks;
  CompareArgs cmp;
  HistoryArgs hist;
  FleetArgs fleet;
  EvidenceArgs evidence;
  AbArgs ab;
  CalibrateArgs cal;
  MetricsArgs met;
  bool list_no_builtin = false;
};
// Parses argv without running anything: help and usage errors go to `out` and `err` and set
// exit_code; an argument `run` cannot take throws InputError.
CommandLine parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace roofbench::cli
