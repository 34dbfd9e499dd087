#include "roofline/cupti/host.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "roofbench/types.h"
#include "roofline/cupti/cupti_check.h"
#include "roofline/cupti/metrics.h"

namespace roofbench::cupti {

struct MetricHost::Object {
  CUpti_Profiler_Host_Object* host = nullptr;
};
struct MetricConfig::Object {
  CUpti_Profiler_Host_Object* host = nullptr;
};

namespace {

// A host object of its own: a configuration that fails to build leaves its host object
// unusable, so every image is built on a fresh one.
CUpti_Profiler_Host_Object* make_host(const std::string& chip, const std::vector<std::uint8_t>& availability) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  CUPTI_CHECK(cuptiProfilerHostInitialize(&p));
  return p.pHostObject;
}

void free_host(CUpti_Profiler_Host_Object* h) {
  if (!h) return;
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = h;
  CUPTI_CHECK_NOEXCEPT(cuptiProfilerHostDeinitialize(&p));
}

struct HostGuard {
  CUpti_Profiler_Host_Object* h;
  ~HostGuard() { free_host(h); }
};

std::vector<const char*> c_names(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

// " (CUPTI_ERROR_X from call)": where a failure's line says it came from.
std::string failure_at(int code, const std::string& call) {
  return " (" + cupti_result_name(static_cast<CUptiResult>(code)) + " from " + call + ")";
}

}  // namespace

std::vector<std::string> supported_chips() {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
  CUPTI_CHECK(cuptiProfilerHostGetSupportedChips(&p));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < p.numChips; ++i)
    if (p.ppChipNames[i]) out.emplace_back(p.ppChipNames[i]);
  return out;
}

Failure explain_failure(int code, const std::string& call) {
  const std::string at = failure_at(code, call);
  switch (code) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return {"no permission to read GPU performance counters" + at,
              "run as root, or let every user profile: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in "
              "/etc/modprobe.d, rebuild the initramfs and reboot (containers: --cap-add SYS_ADMIN); see "
              "https://developer.nvidia.com/ERR_NVGPUCTRPERM"};
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return {"the hypervisor does not let this virtual GPU read performance counters" + at,
              "ask the host's administrator to enable profiling for the vGPU"};
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return {"counters cannot be read on this virtualized GPU" + at, ""};
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return {"another CUPTI client holds the profiler (running under ncu, nsys or a debugger?)" + at,
              "run roofbench outside the profiler, or without --counters inside it"};
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return {"counters cannot be read on a MIG instance" + at, "run on a whole GPU"};
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return {"counters cannot be read with confidential computing on" + at, ""};
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return {"counters cannot be read on a CMP (crypto-mining) device" + at, ""};
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return {"counters cannot be read with SLI on" + at, ""};
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return {"counters cannot be read under WSL on this driver" + at, ""};
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return {"this CUPTI does not know the GPU's chip" + at, "use a CUDA toolkit at least as new as the GPU"};
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return {"a metric is not available on this chip" + at, "see `roofbench metrics --chip CHIP`"};
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_DEVICE:
      return {"this device does not support the range profiler" + at, ""};
    default:
      return {"counter collection failed" + at, ""};
  }
}

bool ends_session(int code) {
  switch (code) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED: return true;
    default: return false;
  }
}

Failure explain_benchmark_failure(int code, const std::string& call) {
  if (code == CUPTI_ERROR_NOT_SUPPORTED || code == CUPTI_ERROR_INVALID_DEVICE)
    return {"CUPTI could not profile this benchmark's work" + failure_at(code, call) +
                "; the benchmarks after it are profiled on their own",
            ""};
  return explain_failure(code, call);
}

std::string unsupported_reason(const DeviceSupport& s) {
  constexpr int kSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  if (s.overall == kSupported) return "";
  const auto level = [](int v) {
    return v == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled" : "unsupported";
  };
  std::vector<std::string> why;
  if (s.architecture != kSupported) why.push_back(fmt::format("architecture {} (compute capability 7.0 or later needed)", level(s.architecture)));
  if (s.vgpu != kSupported) why.push_back(fmt::format("virtual GPU: profiling {}", level(s.vgpu)));
  if (s.confidential_compute != kSupported) why.push_back("confidential computing is on");
  if (s.cmp != kSupported) why.push_back("a CMP (crypto-mining) device");
  if (s.sli != kSupported) why.push_back("SLI is on");
  if (s.wsl != kSupported) why.push_back(fmt::format("WSL: profiling {}", level(s.wsl)));
  if (why.empty()) why.push_back("CUPTI gave no reason");
  std::string out = "the device does not support counter collection: ";
  for (std::size_t i = 0; i < why.size(); ++i) out += (i ? "; " : "") + why[i];
  return out;
}

MetricHost::MetricHost(std::string chip, std::vector<std::uint8_t> availability)
    : chip_(std::move(chip)), availability_(std::move(availability)) {
  const auto chips = supported_chips();
  if (std::find(chips.begin(), chips.end(), chip_) == chips.end()) {
    std::string list;
    for (const auto& c : chips) list += (list.empty() ? "" : ", ") + c;
    throw InputError("CUPTI does not know chip '" + chip_ + "' (it knows " + list + ")");
  }
  obj_ = new Object{make_host(chip_, availability_)};
}

MetricHost::~MetricHost() {
  if (obj_) free_host(obj_->host);
  delete obj_;
}

