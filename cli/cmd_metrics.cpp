// The commands that read the registry alone: metrics (what each CUDA benchmark's counters cost
// on a chip, from CUPTI's host API, no GPU needed) and list.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <regex>

#include "cli/commands.h"
#include "bench/user_regex.h"
#include "bench/plan.h"
#include "roofline/cupti/metrics.h"
#ifdef ROOFBENCH_HAVE_CUDA
#include "roofline/cupti/host.h"
#endif

namespace roofbench::cli {

int cmd_metrics(const MetricsArgs& a) {
#ifdef ROOFBENCH_HAVE_CUDA
  cupti::MetricHost host(a.chip.empty() ? std::string(cupti::kHopperChip) : a.chip);
  if (a.all) {
    for (const auto& m : host.base_metrics()) std::cout << m << "\n";
    return kExitOk;
  }
  std::vector<std::string> user;
  if (!a.metrics.empty()) {
    user = cupti::parse_metric_list(a.metrics);
    host.require_known(user, "--metrics");
  }
  const std::regex re = user_regex("--filter", a.filter);
  std::cout << fmt::format("chip {}: at most {} hardware metrics per pass; default sets stay within {} passes\n",
                           host.chip(), host.max_hardware_metrics_per_pass(), cupti::kPassBudget);
  std::map<std::vector<std::string>, int> passes;
  int shown = 0;
  for (const auto& v : registry()) {
    if (v.backend != Backend::cuda || !v.launches_kernels || v.sizes.empty() || !std::regex_search(v.base_name(), re))
      continue;
    const BenchmarkResult b = declare(v, v.sizes.front());
    const std::vector<std::string> metrics = user.empty() ? cupti::default_metrics(b) : user;
    auto it = passes.find(metrics);
    if (it == passes.end()) it = passes.emplace(metrics, host.passes(metrics)).first;
    std::string list;
    for (const auto& m : metrics) list += (list.empty() ? "" : ",") + m;
    std::cout << fmt::format("{:<40} {} pass{}  {}\n", v.base_name(), it->second, it->second == 1 ? " " : "es", list);
    ++shown;
  }
  if (!shown) throw InputError("--filter '" + a.filter + "' matches no CUDA benchmark (see `roofbench list`)");
  return kExitOk;
#else
  (void)a;
  throw InputError("this roofbench was built without CUDA, so without CUPTI's metric tables");
#endif
}

int cmd_list(bool builtin) {
  std::cout << fmt::format("{:<5} {:<42} {:<7} {:<26} {}\n", "dev", "benchmark", "unit", "sizes (quick)", "what");
  for (const auto& v : registry()) {
    if (v.builtin && !v.ceiling && !builtin) continue;
    std::string sizes;
    for (const auto& p : v.quick_sizes) sizes += (sizes.empty() ? "" : " ") + params_to_string(p);
    if (sizes.size() > 26) sizes = sizes.substr(0, 23) + "...";
    std::cout << fmt::format("{:<5} {:<42} {:<7} {:<26} {}\n", to_string(v.backend),
                             v.base_name() + (v.ceiling ? " [ceiling]" : v.timing_only ? " [timing only]" : ""),
                             to_string(v.unit), sizes, v.summary);
  }
  return kExitOk;
}

}  // namespace roofbench::cli
