// One CUDA GPU as a device: CUDA-event timing on the default stream with the launch hidden
// behind a blocking kernel (bench/launch_timing.h), an L2 flush before each cold sample (a reset of the persisting-L2 carve-out, then a read of a clean buffer twice the L2
// size: reading rather than writing leaves clean lines, so no write-back of the flush is charged
// to the kernel being timed), and the SM clock read two ways: precisely with clock64() against
// %globaltimer over 1 ms before and after the samples (CUDA 13 removed cudaDeviceProp::clockRate),
// and cheaply with every sample from NVML (read while its work runs) where the driver's library is there.
#include <fmt/format.h>

#include <atomic>
#include <optional>
#include <utility>

#include "roofbench/cuda.h"
#include "bench/device.h"
#include "bench/launch_timing.h"
#include "bench/nvml.h"

namespace roofbench {

namespace {

std::string uuid_hex(const cudaUUID_t& u) {  // 32 hex digits
  std::string s;
  for (int i = 0; i < 16; ++i) s += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
  return s;
}

// Spins one thread for ~`ns` nanoseconds of %globaltimer and reports SM cycles and ns elapsed.
__global__ void sm_clock_kernel(unsigned long long ns, unsigned long long* out) {
  unsigned long long t0, t1, c0, c1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < ns);
  c1 = clock64();
  out[0] = c1 - c0;
  out[1] = t1 - t0;
}

// Reads every 16-byte word of the flush buffer; the store never happens (the buffer holds the
// byte 0x01 everywhere) but the compiler cannot know that, so the loads stay.
__global__ void flush_read_kernel(const uint4* __restrict__ p, long long n, unsigned* sink) {
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    acc ^= p[i].x ^ p[i].y ^ p[i].z ^ p[i].w;
  if (acc == 0xDEADBEEFu) *sink = acc;
}

// Holds the stream until the host writes `generation` (or a later one) to flags[0], or until
// `timeout_ns` of %globaltimer have passed; then flags[1] says which. Generations, not a 0/1
// flag: a hold left over from a sample that failed is released by any later release, and cannot
// read the next hold's reset. One thread: it holds the queue, not the SMs.
__global__ void blocking_kernel(volatile int* flags, int generation, unsigned long long timeout_ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (flags[0] < generation) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > timeout_ns) {
      flags[1] = 1;
      return;
    }
  }
}

// Two ints of page-locked host memory mapped into the GPU's address space: the blocking
// kernel's release flag (written by the host) and its timed-out flag (written by the kernel).
class MappedFlags {
 public:
  MappedFlags() {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
    host_ = static_cast<volatile int*>(p);
    host_[0] = host_[1] = 0;
    const cudaError_t e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), p, 0);
    if (e != cudaSuccess) {
      CUDA_CHECK_NOEXCEPT(cudaFreeHost(p));
      CUDA_CHECK(e);
    }
  }
  ~MappedFlags() { CUDA_CHECK_NOEXCEPT(cudaFreeHost(const_cast<int*>(host_))); }
  MappedFlags(const MappedFlags&) = delete;
  MappedFlags& operator=(const MappedFlags&) = delete;
  volatile int* host() const { return host_; }
  int* device() const { return device_; }

 private:
  volatile int* host_ = nullptr;
  int* device_ = nullptr;
};

// The default stream's side of timed_sample(): events, the hold and its release.
class EventTimer {
 public:
  // A hold longer than this is a launch that waited for the GPU: nothing legitimate on the host
  // between the hold and its release takes seconds.
  static constexpr unsigned long long kHoldTimeoutNs = 5'000'000'000ull;

  void synchronize() { CUDA_CHECK(cudaDeviceSynchronize()); }
  void hold() {
    // An error left from before would be read by the launch check below, after the blocking
    // kernel is running with no one to release it (5 s, then the hold counts as failed).
    CUDA_CHECK(cudaPeekAtLastError());
    flags_.host()[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    blocking_kernel<<<1, 1>>>(flags_.device(), ++generation_, kHoldTimeoutNs);
    CUDA_CHECK_LAUNCH();
    held_ = true;
  }
  void release() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    flags_.host()[0] = generation_;
  }
  void record_start() { CUDA_CHECK(cudaEventRecord(start_.get())); }
  void record_stop() { CUDA_CHECK(cudaEventRecord(stop_.get())); }
  double elapsed_s() {
    CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    // Only a sample that held the stream can have timed out (a synchronous one after a timeout
    // must not read the old flag).
    const bool timed_out = held_ && flags_.host()[1] != 0;
    held_ = false;
    flags_.host()[1] = 0;
    if (timed_out)
      throw HoldTimedOut(fmt::format(
          "the blocking kernel held the stream for {} s without being released: a launch waited for the GPU (a "
          "variant whose run() synchronizes must declare launch_synchronizes), or a profiler serializes launches",
          kHoldTimeoutNs / 1e9));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms * 1e-3;
  }

