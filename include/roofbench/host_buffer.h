#pragma once
// Page-aligned host arrays for the CPU kernels: vector stores and streaming stores need
// alignment, and first touch happens in the parallel fill, so pages land near their threads.
#include <cstddef>
#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <utility>

namespace roofbench {

// Every HostBuffer reserves its bytes before it allocates them and releases them when freed.
// reserve_host_memory throws MemoryRefused, before anything is allocated, when they do not fit in
// what the system has available (MemAvailable) beside this process's buffers not yet touched:
// Linux hands out memory it does not have and kills the process when the pages are touched, so
// a size too large for the machine must be refused here, with the numbers, not found by the OOM
// killer half-way through a run.
void reserve_host_memory(std::size_t bytes);
void release_host_memory(std::size_t bytes) noexcept;
std::size_t host_memory_available();  // bytes the system can give now; 0 when unknown

template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t n) : n_(n) {
    reserve_host_memory(n > (std::size_t(-1) - 4095) / sizeof(T) ? std::size_t(-1) : n * sizeof(T));
    const std::size_t bytes = ((n * sizeof(T) + 4095) / 4096) * 4096;
    const std::size_t align = bytes >= (std::size_t{8} << 20) ? (std::size_t{2} << 20) : 4096;
    const std::size_t rounded = ((bytes ? bytes : 1) + align - 1) / align * align;
    p_ = static_cast<T*>(std::aligned_alloc(align, rounded));
    if (!p_) {
      release_host_memory(n * sizeof(T));
      throw std::bad_alloc();
    }
#ifdef MADV_HUGEPAGE
    // Large arrays on 2 MiB pages where the kernel allows it (THP in "madvise" mode): streaming
    // through 4 KiB pages costs a TLB miss every 4 KiB, and far more under a hypervisor.
    if (align > 4096) ::madvise(p_, rounded, MADV_HUGEPAGE);
#endif
  }
  ~HostBuffer() {
    if (p_) release_host_memory(n_ * sizeof(T));
    std::free(p_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](std::size_t i) { return p_[i]; }
  const T& operator[](std::size_t i) const { return p_[i]; }
  std::size_t size() const { return n_; }
  // n elements: the buffer as it is when it already holds n (its pages touched, its values those
  // last written), a new one otherwise (untouched, its values undefined). For host copies that a
  // check makes again and again (the recheck after the samples): a fresh array of 1 GiB costs
  // its page faults every time, and a std::vector's zeroing besides, all on one thread.
  void ensure_size(std::size_t n) {
    if (n != n_ || !p_) *this = HostBuffer(n);
  }
  // Every byte 0xFF, as DeviceBuffer::poison: a NaN in every floating-point type, so an element a
  // kernel never wrote fails its check. On every core, as the fills are.
  void poison() {
    unsigned char* b = reinterpret_cast<unsigned char*>(p_);
    const std::ptrdiff_t bytes = static_cast<std::ptrdiff_t>(n_ * sizeof(T));
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < bytes; ++i) b[i] = 0xFF;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace roofbench
