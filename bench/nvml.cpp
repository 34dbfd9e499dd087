#include "bench/nvml.h"

#include <dlfcn.h>

namespace roofbench {

namespace {
// NVML's C ABI, stable across driver versions; declared here because the toolkit image has no
// nvml.h. nvmlReturn_t is an int enum with 0 = success; nvmlDevice_t an opaque pointer.
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

template <class F>
std::function<F> symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) return {};
  return reinterpret_cast<F*>(p);
}
}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) {
  api_.source = "NVML";
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_ = "libnvidia-ml.so.1 not found";
    return;
  }
  api_.init = symbol<int()>(lib_, "nvmlInit_v2");
  api_.shutdown = symbol<int()>(lib_, "nvmlShutdown");
  api_.by_pci = symbol<int(const char*, void**)>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  api_.clock = symbol<int(void*, int, unsigned*)>(lib_, "nvmlDeviceGetClockInfo");
  // The current name (driver 535+) first, then the older one it replaced.
  api_.reasons = symbol<int(void*, unsigned long long*)>(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api_.reasons) api_.reasons = symbol<int(void*, unsigned long long*)>(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api_.power_mw = symbol<int(void*, unsigned*)>(lib_, "nvmlDeviceGetPowerUsage");
  api_.temperature = symbol<int(void*, int, unsigned*)>(lib_, "nvmlDeviceGetTemperature");
  api_.energy_mj = symbol<int(void*, unsigned long long*)>(lib_, "nvmlDeviceGetTotalEnergyConsumption");
  api_.power_limit_mw = symbol<int(void*, unsigned*)>(lib_, "nvmlDeviceGetEnforcedPowerLimit");
  api_.driver_version = symbol<int(char*, unsigned)>(lib_, "nvmlSystemGetDriverVersion");
  open(pci_bus_id);
}

Nvml::Nvml(NvmlApi api, const std::string& pci_bus_id) : api_(std::move(api)) { open(pci_bus_id); }

void Nvml::open(const std::string& pci_bus_id) {
  if (!api_.init || !api_.by_pci || !api_.clock || !api_.shutdown) {
    why_ = api_.source + " lacks the functions used";
    return;
  }
  if (const int rc = api_.init(); rc != 0) {
    why_ = "nvmlInit failed with NVML error " + std::to_string(rc);
    return;
  }
  initialised_ = true;
  void* dev = nullptr;
  if (const int rc = api_.by_pci(pci_bus_id.c_str(), &dev); rc != 0 || !dev) {
    why_ = "NVML does not know the GPU at " + pci_bus_id + " (NVML error " + std::to_string(rc) + ")";
    return;
  }
  device_ = dev;
}

Nvml::~Nvml() {
  if (initialised_ && api_.shutdown) api_.shutdown();
  if (lib_) dlclose(lib_);
}

std::optional<double> Nvml::sm_clock_hz() const {
  if (!device_) return std::nullopt;
  unsigned mhz = 0;
  if (api_.clock(device_, kNvmlClockSm, &mhz) != 0 || mhz == 0) return std::nullopt;
  return mhz * 1e6;
}

std::vector<std::string> Nvml::clock_limits() const {
  if (!device_ || !api_.reasons) return {};
  unsigned long long mask = 0;
  if (api_.reasons(device_, &mask) != 0) return {};
  return clock_limit_names(mask);
}

PowerReading Nvml::power() const {
  PowerReading r;
  if (!device_) return r;
  unsigned mw = 0, celsius = 0;
  unsigned long long mj = 0;
  // The energy counter first: read after a timed run, it closes the sample's energy window.
  if (api_.energy_mj && api_.energy_mj(device_, &mj) == 0) r.energy_j = static_cast<double>(mj) * 1e-3;
  if (api_.power_mw && api_.power_mw(device_, &mw) == 0) r.power_w = mw * 1e-3;
  if (api_.temperature && api_.temperature(device_, kNvmlTemperatureGpu, &celsius) == 0) r.temperature_c = celsius;
  return r;
}

std::optional<double> Nvml::energy_j() const {
  unsigned long long mj = 0;
  if (!device_ || !api_.energy_mj || api_.energy_mj(device_, &mj) != 0) return std::nullopt;
  return static_cast<double>(mj) * 1e-3;
}

std::optional<double> Nvml::power_limit_w() const {
  unsigned mw = 0;
  if (!device_ || !api_.power_limit_mw || api_.power_limit_mw(device_, &mw) != 0) return std::nullopt;
  return mw * 1e-3;
}

std::optional<std::string> Nvml::driver_version() const {
  char text[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_V2_BUFFER_SIZE is 80
  if (!initialised_ || !api_.driver_version || api_.driver_version(text, sizeof text - 1) != 0 || !text[0])
    return std::nullopt;
  return std::string(text);
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
