// Host-device transfer ceilings: cudaMemcpy of 256 MiB each way, from pinned (page-locked) and
// from pageable host memory, and 256 MiB both ways at once from pinned memory (pcie_duplex_pinned).
// Pinned memory is copied by the DMA engines directly; pageable memory goes through a pinned
// staging buffer in the driver, one chunk at a time. (Pageable here is
// the suite's HostBuffer: 2 MiB pages where the kernel allows, MADV_HUGEPAGE; not page-locked.)
// Run only these: roofbench ceilings --device cuda:0
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "roofbench/cuda.h"
#include "roofbench/host_buffer.h"
#include "kernels/ceilings/pcie_names.h"
#include "kernels/ceilings/stream_ceilings.h"

namespace roofbench::ceilings {
namespace {

// n, the elements a copy moves: at least one, checked before any buffer is sized from it.
std::int64_t copy_elements(const Params& p) {
  const std::int64_t n = param(p, "n");
  if (n < 1) throw InputError("PCIe ceilings: n = " + std::to_string(n) + " must be at least 1");
  return n;
}

// ---------------------------------------------------------------- launcher
class GpuTransfer final : public Instance {
 public:
  GpuTransfer(const Params& p, bool to_device, bool pinned)
      : n_(copy_elements(p)),
        to_device_(to_device),
        pinned_(pinned),
        dev_(n_),
        pinned_buf_(pinned ? static_cast<std::size_t>(n_) : 0),
        pageable_(pinned ? 0 : static_cast<std::size_t>(n_)) {}
  void prepare(std::uint64_t seed) override {
    src_.resize(n_);
    fill_small_ints(src_.data(), n_, seed);
    float* h = host();
    if (to_device_) {
      std::copy(src_.begin(), src_.end(), h);
      dev_.poison();
    } else {
      dev_.upload(src_);
      for (std::int64_t i = 0; i < n_; ++i) h[i] = poison_f32();
    }
  }
  void run() override {
    if (to_device_)
      dev_.upload(host());  // one cudaMemcpy, the work timed
    else
      dev_.download(host());
  }
  Verification verify() override {
    if (to_device_) {
      const auto d = dev_.download();
      return check_stream(StreamOp::copy, src_.data(), nullptr, d.data(), n_, 0);
    }
    return check_stream(StreamOp::copy, src_.data(), nullptr, host(), n_, 0);
  }

 private:
  float* host() { return pinned_ ? pinned_buf_.data() : pageable_.data(); }
  std::int64_t n_;
  bool to_device_, pinned_;
  DeviceBuffer<float> dev_;
  PinnedBuffer<float> pinned_buf_;
  HostBuffer<float> pageable_;
  std::vector<float> src_;
};

// Both ways at once: n floats to the GPU on one stream while n others come back on another, from
// pinned memory, as a pipeline's copies in and out run (kernels/overlap/overlap.h). Its rate is the
// bytes of both over the time of both, 2n over the slower copy: a full-duplex link reaches twice
// the slower one-way ceiling, one that is not stays below it. The streams are blocking ones: the
// timing events, on the default stream, bracket both copies. Bytes of two directions are no roof
// for a copy one way: the ceiling is used by name only (Work::shared_link), never as the PCIe
// level's roof (CeilingSpec::level_roof).
class GpuDuplex final : public Instance {
 public:
  explicit GpuDuplex(const Params& p)
      : n_(copy_elements(p)), to_dev_(n_), from_dev_(n_), to_host_(static_cast<std::size_t>(n_)),
        from_host_(static_cast<std::size_t>(n_)) {}
  void prepare(std::uint64_t seed) override {
    up_.resize(n_);
    down_.resize(n_);
    fill_small_ints(up_.data(), n_, seed);
    fill_small_ints(down_.data(), n_, seed + 1);
    std::copy(up_.begin(), up_.end(), to_host_.data());
    to_dev_.poison();
    from_dev_.upload(down_);
    for (std::int64_t i = 0; i < n_; ++i) from_host_.data()[i] = poison_f32();
  }
  void run() override {
    const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(to_dev_.get(), to_host_.data(), bytes, cudaMemcpyHostToDevice, up_stream_.get()));
    CUDA_CHECK(cudaMemcpyAsync(from_host_.data(), from_dev_.get(), bytes, cudaMemcpyDeviceToHost, down_stream_.get()));
  }
  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());  // the copy back lands in host memory
    const auto d = to_dev_.download();
    Verification up = check_stream(StreamOp::copy, up_.data(), nullptr, d.data(), n_, 0);
    if (!up.ok) return up;
    return check_stream(StreamOp::copy, down_.data(), nullptr, from_host_.data(), n_, 0);
  }

 private:
  std::int64_t n_;
  DeviceBuffer<float> to_dev_, from_dev_;
  PinnedBuffer<float> to_host_, from_host_;
  CudaStream up_stream_, down_stream_;
  std::vector<float> up_, down_;
};

