#pragma once
// The one error-check family for CUDA calls, and RAII owners for device memory, pinned host
// memory, streams and events. Nothing outside these owners calls cudaMalloc/cudaFree,
// cudaMallocHost/cudaFreeHost or cudaEventCreate/Destroy.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "roofbench/types.h"

namespace roofbench {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  // The error goes with the exception: cleared here, a non-sticky one (a refused launch, a failed
  // allocation) would otherwise fail the next check that reads the last error, someone else's.
  (void)cudaGetLastError();
  throw CudaError(std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") from " + expr + " at " + file +
                  ":" + std::to_string(line));
}

#define CUDA_CHECK(expr)                                                                                   \
  do {                                                                                                     \
    cudaError_t roofbench_err_ = (expr);                                                                   \
    if (roofbench_err_ != cudaSuccess) ::roofbench::throw_cuda(roofbench_err_, #expr, __FILE__, __LINE__); \
  } while (false)

// For destructors: report, never throw.
#define CUDA_CHECK_NOEXCEPT(expr)                                                                                 \
  do {                                                                                                            \
    cudaError_t roofbench_err_ = (expr);                                                                          \
    if (roofbench_err_ != cudaSuccess)                                                                            \
      std::fprintf(stderr, "roofbench: %s from %s at %s:%d\n", cudaGetErrorName(roofbench_err_), #expr, __FILE__, \
                   __LINE__);                                                                                     \
  } while (false)

// After every kernel launch: catches bad launch configurations at the launch site.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // A buffer larger than the device's free memory is refused (MemoryRefused) with the numbers,
  // before cudaMalloc is asked.
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (!n) return;
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (n > free_bytes / sizeof(T)) {
      char what[256];
      std::snprintf(what, sizeof what,
                    "a device buffer of %.2f GiB does not fit: %.2f GiB free of the device's %.2f GiB; refused "
                    "before allocating. Run a smaller size",
                    static_cast<double>(n) * sizeof(T) / (1u << 30), static_cast<double>(free_bytes) / (1u << 30),
                    static_cast<double>(total_bytes) / (1u << 30));
      throw MemoryRefused(what);
    }
    CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (p_) CUDA_CHECK_NOEXCEPT(cudaFree(p_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

  // From host values of T, or of a host type stored the same way (half_t for __half).
  template <class H>
  void upload(const std::vector<H>& h) {
    static_assert(sizeof(H) == sizeof(T), "a host type stored as the device type");
    if (h.size() != n_) throw std::logic_error("DeviceBuffer::upload: size mismatch");
    upload(h.data());
  }
  // Fresh inputs from `seed` (fill_uniform, in every core) made in a host buffer the caller keeps
  // for its check, sized on the first call only (HostBuffer::ensure_size), and copied up.
  template <class H>
  void upload_uniform(HostBuffer<H>& h, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
    h.ensure_size(n_);
    fill_uniform(h.data(), static_cast<std::int64_t>(n_), seed, lo, hi);
    upload(h.data());
  }
  template <class H>
  void upload(const H* h) {  // n_ values, e.g. from pinned host memory
    static_assert(sizeof(H) == sizeof(T), "a host type stored as the device type");
    CUDA_CHECK(cudaMemcpy(p_, h, bytes(), cudaMemcpyHostToDevice));
  }
  template <class H = T>
  std::vector<H> download() const {
    static_assert(sizeof(H) == sizeof(T), "a host type stored as the device type");
    std::vector<H> h(n_);
    download(h.data());
    return h;
  }
  // Into a host buffer the caller keeps between checks, sized here on the first call only: the
  // recheck after the samples then copies into pages already touched (HostBuffer::ensure_size).
  template <class H>
  const H* download(HostBuffer<H>& h) const {
    h.ensure_size(n_);
    download(h.data());
    return h.data();
  }
  template <class H>
  void download(H* h) const {
    static_assert(sizeof(H) == sizeof(T), "a host type stored as the device type");
    CUDA_CHECK(cudaMemcpy(h, p_, bytes(), cudaMemcpyDeviceToHost));
  }
  void copy_from(const DeviceBuffer& other) {  // device to device, the same size
    if (other.n_ != n_) throw std::logic_error("DeviceBuffer::copy_from: size mismatch");
    CUDA_CHECK(cudaMemcpy(p_, other.p_, bytes(), cudaMemcpyDeviceToDevice));
  }
  // Fills with 0xFF bytes: NaN for float and half types, so unwritten outputs fail verification.
  void poison() { CUDA_CHECK(cudaMemset(p_, 0xFF, bytes())); }
  void zero() { CUDA_CHECK(cudaMemset(p_, 0, bytes())); }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Page-locked host memory (cudaMallocHost): the DMA engines copy it directly, and only copies
// from it run asynchronously with the host. Reserved against the host's memory like HostBuffer.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : n_(n) {
    if (!n) return;
    reserve_host_memory(n * sizeof(T));
    const cudaError_t e = cudaMallocHost(reinterpret_cast<void**>(&p_), n * sizeof(T));
    if (e != cudaSuccess) {
      release_host_memory(n * sizeof(T));
      throw_cuda(e, "cudaMallocHost", __FILE__, __LINE__);
    }
  }
  ~PinnedBuffer() {
    if (!p_) return;
    CUDA_CHECK_NOEXCEPT(cudaFreeHost(p_));
    release_host_memory(n_ * sizeof(T));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  T* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// A stream that synchronizes with the legacy default stream (cudaStreamDefault), as the timing's
// events there expect: work queued on it waits for the default stream's earlier work, and the
// default stream's later work (the stop event) waits for it.
class CudaStream {
 public:
  CudaStream() { CUDA_CHECK(cudaStreamCreate(&s_)); }
  ~CudaStream() { CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s_)); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_{};
};

class CudaEvent {
 public:
  CudaEvent() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~CudaEvent() { CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e_)); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

// The blocks of `threads` threads that cover `n` items, one per thread. A grid holds at most
// 2^31 - 1 blocks along x: a larger count is refused (InputError, naming n) rather than cut to an
// unsigned that would launch a grid leaving items out; use a grid-stride loop for such sizes. No
// item (n < 1) is refused too: a grid of no block is a launch error that would not say why.
inline unsigned blocks_for(long long n, unsigned threads) {
  constexpr long long kMaxGridX = 0x7fffffffLL;
  if (n < 1) throw InputError("n = " + std::to_string(n) + ": no item to launch a block for (n must be at least 1)");
  const long long blocks = (n + threads - 1) / threads;
  if (blocks > kMaxGridX)
    throw InputError("n = " + std::to_string(n) + " needs " + std::to_string(blocks) + " blocks of " +
                     std::to_string(threads) + " threads, more than a grid's 2^31 - 1: use a grid-stride loop");
  return static_cast<unsigned>(blocks);
}

// The grid of a grid-stride loop over `n` items on the current GPU: one item per thread, but at
// most `per_sm` blocks per SM (the bandwidth ceilings' pattern); at least one block.
inline unsigned grid_stride_blocks(long long n, unsigned threads, int per_sm = 8) {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const long long blocks = (std::max(n, 1LL) + threads - 1) / threads;  // any n: the loop strides over the rest
  return static_cast<unsigned>(std::min<long long>(blocks, 1LL * per_sm * sms));
}

}  // namespace roofbench
