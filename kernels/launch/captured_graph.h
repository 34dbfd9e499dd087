#pragma once
// A CUDA graph captured once from launches on a stream of its own, replayed with one
// cudaGraphLaunch: the batched form of the launch lesson and the graph-node launch ceiling.
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "roofbench/cuda.h"

namespace roofbench::launch {

// Loads a kernel's module now. Under lazy loading (the default since CUDA 12.2) a kernel is
// loaded at its first launch; when that launch is inside a capture, drivers before CUDA 12.3
// invalidate the capture. A graph whose kernels may not have run yet (a filter that runs only
// the graph form) loads them first; cudaFuncGetAttributes is the documented way to force it.
template <class Kernel>
void load_kernel(Kernel* kernel) {
  cudaFuncAttributes attributes;
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
}

class CapturedGraph {
 public:
  // Calls enqueue(stream) once, capturing what it launches on `stream`. When enqueue or the
  // capture fails, the capture is ended (the thread may call the runtime as before) and nothing
  // is left behind.
  template <class Enqueue>
  explicit CapturedGraph(Enqueue&& enqueue) {
    cudaStream_t raw = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
    const Handle<cudaStream_t> stream(raw, [](cudaStream_t s) { CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s)); });
    CUDA_CHECK(cudaStreamBeginCapture(raw, cudaStreamCaptureModeThreadLocal));
    struct EndCapture {  // on the way out of a throw: end the capture, drop its partial graph
      cudaStream_t s;
      bool armed = true;
      ~EndCapture() {
        if (!armed) return;
        cudaGraph_t partial = nullptr;
        (void)cudaStreamEndCapture(s, &partial);
        if (partial) (void)cudaGraphDestroy(partial);
        (void)cudaGetLastError();
      }
    } end_capture{raw};
    std::forward<Enqueue>(enqueue)(raw);
    end_capture.armed = false;
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(raw, &graph));
    graph_ = Handle<cudaGraph_t>(graph, [](cudaGraph_t g) { CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(g)); });
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    exec_ = Handle<cudaGraphExec_t>(exec, [](cudaGraphExec_t e) { CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(e)); });
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Every captured launch, with one launch, on the default stream.
  void launch() { CUDA_CHECK(cudaGraphLaunch(exec_.get(), nullptr)); }

  // The graph's kernel nodes (tests: one per captured kernel launch).
  std::size_t kernel_nodes() const {
    std::size_t count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph_.get(), nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CUDA_CHECK(cudaGraphGetNodes(graph_.get(), nodes.data(), &count));
    std::size_t kernels = 0;
    for (auto node : nodes) {
      cudaGraphNodeType type;
      CUDA_CHECK(cudaGraphNodeGetType(node, &type));
      kernels += type == cudaGraphNodeTypeKernel;
    }
    return kernels;
  }

 private:
  // A runtime handle and how to let it go (members in this order: the exec goes before its graph).
  template <class T>
  using Handle = std::unique_ptr<std::remove_pointer_t<T>, void (*)(T)>;
  Handle<cudaGraph_t> graph_{nullptr, nullptr};
  Handle<cudaGraphExec_t> exec_{nullptr, nullptr};
};

}  // namespace roofbench::launch
