#pragma once
// roofbench fleet: results files of many devices (every GPU of a node, every node of a cluster)
// side by side, to find the sick one before it slows a job. Files are grouped by device model
// (kind and name: "cuda: NVIDIA H100 80GB HBM3"); models are never compared with each other. In
// each group, every ceiling and every kernel gets each device's figure (a ceiling's value, a
// kernel's FLOP/s or, without FLOPs, B/s) beside the group's median, and a device is flagged on a
// figure that is more than `threshold` below the median (default 5%) or, with `mad_k`, more than
// k x the group's scaled MAD (1.4826 MAD, a robust sigma) below it. A group of fewer than three
// devices is shown but not judged: with two, no median says which one is off. Each device's
// state rides along: ECC, and the clock-limit reasons (NVML) and `clock:` warnings of its samples.
// A run flagged on any figure is an outlier: `roofbench fleet` exits 1, so a job can gate on it.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/results.h"

namespace roofbench {

struct FleetMember {
  std::string path;   // the results file
  std::string label;  // host, device index and UUID ("node07 cuda:3 GPU-5e1f..."); the file's folder
                      // when those repeat within a group (several runs of one machine)
  Results results;
};

struct FleetFigure {
  std::string name;  // a ceiling's name ("dram_copy") or a benchmark's full name
  bool ceiling = false;
  std::string unit;                          // "B/s", "FLOP/s", "op/s", "launch/s"
  std::vector<std::optional<double>> value;  // per member; empty where it did not run or failed
  double median = 0, mad = 0;                // over the members that have it
  std::vector<bool> low;                     // per member: flagged on this figure
};

struct FleetGroup {
  std::string model;
  std::vector<FleetMember> members;
  std::vector<FleetFigure> figures;  // ceilings first, then kernels, in the first member's order
  std::vector<std::string> state;    // per member: "ECC on; clock limits: SW power cap (3 samples)"
  std::vector<std::vector<std::string>> why;  // per member: each figure that flags it, one line each
  bool judged = false;                        // three or more members
};

struct FleetOptions {
  double threshold = 0.05;  // fraction below the median that flags
  double mad_k = 0;         // > 0: also flag below median - k x 1.4826 MAD
};

struct Fleet {
  std::vector<FleetGroup> groups;
  FleetOptions options;
  int flagged() const;  // members flagged, over every group
  int exit_code() const { return flagged() ? 1 : 0; }
};

// Results files, or folders searched (recursively) for results.json files; throws InputError when
// a file does not load or fewer than two files are found.
std::vector<FleetMember> load_fleet(const std::vector<std::string>& paths);
Fleet build_fleet(std::vector<FleetMember> members, const FleetOptions& opt);

std::string render_fleet_text(const Fleet& f);
std::string render_fleet_markdown(const Fleet& f);
std::string render_fleet_html(const Fleet& f);
nlohmann::json fleet_json(const Fleet& f);  // schema roofbench.fleet.v1

}  // namespace roofbench
