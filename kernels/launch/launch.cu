// The launch lesson on the GPU (kernels/launch/launch.h): a chain of tiny steps as one kernel
// launch per step, as one replayed CUDA graph of those kernels, or fused into one kernel.
// Every sample includes the host's launches (Variant::launch_synchronizes).
// Run only this: roofbench run --device cuda:0 --filter 'launch/'
#include <memory>
#include <vector>

#include "roofbench/cuda.h"
#include "kernels/launch/captured_graph.h"
#include "kernels/launch/launch.h"

namespace roofbench::launch {
namespace {

// ---------------------------------------------------------------- kernels
__global__ void step_kernel(const float* src, float* y, long long n, float c) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = src[i] + c;
}

__global__ void fused_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, long long ops) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  // step_constant(k), (k % 7 + 1) / 1024, stepped instead of computed: a 64-bit k % 7 and its
  // conversion were some 20 instructions per declared add. Exact: multiples of 1/1024 up to 7/1024.
  float c = step_constant(0);
  for (long long k = 0; k < ops; ++k) {
    v += c;
    c = c == step_constant(6) ? step_constant(0) : c + step_constant(0);
  }
  y[i] = v;
}

// ---------------------------------------------------------------- launcher
class GpuChain final : public Instance {
 public:
  GpuChain(const Params& p, Form f) : n_(chain_n(p)), ops_(chain_ops(p)), form_(f), x_(n_), y_(n_) {
    // The per_op launches, captured once from a stream of their own (the kernel loaded first).
    if (form_ == Form::batched) {
      load_kernel(step_kernel);
      graph_ = std::make_unique<CapturedGraph>([this](cudaStream_t s) { steps(s); });
    }
  }

  void prepare(std::uint64_t seed) override {
    hx_.resize(static_cast<std::size_t>(n_));
    fill_chain_input(hx_.data(), n_, seed);
    x_.upload(hx_);
    y_.poison();
  }

  void run() override {
    switch (form_) {
      case Form::per_op: steps(nullptr); break;
      case Form::batched: graph_->launch(); break;  // one launch, `ops` kernel nodes
      case Form::fused:
        fused_kernel<<<blocks_for(n_, 256), 256>>>(x_.get(), y_.get(), n_, ops_);
        CUDA_CHECK_LAUNCH();
        break;
    }
  }

  Verification verify() override {
    const auto y = y_.download();
    return check_chain(hx_.data(), y.data(), n_, ops_);
  }

  // The captured graph's kernel nodes (tests: one node per step, every one a kernel).
  std::size_t graph_kernel_nodes() const { return graph_ ? graph_->kernel_nodes() : 0; }

 private:
  void steps(cudaStream_t s) {
    for (long long k = 0; k < ops_; ++k) {
      step_kernel<<<blocks_for(n_, 256), 256, 0, s>>>(k == 0 ? x_.get() : y_.get(), y_.get(), n_, step_constant(k));
      CUDA_CHECK_LAUNCH();
    }
  }
  std::int64_t n_, ops_;
  Form form_;
  DeviceBuffer<float> x_, y_;
  std::vector<float> hx_;
  std::unique_ptr<CapturedGraph> graph_;
};

// ---------------------------------------------------------------- registration
Variant make(Form f) {
  Variant v = launch_variant(f, Backend::cuda);
  v.summary = f == Form::per_op    ? "one kernel launch per step on the default stream"
              : f == Form::batched ? "the per_op launches captured once into a CUDA graph, replayed with one launch"
                                   : "one kernel doing every step in a register";
  v.make = [f](const Params& p) { return std::make_unique<GpuChain>(p, f); };
  return v;
}
ROOFBENCH_REGISTER(make(Form::per_op));
ROOFBENCH_REGISTER(make(Form::batched));
ROOFBENCH_REGISTER(make(Form::fused));

}  // namespace

// For tests (tests/kernels/test_cuda_kernels.cpp): the kernel nodes of the graph form's capture.
std::size_t graph_form_kernel_nodes(const Params& p) {
  GpuChain chain(p, Form::batched);
  return chain.graph_kernel_nodes();
}

}  // namespace roofbench::launch
