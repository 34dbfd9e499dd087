// A build without CUDA has no counters to read; roofline/cupti/profiler.cpp is the real one.
#include "bench/counters.h"

namespace roofbench {

std::unique_ptr<CounterCollector> open_counters(Device&, const CounterRequest& req, nlohmann::json* status) {
  *status = req.enabled ? nlohmann::json{{"requested", true},
                                         {"available", false},
                                         {"reason", "this roofbench was built without CUDA, so without CUPTI"}}
                        : nlohmann::json(nullptr);
  return nullptr;
}

}  // namespace roofbench
