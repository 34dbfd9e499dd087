#pragma once
// `roofbench run --device all`: one process per visible GPU, each pinned to its GPU with
// CUDA_VISIBLE_DEVICES and writing its own folder, OUT/<host>-gpu<i>-<uuid>, one after another
// (clean numbers) or all at once (--concurrent: shows what the GPUs share, the host's PCIe and
// CPU). Without a GPU, the CPU runs once, into OUT/<host>-cpu. `roofbench fleet OUT` then puts
// them side by side.
#include <string>
#include <vector>

#include "bench/commands.h"

namespace roofbench::cli {

// The child's arguments (after the program name): `args` with --device all as --device cuda:0
// (its one visible GPU) and --out as `out`; throws InputError where args have no --device all.
std::vector<std::string> child_arguments(const std::vector<std::string>& args, const std::string& out);

// What CUDA_VISIBLE_DEVICES says for the parent's GPU `i`: the i-th entry of the parent's list
// when it has one (nullptr or empty: i itself).
std::string visible_device(const char* parent_list, int i);

// A folder name: what is not [A-Za-z0-9._-] becomes '-'.
std::string folder_name(const std::string& s);

int run_every_device(const RunArgs& a, bool ceilings_only, int argc, char** argv);

}  // namespace roofbench::cli
