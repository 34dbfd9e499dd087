#pragma once
// `roofbench run --device all`: one process per visible GPU, each pinned to its GPU with
// CUDA_VISIBLE_DEVICES and writing its own folder, OUT/<host>-gpu<i>-<uuid>, one after another
// (clean numbers) or all at once (--concurrent: shows what the GPUs share, the host's PCIe and
// CPU). Without a GPU, the CPU runs once, into OUT/<host>-cpu. `roofbench fleet OUT` then puts
// them side by side.
#include <sys/types.h>

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace roofbench::cli {

// The child's arguments (after the program name): `args` with --device all as --device cuda:0
// (its one visible GPU) and --out as `out`; throws InputError where args have no --device all.
std::vector<std::string> child_arguments(const std::vector<std::string>& args, const std::string& out);

// What CUDA_VISIBLE_DEVICES says for the parent's GPU `i`: the i-th entry of the parent's list
// when it has one (nullptr or empty: i itself).
std::string visible_device(const char* parent_list, int i);

// A folder name: what is not [A-Za-z0-9._-] becomes '-'.
std::string folder_name(const std::string& s);

// One child process of --device all: the parent's GPU `gpu`, what its CUDA_VISIBLE_DEVICES says,
// its arguments after argv[0], its folder, and where its console goes ("": this process's).
struct ChildRun {
  int gpu = 0;
  std::string visible;
  std::vector<std::string> args;
  std::string out;
  std::string log;
  // Filled in by run_children: the exit code (128 + the signal for a child a signal killed, and
  // for one never started because a signal stopped the sweep), and its seconds.
  int code = -1;
  double wall_s = 0;
  bool started = false;
};

// Runs `exe` (as argv0, then each child's args) once per child with CUDA_VISIBLE_DEVICES set to
// its `visible`, one after another or all at once. SIGINT and SIGTERM that reach this process
// meanwhile go on to every child running (a run ends at its next sample and writes what it has)
// and no child starts after one. Says on `os` when each starts and ends (a failed child's last
// console lines with it, when they went to a log). Returns the worst exit code.
int run_children(std::vector<ChildRun>& children, const std::string& exe, const std::string& argv0, bool concurrent,
                 std::ostream& os);

int run_every_device(const RunArgs& a, bool ceilings_only, int argc, char** argv);

}  // namespace roofbench::cli