 private:
  MappedFlags flags_;
  CudaEvent start_, stop_;
  int generation_ = 0;
  bool held_ = false;
};

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

std::string version_string(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index) : index_(index) {
    CUDA_CHECK(cudaSetDevice(index_));
    timer_.emplace();  // its events and flags on this device, not on the one current before
    CUDA_CHECK(cudaGetDeviceProperties(&prop_, index_));
    require_code_for_this_gpu();
    l2_bytes_ = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize, index_));
    flush_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(2 * l2_bytes_, 1u << 20));
    CUDA_CHECK(cudaMemset(flush_.get(), 0x01, flush_.bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
    sink_ = DeviceBuffer<unsigned>(1);
    clock_out_ = DeviceBuffer<unsigned long long>(2);
    sm_count_ = attr(cudaDevAttrMultiProcessorCount, index_);
    char pci[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(pci, sizeof pci, index_));
    nvml_ = std::make_unique<Nvml>(pci);
  }

  Backend backend() const override { return Backend::cuda; }
  std::string name() const override { return prop_.name; }
  std::string timer() const override { return "cuda-events"; }
  std::size_t flush_bytes() const override { return flush_.bytes(); }

  nlohmann::json describe() const override {
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    char pci[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(pci, sizeof pci, index_));
    const std::string uuid = uuid_hex(prop_.uuid);
    const int bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth, index_);
    const double mem_clock_hz = attr(cudaDevAttrMemoryClockRate, index_) * 1e3;
    return {{"kind", "cuda"},
            {"index", index_},
            {"name", prop_.name},
            {"uuid", uuid},
            {"pci_bus_id", pci},
            {"compute_capability", fmt::format("{}.{}", prop_.major, prop_.minor)},
            {"sm_count", attr(cudaDevAttrMultiProcessorCount, index_)},
            {"memory_bytes", prop_.totalGlobalMem},
            {"l2_bytes", l2_bytes_},
            {"persisting_l2_max_bytes", attr(cudaDevAttrMaxPersistingL2CacheSize, index_)},
            {"shared_memory_per_sm_bytes", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, index_)},
            {"sm_clock_max_hz", attr(cudaDevAttrClockRate, index_) * 1e3},
            {"memory_clock_hz", mem_clock_hz},
            {"memory_bus_width_bits", bus_bits},
            // DDR: two transfers per memory clock. For comparison only; roofs are measured.
            {"memory_bandwidth_theoretical_bytes_per_s", 2.0 * mem_clock_hz * bus_bits / 8.0},
            {"ecc", attr(cudaDevAttrEccEnabled, index_) != 0},
            {"driver_version", version_string(driver)},  // the CUDA driver API's
            {"nvidia_driver_version", nvml_->driver_version() ? nlohmann::json(*nvml_->driver_version())
                                                              : nlohmann::json(nullptr)},
            {"runtime_version", version_string(runtime)},
            {"per_sample_clock", nvml_->available() ? std::string("NVML, read while each sample's work runs")
                                                    : "none: " + nvml_->why()},
            {"power", power_source()},
            {"power_limit_w", nvml_->power_limit_w() ? nlohmann::json(*nvml_->power_limit_w()) : nlohmann::json(nullptr)}};
  }

  void flush_cache() override {
    // Lines parked in the persisting carve-out survive streaming writes; release them first.
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    flush_read_kernel<<<4 * sm_count_, 256>>>(reinterpret_cast<const uint4*>(flush_.get()),
                                              static_cast<long long>(flush_.bytes() / sizeof(uint4)), sink_.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  double time_run(Instance& inst, Launch launch) override {
    if (launch == Launch::hidden && !hold_failed_.empty()) launch = Launch::synchronous;
    try {
      return timed_sample(*timer_, [&inst] { inst.run(); }, launch, [this] { read_during_sample(); });
    } catch (const HoldTimedOut& e) {
      // Once is enough to know: every later sample of the process starts after a synchronize,
      // and this one is taken again that way (its time included the wait).
      hold_failed_ = e.what();
      CUDA_CHECK(cudaDeviceSynchronize());
      return timed_sample(*timer_, [&inst] { inst.run(); }, Launch::synchronous, [this] { read_during_sample(); });
    }
  }

  std::string launch_method(Launch launch) const override {
    if (launch == Launch::device_wide)
      return "after a synchronize, the stop event recorded after a device-wide synchronize (--untrusted): the events "
             "bracket the host's launch, the work of every stream and the synchronize's return";
    if (launch == Launch::synchronous)
      return "after a synchronize, so the events also bracket the host's launch (the variant's run() waits for the "
             "GPU itself, or the run was for a profiler: --profile)";
    if (!hold_failed_.empty()) return "after a synchronize, since " + hold_failed_;
    return "queued behind a blocking kernel, released once the launches were queued: the events bracket the GPU's "
           "work alone";
  }

  void synchronize() override { CUDA_CHECK(cudaDeviceSynchronize()); }

  // An error that a synchronize still returns after the last error was cleared is sticky.
  std::string lost() override {
    // A refused launch sets the last error and nothing else: a synchronize does not return it.
    (void)cudaGetLastError();
    if (cudaDeviceSynchronize() == cudaSuccess) return "";
    (void)cudaGetLastError();
    const cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) return "";
    return fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e));
  }

  // The clock and its limits as read while the last sample's work ran (read_during_sample), once;
  // read now when no sample has run since (the reference after the warm-up).
  std::optional<double> sample_clock_hz() override {
    if (during_clock_) return std::exchange(during_clock_, std::nullopt);
    return nvml_->sm_clock_hz();
  }
  std::vector<std::string> clock_limits() override {
    if (during_limits_) return *std::exchange(during_limits_, std::nullopt);
    return nvml_->clock_limits();
  }
  PowerReading power_reading() override { return nvml_->power(); }
  std::optional<double> energy_j() override { return nvml_->energy_j(); }
  std::string power_source() const override {
    return nvml_->available() ? nvml_->source() : "unavailable: " + nvml_->why();
  }

  std::optional<double> clock_hz() override {
    sm_clock_kernel<<<1, 1>>>(1000000ull, clock_out_.get());  // 1 ms
    CUDA_CHECK_LAUNCH();
    const auto v = clock_out_.download();
    if (v[1] == 0) return std::nullopt;
    return static_cast<double>(v[0]) / (static_cast<double>(v[1]) * 1e-9);
  }

 private:
  // A build without code for this GPU's architecture would fail every launch with "no kernel
  // image": say so once, with the fix, before anything runs.
  void require_code_for_this_gpu() const {
    cudaFuncAttributes fa{};
    const cudaError_t e = cudaFuncGetAttributes(&fa, flush_read_kernel);
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
      (void)cudaGetLastError();
      throw InputError(fmt::format(
          "this roofbench has no code for {} (sm_{}{}): it was built with CMAKE_CUDA_ARCHITECTURES={}; rebuild with "
          "cmake --preset release -DCMAKE_CUDA_ARCHITECTURES=\"{}{}\" (or add it to the list)",
          prop_.name, prop_.major, prop_.minor, ROOFBENCH_CUDA_ARCHITECTURES, prop_.major, prop_.minor));
    }
    CUDA_CHECK(e);
  }

  int index_;
  cudaDeviceProp prop_{};
  std::size_t l2_bytes_ = 0;
  DeviceBuffer<unsigned char> flush_;
  DeviceBuffer<unsigned> sink_;
  DeviceBuffer<unsigned long long> clock_out_;
  std::optional<EventTimer> timer_;  // made once cudaSetDevice has run
  std::string hold_failed_;  // set when a hold timed out: later samples start after a synchronize
  int sm_count_ = 1;
  std::unique_ptr<Nvml> nvml_;
  // The last sample's clock and clock limits, read while its work ran; consumed by the reads above.
  std::optional<double> during_clock_;
  std::optional<std::vector<std::string>> during_limits_;
  void read_during_sample() {
    if (!nvml_->available()) return;
    during_clock_ = nvml_->sm_clock_hz();
    during_limits_ = nvml_->clock_limits();
  }
};

}  // namespace

int cuda_device_count(std::string* why) {
  int n = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    if (why) {
      *why = fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e));
      // The runtime answers this both without a driver and with one too old for it.
      if (e == cudaErrorInsufficientDriver)
        *why += fmt::format(
            ": no NVIDIA driver was found, or it is older than the CUDA {}.{} runtime this roofbench "
            "was built with",
            CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    }
    return 0;
  }
  return n;
}

std::string cuda_device_uuid(int index) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return uuid_hex(prop.uuid);
}

std::string cuda_build_compute_capability() {
  const std::string archs = ROOFBENCH_CUDA_ARCHITECTURES;  // "90a", "80;90a", "native"...
  if (archs.find("90a") != std::string::npos) return "9.0";
  std::string digits;
  for (char c : archs) {
    if (c >= '0' && c <= '9')
      digits += c;
    else if (!digits.empty())
      break;
  }
  if (digits.size() < 2) return "9.0";  // "native" or "all": the default target, Hopper
  return digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
}

std::unique_ptr<Device> make_cuda_device(int index) {
  try {
    return std::make_unique<CudaDevice>(index);
  } catch (const CudaError& e) {
    throw InputError(fmt::format("cannot open cuda:{}: {}", index, e.what()));
  }
}

}  // namespace roofbench