const std::vector<std::string>& MetricHost::base_metrics() {
  if (!base_.empty()) return base_;
  for (CUpti_MetricType t : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
    p.pHostObject = obj_->host;
    p.metricType = t;
    CUPTI_CHECK(cuptiProfilerHostGetBaseMetrics(&p));
    for (std::size_t i = 0; i < p.numMetrics; ++i)
      if (p.ppMetricNames[i]) base_.emplace_back(p.ppMetricNames[i]);
  }
  std::sort(base_.begin(), base_.end());
  base_.erase(std::unique(base_.begin(), base_.end()), base_.end());
  return base_;
}

std::vector<MetricHost::Unknown> MetricHost::unknown(const std::vector<std::string>& names) {
  std::vector<Unknown> out;
  for (const auto& n : names) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
    p.pHostObject = obj_->host;
    p.pMetricName = n.c_str();
    const CUptiResult r = cuptiProfilerHostGetMetricProperties(&p);
    if (r == CUPTI_SUCCESS) {
      // A base name without its rollup is known here but refused when a configuration adds it
      // (CUPTI_ERROR_INVALID_PARAMETER, which ended a run as an internal error): unknown, with
      // its rollups as the near names.
      if (n.find('.') == std::string::npos) out.push_back({n, {n + ".sum", n + ".avg", n + ".max", n + ".min"}});
      continue;
    }
    if (r != CUPTI_ERROR_INVALID_METRIC_NAME) throw_cupti(r, "cuptiProfilerHostGetMetricProperties", __FILE__, __LINE__);
    out.push_back({n, near_names(n, base_metrics())});
  }
  return out;
}

void MetricHost::require_known(const std::vector<std::string>& names, const std::string& what) {
  const auto bad = unknown(names);
  if (bad.empty()) return;
  std::string msg = fmt::format("{}: {} unknown on {}:", what, bad.size() == 1 ? "a metric is" : "metrics are", chip_);
  for (const auto& u : bad) {
    msg += " '" + u.name + "'";
    if (u.near.empty()) continue;  // nothing close enough to suggest
    msg += " (near:";
    for (std::size_t i = 0; i < u.near.size(); ++i) msg += (i ? ", " : " ") + u.near[i];
    msg += ")";
  }
  msg += "; `roofbench metrics --chip " + chip_ + " --all` lists them all";
  throw InputError(msg);
}

std::shared_ptr<const MetricConfig> MetricHost::configure(const std::vector<std::string>& names) {
  require_known(names, "metrics");
  HostGuard g{make_host(chip_, availability_)};
  auto ptrs = c_names(names);
  auto add = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = g.h;
  add.ppMetricNames = ptrs.data();
  add.numMetrics = ptrs.size();
  if (const CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
    // Every name is known here. With the device's counter-availability image, the refusal may be
    // the device's (counters another client holds): that stays a CUPTI failure, which costs the
    // counters, not the run. Refused by the chip alone, it is the list as a whole (device-level
    // metrics mixed with per-SM ones, reference §7.1): the user's input, said in one line.
    if (!availability_.empty()) {
      HostGuard bare{make_host(chip_, {})};
      add.pHostObject = bare.h;
      if (cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_SUCCESS)
        throw CuptiError(r, "cuptiProfilerHostConfigAddMetrics",
                         cupti_result_name(r) + " from cuptiProfilerHostConfigAddMetrics with this device's counter "
                                                "availability (the chip alone takes the list)");
    }
    std::size_t device_level = 0;
    for (const auto& n : names)
      for (const char* prefix : {"nvlrx__", "nvltx__", "pcie__", "c2c__"})
        if (n.rfind(prefix, 0) == 0) ++device_level;
    throw InputError(fmt::format(
        "metrics: CUPTI will not schedule {} together on {}{}{}", fmt::join(names, ","), chip_,
        failure_at(r, "cuptiProfilerHostConfigAddMetrics"),
        device_level > 0 && device_level < names.size()
            ? "; NVLink, C2C and PCIe metrics are device-level and go in a list of their own (a run of their own)"
            : ""));
  }
  auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = g.h;
  CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = g.h;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&get));
  auto np = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  np.configImageSize = image.size();
  np.pConfigImage = image.data();
  CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&np));
  auto* obj = new MetricConfig::Object{g.h};
  g.h = nullptr;  // the configuration owns it now
  return std::shared_ptr<const MetricConfig>(
      new MetricConfig(obj, names, std::move(image), static_cast<int>(np.numOfPasses)));
}

MetricConfig::MetricConfig(Object* obj, std::vector<std::string> metrics, std::vector<std::uint8_t> image, int passes)
    : obj_(obj), metrics_(std::move(metrics)), image_(std::move(image)), passes_(passes) {}

MetricConfig::~MetricConfig() {
  free_host(obj_->host);
  delete obj_;
}

std::vector<double> MetricConfig::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range) const {
  auto ptrs = c_names(metrics_);
  std::vector<double> values(metrics_.size(), 0.0);
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = obj_->host;  // the object the metrics were added to
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = ptrs.data();
  p.numMetrics = ptrs.size();
  p.pMetricValues = values.data();
  CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&p));
  return values;
}

int MetricHost::max_hardware_metrics_per_pass() {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip_.c_str();
  p.pCounterAvailabilityImage = availability_.empty() ? nullptr : availability_.data();
  CUPTI_CHECK(cuptiProfilerHostGetMaxNumHardwareMetricsPerPass(&p));
  return static_cast<int>(p.maxMetricsPerPass);
}

}  // namespace roofbench::cupti