// ---------------------------------------------------------------- registration
Variant make_duplex() {
  Variant v = bandwidth_ceiling_variant(kPcieDuplexPinned, Backend::cuda, Level::pcie,
                                        "a cudaMemcpyAsync of n floats to the GPU and one of n floats from it, on two "
                                        "streams at once, pinned host memory, timed with events on the default stream");
  v.ceiling->level_roof = false;
  v.work = Work()
               .read<float>("n floats over the host link to the GPU", Count::param("n"))
               .write<float>("n floats over the host link from the GPU, at the same time", Count::param("n"));
  v.summary = "cudaMemcpyAsync both ways at once on two streams, pinned host memory: the link with both directions busy";
  v.launches_kernels = false;    // copy engines only
  v.launch_synchronizes = true;  // each sample starts after a synchronize
  v.sizes = vector_sizes({1 << 26});
  v.quick_sizes = vector_sizes({1 << 24});
  v.test_sizes = vector_sizes({1, 4096 + 3, 1 << 20});
  v.make = [](const Params& p) { return std::make_unique<GpuDuplex>(p); };
  return v;
}
ROOFBENCH_REGISTER(make_duplex());

Variant make(bool to_device, bool pinned) {
  const std::string dir = to_device ? "h2d" : "d2h", mem = pinned ? "pinned" : "pageable";
  Variant v = bandwidth_ceiling_variant(
      pcie_ceiling_name(to_device ? Direction::to_device : Direction::from_device,
                        pinned ? HostMemory::pinned : HostMemory::pageable),
      Backend::cuda, Level::pcie,
                                        "one cudaMemcpy of n floats " + std::string(to_device ? "to" : "from") +
                                            " the GPU, " + mem + " host memory, timed with events on the default stream");
  v.work = Work().read<float>(std::string("n floats over the host link, ") + (to_device ? "to" : "from") + " the GPU",
                              Count::param("n"));
  v.summary = std::string("cudaMemcpy ") + (to_device ? "host to device" : "device to host") + " from " + mem +
              " host memory";
  v.launches_kernels = false;     // copy engines only
  v.launch_synchronizes = true;   // cudaMemcpy returns once the copy is done
  v.sizes = vector_sizes({1 << 26});
  v.quick_sizes = vector_sizes({1 << 24});
  v.test_sizes = vector_sizes({1, 4096 + 3, 1 << 20});
  v.make = [to_device, pinned](const Params& p) { return std::make_unique<GpuTransfer>(p, to_device, pinned); };
  return v;
}
ROOFBENCH_REGISTER(make(true, true));
ROOFBENCH_REGISTER(make(false, true));
ROOFBENCH_REGISTER(make(true, false));
ROOFBENCH_REGISTER(make(false, false));

}  // namespace
}  // namespace roofbench::ceilings
