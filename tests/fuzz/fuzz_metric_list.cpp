// libFuzzer target: the CUPTI metric list a user gives (--metrics a,b,c on run and metrics),
// split and then looked up for "did you mean" as roofbench does with an unknown name. An
// InputError is the program refusing; anything else that escapes, and every sanitizer report, is
// a finding. Run: scripts/fuzz.sh
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "roofbench/types.h"
#include "roofline/cupti/metrics.h"

using namespace roofbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Base names, as MetricHost::base_metrics() gives them.
  static const std::vector<std::string> known = {
      "sm__throughput", "dram__bytes_read", "dram__bytes_write", "lts__t_bytes", "l1tex__t_bytes",
      "sm__inst_executed_pipe_tensor_op_hmma", "smsp__sass_thread_inst_executed_op_ffma_pred_on",
      "gpu__time_duration"};
  try {
    for (const auto& name : cupti::parse_metric_list(std::string(reinterpret_cast<const char*>(data), size)))
      (void)cupti::near_names(name, known);
  } catch (const InputError&) {
  }
  return 0;
}
