#pragma once
// The few NVML calls the harness uses: the current SM clock, what is holding it down (power cap,
// thermal slowdown, ...), the power, the temperature and the energy counter, read around every
// sample. NVML is loaded with dlopen from the driver's libnvidia-ml.so.1 at run time, so a build
// links and runs without it (a machine with the toolkit but no driver, or a container without
// the library); then nothing is read. The calls go through a table (NvmlApi), so that a recorded
// trace can be replayed through the same code on a machine without a GPU (tests, labelled so).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/power.h"

namespace roofbench {

// NVML's entry points, each returning nvmlReturn_t (0 = success). Those that may be absent from
// an older driver may be empty.
struct NvmlApi {
  std::function<int()> init, shutdown;
  std::function<int(const char*, void**)> by_pci;               // nvmlDeviceGetHandleByPciBusId_v2
  std::function<int(void*, int, unsigned*)> clock;              // nvmlDeviceGetClockInfo
  std::function<int(void*, unsigned long long*)> reasons;       // nvmlDeviceGetCurrentClocksEventReasons
  std::function<int(void*, unsigned*)> power_mw;                // nvmlDeviceGetPowerUsage
  std::function<int(void*, int, unsigned*)> temperature;        // nvmlDeviceGetTemperature
  std::function<int(void*, unsigned long long*)> energy_mj;     // nvmlDeviceGetTotalEnergyConsumption
  std::function<int(void*, unsigned*)> power_limit_mw;          // nvmlDeviceGetEnforcedPowerLimit
  std::function<int(char*, unsigned)> driver_version;           // nvmlSystemGetDriverVersion
  std::string source;  // "NVML" for the driver's; a replay names its trace
};

class Nvml {
 public:
  // The GPU with this PCI bus id ("0000:41:00.0", as cudaDeviceGetPCIBusId writes it), through
  // the driver's libnvidia-ml.so.1. Never throws: when NVML or the GPU is not there,
  // available() is false and why() says why.
  explicit Nvml(const std::string& pci_bus_id);
  // The same through another table: a recorded trace replayed (tests).
  Nvml(NvmlApi api, const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& why() const { return why_; }
  const std::string& source() const { return api_.source; }
  std::optional<double> sm_clock_hz() const;
  // The active clock-limiting reasons, by name; empty when none or unreadable.
  std::vector<std::string> clock_limits() const;
  // Power (NVML's own averaging window), temperature and the energy counter, each where readable.
  PowerReading power() const;
  std::optional<double> energy_j() const;  // power()'s energy counter alone, one query
  // The power limit the driver enforces now, watts.
  std::optional<double> power_limit_w() const;
  // The NVIDIA display driver's version, as nvidia-smi prints it ("580.95.05"): not the CUDA
  // driver API version (cudaDriverGetVersion's "13.0"), which many driver releases share.
  std::optional<std::string> driver_version() const;

 private:
  void open(const std::string& pci_bus_id);
  NvmlApi api_;
  void* lib_ = nullptr;
  void* device_ = nullptr;
  bool initialised_ = false;
  std::string why_;
};

// Names of the bits of NVML's clocks-event (throttle) reason mask, lowest first; "gpu_idle" and
// the application/display clock settings are left out: they are not the chip slowing itself.
std::vector<std::string> clock_limit_names(std::uint64_t mask);

}  // namespace roofbench
