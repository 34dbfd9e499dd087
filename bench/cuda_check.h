#pragma once
// The one error-check family for CUDA calls, and RAII owners for device memory and events.
// Nothing outside these owners calls cudaMalloc/cudaFree or cudaEventCreate/Destroy.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace roofbench {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
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
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
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

  void upload(const std::vector<T>& h) {
    if (h.size() != n_) throw std::logic_error("DeviceBuffer::upload: size mismatch");
    CUDA_CHECK(cudaMemcpy(p_, h.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    CUDA_CHECK(cudaMemcpy(h.data(), p_, bytes(), cudaMemcpyDeviceToHost));
    return h;
  }
  // Fills with 0xFF bytes: NaN for float and half types, so unwritten outputs fail verification.
  void poison() { CUDA_CHECK(cudaMemset(p_, 0xFF, bytes())); }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
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

inline unsigned blocks_for(long long n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

// The grid of a grid-stride loop over `n` items on the current GPU: one item per thread, but at
// most `per_sm` blocks per SM (the bandwidth ceilings' pattern); at least one block.
inline unsigned grid_stride_blocks(long long n, unsigned threads, int per_sm = 8) {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return static_cast<unsigned>(std::min<long long>(blocks_for(std::max(n, 1LL), threads), 1LL * per_sm * sms));
}

}  // namespace roofbench
