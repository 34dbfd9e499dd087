#pragma once
// roofbench ab BASE_BIN NEW_BIN: verdicts from an interleaved A/B of two builds.
//
// Two runs made one after the other differ by more than their code: on a shared or virtual
// machine the bandwidth a process gets depends on where its memory and its vCPUs landed, and
// that is drawn afresh with every process (docs/regression.md measures it). An A/B therefore
// runs both builds in rounds, each round a fresh process of each in random order, and judges
// the change from the paired rounds: per benchmark and round, d = log(rate NEW / rate BASE) of
// the two processes' medians; the change is exp(mean d) - 1, its interval the Student t interval
// of the mean over rounds, its p the paired t test. Rounds in which the machine was slow for
// both cancel; a process's own luck becomes noise that more rounds average out. The verdict
// rules are compare's (reports/compare.h): SAME inside ±threshold, SLOWER/FASTER significant
// after Benjamini-Hochberg and at least the threshold, UNSURE otherwise.
//
// `roofbench calibrate BIN` runs the same build against itself (A/A) and keeps, per benchmark,
// the standard deviation of d over its rounds: the noise of one run against one run. compare and
// ab then raise each benchmark's threshold to 3 sigma of it (sigma / sqrt(rounds) for ab).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/results.h"
#include "reports/compare.h"

namespace roofbench {

// One round: the results of one fresh run of each build, and which ran first.
struct AbRound {
  Results base, fresh;
  std::string base_path, new_path;
  bool base_first = true;
};

// The paired verdicts over the rounds (at least one). Benchmarks are matched by name; those in
// one build only are listed (only_base, only_new); a benchmark that fails in any round of NEW
// is FAILED. Throws InputError when the rounds ran on different devices or share no benchmark.
Comparison compare_rounds(const std::vector<AbRound>& rounds, const CompareOptions& opt);

// Per benchmark: the log rate ratios of its rounds, NEW over BASE (rounds where both sides have
// a number). What compare_rounds judges, and what calibrate keeps the spread of.
std::map<std::string, std::vector<double>> round_log_ratios(const std::vector<AbRound>& rounds);

// The calibration file, schema roofbench.noise.v1: per benchmark the standard deviation of the
// log rate ratio of two runs of one build, from an A/A of `rounds.size()` rounds.
nlohmann::json noise_json(const std::vector<AbRound>& rounds, const std::vector<std::string>& run_args);
// Reads a calibration file into CompareOptions::noise form; refuses one made on another device
// than `device` (device_id of the results it will judge) unless `device` is empty.
std::map<std::string, double> load_noise(const std::string& path, const std::string& device);
// The same for the text of one; `name` names it in errors (tests/fuzz/fuzz_noise.cpp).
std::map<std::string, double> parse_noise(const std::string& text, const std::string& name, const std::string& device);

// compare_json plus what an A/B adds: the method and the rounds (which build ran first, the paths).
nlohmann::json ab_json(const Comparison& c, const std::vector<AbRound>& rounds);

}  // namespace roofbench
