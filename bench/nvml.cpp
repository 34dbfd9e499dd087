#include "bench/nvml.h"

#include <dlfcn.h>

namespace roofbench {

namespace {
// NVML's C ABI, stable across driver versions; declared here because the toolkit image has no
// nvml.h. nvmlReturn_t is an int enum with 0 = success; nvmlDevice_t an opaque pointer.
using nvml_init_t = int (*)();
using nvml_shutdown_t = int (*)();
using nvml_by_pci_t = int (*)(const char*, void**);
using nvml_clock_t = int (*)(void*, int, unsigned*);
using nvml_reasons_t = int (*)(void*, unsigned long long*);
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_ = "libnvidia-ml.so.1 not found";
    return;
  }
  auto init = reinterpret_cast<nvml_init_t>(dlsym(lib_, "nvmlInit_v2"));
  auto by_pci = reinterpret_cast<nvml_by_pci_t>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
  get_clock_ = dlsym(lib_, "nvmlDeviceGetClockInfo");
  // The current name (driver 535+) first, then the older one it replaced.
  get_reasons_ = dlsym(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!get_reasons_) get_reasons_ = dlsym(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  shutdown_ = dlsym(lib_, "nvmlShutdown");
  if (!init || !by_pci || !get_clock_ || !shutdown_) {
    why_ = "libnvidia-ml.so.1 lacks the functions used";
    return;
  }
  if (const int rc = init(); rc != 0) {
    why_ = "nvmlInit failed with NVML error " + std::to_string(rc);
    shutdown_ = nullptr;
    return;
  }
  void* dev = nullptr;
  if (const int rc = by_pci(pci_bus_id.c_str(), &dev); rc != 0 || !dev) {
    why_ = "NVML does not know the GPU at " + pci_bus_id + " (NVML error " + std::to_string(rc) + ")";
    return;
  }
  device_ = dev;
}

Nvml::~Nvml() {
  if (shutdown_) reinterpret_cast<nvml_shutdown_t>(shutdown_)();
  if (lib_) dlclose(lib_);
}

std::optional<double> Nvml::sm_clock_hz() const {
  if (!device_) return std::nullopt;
  unsigned mhz = 0;
  if (reinterpret_cast<nvml_clock_t>(get_clock_)(device_, kNvmlClockSm, &mhz) != 0 || mhz == 0) return std::nullopt;
  return mhz * 1e6;
}

std::vector<std::string> Nvml::clock_limits() const {
  if (!device_ || !get_reasons_) return {};
  unsigned long long mask = 0;
  if (reinterpret_cast<nvml_reasons_t>(get_reasons_)(device_, &mask) != 0) return {};
  return clock_limit_names(mask);
}

std::vector<std::string> clock_limit_names(std::uint64_t mask) {
  // nvmlClocksEventReason* bits.
  static const std::pair<std::uint64_t, const char*> bits[] = {
      {0x4, "sw_power_cap"},           {0x8, "hw_slowdown"},          {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"}, {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : bits)
    if (mask & bit) out.push_back(name);
  return out;
}

}  // namespace roofbench
