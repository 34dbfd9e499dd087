#pragma once
// A device runs instances and times them: the CPU (steady clock) or one CUDA GPU (events).
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/launch_timing.h"
#include "bench/power.h"
#include "bench/registry.h"

namespace roofbench {

class Device {
 public:
  virtual ~Device() = default;
  virtual Backend backend() const = 0;
  virtual std::string name() const = 0;
  virtual nlohmann::json describe() const = 0;  // results.json "device"
  virtual std::string timer() const = 0;        // "steady-clock" or "cuda-events"
  virtual std::size_t flush_bytes() const = 0;  // size of the cache-flush buffer
  virtual void flush_cache() = 0;               // evict caches before a cold sample (untimed)
  // Seconds for one inst.run(), completed. `launch` says how a GPU sample starts (see
  // bench/launch_timing.h); the CPU has no launch to hide and ignores it.
  virtual double time_run(Instance& inst, Launch launch) = 0;
  // How samples taken with `launch` were started, one line for results.json; "" on the CPU.
  virtual std::string launch_method(Launch launch) const { return ""; }
  virtual void synchronize() = 0;
  virtual std::optional<double> clock_hz() = 0;  // current SM / core clock where readable
  // A cheap reading of the clock, taken after every sample outside its timing; nullopt where
  // none is cheap enough. Throttled samples are found with it.
  virtual std::optional<double> sample_clock_hz() { return std::nullopt; }
  // What held the clock or the sample down: NVML's reasons right now ("sw_power_cap",
  // "hw_thermal_slowdown"), or on the CPU "cpu_quota" when the cgroup was throttled by its CPU
  // quota between sample_begins() and sample_ends(). Asked after every timed sample.
  virtual std::vector<std::string> clock_limits() { return {}; }
  // Called just before each timed sample's power reading and just after its last one: outside
  // the timing and the energy window, around both.
  virtual void sample_begins() {}
  virtual void sample_ends() {}
  // The power state now (energy counter, power, temperature; bench/power.h), read just after every
  // timed sample, outside its timing; fields absent where not readable.
  virtual PowerReading power_reading() { return {}; }
  // power_reading()'s energy counter alone: read just before every timed sample (the window's
  // start), after every batch of an energy pass and while its update interval is probed, where
  // NVML's three queries of power_reading() would cost more.
  virtual std::optional<double> energy_j() { return power_reading().energy_j; }
  // How often power_reading()'s energy counter advances, probed once (counter_update_interval,
  // bench/power.h: up to 1.5 s, on NVML about 0.3 s) and kept; nullopt where it has none.
  std::optional<double> energy_counter_interval_s() {
    if (!energy_interval_probed_) {
      energy_interval_probed_ = true;
      energy_interval_s_ = counter_update_interval([this] { return energy_j(); }, 1.5);
    }
    return energy_interval_s_;
  }
  // Where those come from ("NVML", "RAPL: package-0"), or "unavailable: " and why.
  virtual std::string power_source() const { return "unavailable: this device reads no power"; }
  // Asked after a benchmark failed: empty while the device can still run work, else why it
  // cannot (a CUDA kernel fault, such as an illegal address or a trap, leaves the context
  // unusable for the rest of the process: every later call returns the same error).
  virtual std::string lost() { return ""; }

 private:
  bool energy_interval_probed_ = false;
  std::optional<double> energy_interval_s_;
};

// What --device names, parsed once where the command line is read (DeviceSpec::parse, the one
// place that knows its spelling) and passed on as this type.
struct DeviceSpec {
  enum class Kind { automatic, cpu, cuda, all };
  Kind kind = Kind::automatic;  // automatic: the first CUDA GPU, else the CPU
  int index = 0;                // cuda: the N of cuda:N
  // "auto", "cpu", "cuda:N" (N of 1 to 4 digits) or "all" (one process per GPU: cmd_run); any
  // other text throws InputError, with what is expected.
  static DeviceSpec parse(const std::string& text);
  std::string text() const;  // as the command line spells it
  bool operator==(const DeviceSpec& o) const { return kind == o.kind && index == o.index; }
};

// The device `spec` names. Throws InputError for `all` (a sweep of processes, not one device), a
// build without CUDA, or a GPU that is not there.
std::unique_ptr<Device> open_device(const DeviceSpec& spec);

std::unique_ptr<Device> make_cpu_device();
#ifdef ROOFBENCH_HAVE_CUDA
// 0 when there is no GPU or driver; then *why (when given) says what CUDA answered, e.g.
// "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)".
int cuda_device_count(std::string* why = nullptr);
std::unique_ptr<Device> make_cuda_device(int index);
// GPU `index`'s UUID in hex (32 digits), from its properties: no context is made.
std::string cuda_device_uuid(int index);
// The compute capability this build's code is for ("9.0" for sm_90a, the first entry of
// CMAKE_CUDA_ARCHITECTURES otherwise): what `run --dry-run` plans for when no GPU is visible.
std::string cuda_build_compute_capability();
#endif

}  // namespace roofbench
