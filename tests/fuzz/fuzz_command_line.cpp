// libFuzzer target: the command line. The input is argv after the program's name, split at NUL
// bytes; it is parsed as roofbench's main parses it, and the options that become regular
// expressions or thresholds are compiled as run, compare, history and ab compile them, then
// matched against benchmark names. A usage error (exit code set) or an InputError is the
// program refusing; anything else that escapes, and every sanitizer report or time-out, is a
// finding. Run: scripts/fuzz.sh
#include <cstddef>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "bench/user_regex.h"
#include "reports/compare.h"
#include "roofline/cupti/metrics.h"

using namespace roofbench;

namespace {

void compile_and_match(const std::string& option, const std::string& pattern) {
  const std::regex re = user_regex(option, pattern);
  for (const char* name : {"gemm/wmma/fp16/M:4096/N:4096/K:4096", "stream/saxpy/fp32/n:67108864",
                           "ceiling/dram_triad", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
    (void)std::regex_search(name, re);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"roofbench"};
  args.emplace_back();
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.emplace_back();
    } else {
      args.back() += static_cast<char>(data[i]);
    }
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  try {
    const cli::CommandLine c = cli::parse_command_line(static_cast<int>(argv.size()), argv.data(), out, err);
    if (c.exit_code >= 0) return 0;
    compile_and_match("--filter", c.run_args.filter);
    compile_and_match("--skip", c.run_args.skip);
    compile_and_match("--filter", c.met.filter);
    if (!c.run_args.metrics.empty()) (void)cupti::parse_metric_list(c.run_args.metrics);
    for (const auto* thresholds : {&c.cmp.threshold_for, &c.hist.threshold_for, &c.ab.threshold_for}) {
      const CompareOptions opt = cli::compare_options(5, *thresholds, 0.01);
      (void)opt.threshold_for("gemm/wmma/fp16/M:4096/N:4096/K:4096");
    }
  } catch (const InputError&) {
  }
  return 0;
}
