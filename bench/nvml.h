#pragma once
// The few NVML calls the harness uses: the current SM clock and what is holding it down (power
// cap, thermal slowdown, ...), read after every sample. NVML is loaded with dlopen from the
// driver's libnvidia-ml.so.1 at run time, so a build links and runs without it (a machine with
// the toolkit but no driver, or a container without the library); then nothing is read.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace roofbench {

class Nvml {
 public:
  // The GPU with this PCI bus id ("0000:41:00.0", as cudaDeviceGetPCIBusId writes it). Never
  // throws: when NVML or the GPU is not there, available() is false and why() says why.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& why() const { return why_; }
  std::optional<double> sm_clock_hz() const;
  // The active clock-limiting reasons, by name; empty when none or unreadable.
  std::vector<std::string> clock_limits() const;

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  void* get_clock_ = nullptr;
  void* get_reasons_ = nullptr;
  void* shutdown_ = nullptr;
  std::string why_;
};

// Names of the bits of NVML's clocks-event (throttle) reason mask, lowest first; "gpu_idle" and
// the application/display clock settings are left out: they are not the chip slowing itself.
std::vector<std::string> clock_limit_names(std::uint64_t mask);

}  // namespace roofbench
