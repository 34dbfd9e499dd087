#pragma once
// CUPTI's Profiler Host API: metric names, configuration images and pass counts for a named
// chip. It needs no GPU and no permissions (libcupti does not load the driver for it), so CI
// checks every default metric set against GH100 (H100/H200) on a machine without a GPU.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace roofbench::cupti {

// The chips this CUPTI knows ("GH100", "AD102", ...).
std::vector<std::string> supported_chips();

// Why counters could not be read, in one line a user can act on, from CUPTI's result code and
// the call that returned it (privileges, virtualized GPU, another CUPTI client, MIG, ...).
struct Failure {
  std::string reason;  // one line, e.g. "no permission to read GPU performance counters (...)"
  std::string hint;    // how to fix it, where there is a fix; else empty
};
Failure explain_failure(int cupti_result, const std::string& call);

// Whether a failure met while profiling or tracing one benchmark holds for every later one too
// (privileges, a virtualized or MIG device, another CUPTI client): then collection stops for the
// session. CUPTI_ERROR_NOT_SUPPORTED and INVALID_DEVICE do not: the device passed
// cuptiProfilerDeviceSupported when counters were opened, so there they mean this benchmark's
// work (its streams, graphs or library calls) could not be profiled, and the next is tried.
bool ends_session(int cupti_result);

// explain_failure for one benchmark: the same line, except that the two results above say it was
// this benchmark that could not be profiled, not the device.
Failure explain_benchmark_failure(int cupti_result, const std::string& call);

// cuptiProfilerDeviceSupported's answer, one CUpti_Profiler_Support_Level per field
// (0 unknown, 1 unsupported, 2 disabled, 3 supported). Empty when supported, else why not.
struct DeviceSupport {
  int overall = 3, architecture = 3, sli = 3, vgpu = 3, confidential_compute = 3, cmp = 3, wsl = 3;
};
std::string unsupported_reason(const DeviceSupport& s);

// A metric list scheduled for the range profiler: its configuration image, its passes, and the
// host object the metrics were added to. Counter data is evaluated with that same object, as
// NVIDIA's range_profiling sample and nvbench do; a profiler keeps the configuration alive as
// long as counter data made with it may be evaluated.
class MetricConfig {
 public:
  ~MetricConfig();
  MetricConfig(const MetricConfig&) = delete;
  MetricConfig& operator=(const MetricConfig&) = delete;

  const std::vector<std::string>& metrics() const { return metrics_; }
  const std::vector<std::uint8_t>& image() const { return image_; }
  int passes() const { return passes_; }
  // The metrics' values in range `range` of a decoded counter-data image made with image().
  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range) const;

 private:
  friend class MetricHost;
  struct Object;
  MetricConfig(Object* obj, std::vector<std::string> metrics, std::vector<std::uint8_t> image, int passes);
  Object* obj_;
  std::vector<std::string> metrics_;
  std::vector<std::uint8_t> image_;
  int passes_;
};

class MetricHost {
 public:
  // `availability`: the device's counter-availability image (empty: assume every counter is
  // there, as for a chip named without a GPU). Throws InputError for a chip CUPTI does not know.
  explicit MetricHost(std::string chip, std::vector<std::uint8_t> availability = {});
  ~MetricHost();
  MetricHost(const MetricHost&) = delete;
  MetricHost& operator=(const MetricHost&) = delete;

  const std::string& chip() const { return chip_; }

  // Every base metric of the chip (counters, ratios, throughputs), sorted.
  const std::vector<std::string>& base_metrics();

  // The names this chip does not have, each with the nearest names it does have.
  struct Unknown {
    std::string name;
    std::vector<std::string> near;
  };
  std::vector<Unknown> unknown(const std::vector<std::string>& names);
  // Throws InputError naming every unknown metric and its near names; `what` says whose list.
  void require_known(const std::vector<std::string>& names, const std::string& what);

  // `names` scheduled on a host object of their own (a configuration that fails to build leaves
  // its object unusable): the image, its passes, and the object that evaluates its counter data.
  // Throws InputError for names the chip does not have.
  std::shared_ptr<const MetricConfig> configure(const std::vector<std::string>& names);
  int passes(const std::vector<std::string>& names) { return configure(names)->passes(); }

  // The most hardware (non-SASS) metrics CUPTI can schedule in one pass on this chip.
  int max_hardware_metrics_per_pass();

 private:
  struct Object;  // one cuptiProfilerHostInitialize'd object
  std::string chip_;
  std::vector<std::uint8_t> availability_;
  Object* obj_ = nullptr;
  std::vector<std::string> base_;
};

}  // namespace roofbench::cupti
