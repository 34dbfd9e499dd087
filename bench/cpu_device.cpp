// The CPU as a device: OpenMP on all cores, steady-clock timing, and a cache flush that reads a
// clean buffer twice the size of all caches together before each cold sample. Reading (not
// writing) matters: a flush that writes leaves the caches full of dirty lines, and their
// write-back would then be charged to the kernel being timed.
#include <omp.h>
#include <sys/utsname.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "bench/openblas_core.h"
#include "bench/cpu_info.h"
#include "bench/device.h"
#include "bench/host_contention.h"

namespace roofbench {

namespace {

class CpuDevice final : public Device {
 public:
  // At least 2x every cache level together, so no line of the last sample survives. Allocated and
  // touched at the first flush, not here: a --warm run never flushes (554 MB on a VM that reports
  // a 260 MiB LLC).
  CpuDevice()
      : info_(cpu_info()),
        flush_words_(2 * (info_.llc_bytes + info_.l2_bytes * info_.threads) / sizeof(std::uint64_t)) {}

  Backend backend() const override { return Backend::cpu; }
  std::string name() const override { return info_.model_name; }
  std::string timer() const override { return "steady-clock"; }
  std::size_t flush_bytes() const override { return flush_words_ * sizeof(std::uint64_t); }

  nlohmann::json describe() const override {
    utsname u{};
    uname(&u);
    return {{"kind", "cpu"},
            {"name", info_.model_name},
            {"vendor", info_.vendor},
            {"family", info_.family},
            {"model", info_.model},
            {"threads", info_.threads},
            {"isa", info_.isa},
            {"fp32_lanes_per_fma_unit", info_.fp32_lanes},
            {"fma_units_per_core", info_.fma_units},
            {"fma_source", info_.fma_source},
            {"l1d_bytes_per_core", info_.l1d_bytes},
            {"l2_bytes_per_core", info_.l2_bytes},
            {"llc_bytes", info_.llc_bytes},
            {"nominal_clock_hz", info_.nominal_hz},
            {"openblas_core", openblas_core_description()},
            {"os", std::string(u.sysname) + " " + u.release},
            {"compiler", std::string("g++ ") + __VERSION__},
            {"power", rapl_.describe()}};
  }

  void flush_cache() override {
    if (flush_.size() != flush_words_) flush_.assign(flush_words_, 1);
    const std::int64_t n = static_cast<std::int64_t>(flush_.size());
    const std::uint64_t* p = flush_.data();
    std::uint64_t sum = 0;
    // One word per 64-byte line is enough to bring the whole line in.
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (std::int64_t i = 0; i < n; i += 8) sum += p[i];
    sink_ = sum;
  }

  double time_run(Instance& inst, Launch) override {
    const auto t0 = std::chrono::steady_clock::now();
    inst.run();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
  }

  void synchronize() override {}

  std::optional<double> clock_hz() override {
    const double hz = measure_core_clock_hz(0.005);
    if (hz <= 0) return std::nullopt;
    return hz;
  }

  std::optional<double> sample_clock_hz() override {
    const double hz = quick_core_clock_hz();
    if (hz <= 0) return std::nullopt;
    return hz;
  }

  // "cpu_quota" when the run's cgroup was throttled by its CPU quota around the last sample (its
  // nr_throttled grew between sample_begins and sample_ends): that sample's time may hold a wait
  // for the next quota period (the clock itself did not drop). Read only where the group has a
  // quota of its own.
  void sample_begins() override {
    periods_end_.reset();
    periods_begin_ = cpu_stat_.empty() ? std::nullopt : read_throttled_periods(cpu_stat_);
  }
  void sample_ends() override {
    if (periods_begin_) periods_end_ = read_throttled_periods(cpu_stat_);
  }
  std::vector<std::string> clock_limits() override {
    if (periods_begin_ && periods_end_ && *periods_end_ > *periods_begin_) return {"cpu_quota"};
    return {};
  }

  PowerReading power_reading() override { return {rapl_.energy_j(), std::nullopt, std::nullopt}; }
  std::string power_source() const override { return rapl_.describe(); }

 private:
  const CpuInfo& info_;
  std::size_t flush_words_;
  std::vector<std::uint64_t> flush_;
  volatile std::uint64_t sink_ = 0;
  Rapl rapl_;  // the packages' energy counters, where the kernel exposes them to this user
  // The cgroup's cpu.stat where the group has a CPU quota and counts its throttled periods ("" where
  // not), and its count around the last sample.
  std::string cpu_stat_ = [] {
    const ContentionReading r = read_contention();
    return r.throttled_periods && r.quota_cpus ? r.cgroup_source : std::string();
  }();
  std::optional<std::int64_t> periods_begin_, periods_end_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() {
  return std::make_unique<CpuDevice>();
}

DeviceSpec DeviceSpec::parse(const std::string& text) {
  if (text == "auto") return {Kind::automatic, 0};
  if (text == "cpu") return {Kind::cpu, 0};
  if (text == "all") return {Kind::all, 0};
  if (text.rfind("cuda:", 0) == 0) {
    const std::string idx = text.substr(5);
    if (!idx.empty() && idx.size() <= 4 && idx.find_first_not_of("0123456789") == std::string::npos)
      return {Kind::cuda, std::stoi(idx)};
  }
  throw InputError("unknown device '" + text + "' (expected auto, cpu, cuda:N or all)");
}

std::string DeviceSpec::text() const {
  switch (kind) {
    case Kind::automatic: return "auto";
    case Kind::cpu: return "cpu";
    case Kind::cuda: return "cuda:" + std::to_string(index);
    case Kind::all: return "all";
  }
  return "auto";
}

std::unique_ptr<Device> open_device(const DeviceSpec& spec) {
  switch (spec.kind) {
    case DeviceSpec::Kind::cpu: return make_cpu_device();
    case DeviceSpec::Kind::automatic:
#ifdef ROOFBENCH_HAVE_CUDA
      if (cuda_device_count() > 0) return make_cuda_device(0);
#endif
      return make_cpu_device();
    case DeviceSpec::Kind::all:
      throw InputError("device all is one run per GPU, not one device (roofbench run --device all)");
    case DeviceSpec::Kind::cuda: {
#ifdef ROOFBENCH_HAVE_CUDA
      std::string why;
      const int n = cuda_device_count(&why);
      if (spec.index >= n)
        throw InputError("no device " + spec.text() + ": " + std::to_string(n) + " CUDA GPU(s) visible" +
                         (why.empty() ? "" : " (CUDA says " + why + ")"));
      return make_cuda_device(spec.index);
#else
      throw InputError("device " + spec.text() + " asked for, but this roofbench was built without CUDA");
#endif
    }
  }
  throw InputError("unknown device");
}

}  // namespace roofbench
