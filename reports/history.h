#pragma once
// roofbench history: results files of one device in commit order, one line per benchmark with
// its trend, and a chart per family. Besides each step between neighbouring runs, the latest run
// is compared with the best one before it (asv compares with the best value seen, not only the
// previous one), so that a slow creep of steps each too small to flag still shows:
//   STEP       the latest run is SLOWER than the one before it;
//   CREEP      the latest run is SLOWER than the best earlier run, and no single step between
//              them was SLOWER;
//   REGRESSED  SLOWER than the best, through an earlier SLOWER step that was never recovered;
//   ok         none of these (the verdicts are compare's: same statistics, same thresholds).
// Over the whole series, change points (e-divisive means with a permutation test, bench/stats.h)
// name the first run after each step of a kernel's rate, with at least 3 runs a side.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"
#include "bench/stats.h"
#include "reports/compare.h"

namespace roofbench {

struct HistoryRun {
  std::string path, commit, time;
  Results results;
};

struct HistoryStep {
  int from = 0, to = 0;  // run indices
  Verdict verdict = Verdict::unsure;
  double change = 0;
};
// As in compare, a step (or the comparison with the best run) that the kernel's roofs made too,
// between the same two runs, is the machine's and not the code's: UNSURE, with why.

struct BenchmarkHistory {
  std::string name, family, metric;
  std::vector<std::optional<double>> rate;  // median rate per run; empty where absent or failed
  std::vector<HistoryStep> steps;           // between consecutive runs that both have numbers
  int best = -1, latest = -1;               // run indices (best: the highest rate before latest)
  std::optional<Evidence> vs_best;          // latest against best
  Verdict vs_best_verdict = Verdict::unsure;
  std::string vs_best_reason;
  // Why a step or the comparison with the best is not the code's: its roofs moved too (the
  // machine's), or the two runs timed it differently (cold in one, warm in the other).
  std::string roofs;
  std::string flag;   // "STEP", "CREEP", "REGRESSED" or "ok"
  double threshold = 0;
  // Where its rate stepped over the whole history (change_points over the runs with a number:
  // e-divisive, significant at the history's alpha): index is the first run after each step.
  std::vector<ChangePoint> change_points;
};

struct History {
  std::string device;
  std::vector<HistoryRun> runs;           // in order, the device's only
  std::vector<std::string> other_device;  // files left out: another device than the latest run's
  std::vector<BenchmarkHistory> benchmarks;
  CompareOptions options;
  int flagged() const;
  int exit_code() const { return flagged() ? 1 : 0; }
};

// Files in the order given; a single folder is searched (recursively) for results.json files,
// which are then ordered by their run time. Throws InputError for fewer than two runs.
std::vector<HistoryRun> load_history(const std::vector<std::string>& paths);
History build_history(std::vector<HistoryRun> runs, const CompareOptions& opt);

std::string render_history_text(const History& h);
std::string render_history_markdown(const History& h);
// One chart per family: each benchmark's rate relative to its first run, across the runs.
std::vector<std::pair<std::string, std::string>> render_history_svgs(const History& h);  // (file name, svg)

// "▁▂▄▇" from a series (blank where a run has no number). The bars span at least `min_span`
// (relative) of the highest value.
std::string sparkline(const std::vector<std::optional<double>>& v, double min_span);

}  // namespace roofbench
