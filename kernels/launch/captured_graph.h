#pragma once
// A CUDA graph captured once from launches on a stream of its own, replayed with one
// cudaGraphLaunch: the batched form of the launch lesson and the graph-node launch ceiling.
#include <cstddef>
#include <utility>
#include <vector>

#include "roofbench/cuda.h"

namespace roofbench::launch {

class CapturedGraph {
 public:
  // Calls enqueue(stream) once, capturing what it launches on `stream`.
  template <class Enqueue>
  explicit CapturedGraph(Enqueue&& enqueue) {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    std::forward<Enqueue>(enqueue)(s);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph_));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CapturedGraph() {
    if (exec_) CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
    if (graph_) CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph_));
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Every captured launch, with one launch, on the default stream.
  void launch() { CUDA_CHECK(cudaGraphLaunch(exec_, nullptr)); }

  // The graph's kernel nodes (tests: one per captured kernel launch).
  std::size_t kernel_nodes() const {
    std::size_t count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CUDA_CHECK(cudaGraphGetNodes(graph_, nodes.data(), &count));
    std::size_t kernels = 0;
    for (auto node : nodes) {
      cudaGraphNodeType type;
      CUDA_CHECK(cudaGraphNodeGetType(node, &type));
      kernels += type == cudaGraphNodeTypeKernel;
    }
    return kernels;
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace roofbench::launch
