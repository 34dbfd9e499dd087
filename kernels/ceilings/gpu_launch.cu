// The GPU's launch ceilings: launches per second of nearly empty kernels (one block of 32
// threads; its first thread bumps a counter, so the check can count them), launched back to back
// on the default stream (`kernel`), as the kernel nodes of one replayed CUDA graph (`graph_node`:
// what each node adds), and as graphs of one such node replayed back to back (`graph`: what each
// cudaGraphLaunch costs, spread thin over the nodes of the first). Every sample includes the
// host's launches (Variant::launch_synchronizes): a form cut into many tiny kernels can go no
// faster than its launches at these rates (kernels/launch/launch.h).
// Run only these: roofbench ceilings --device cuda:0 --filter launch
#include <memory>
#include <string>

#include "roofbench/cuda.h"
#include "roofbench/variant.h"
#include "kernels/launch/captured_graph.h"
#include "kernels/launch/launch.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

__global__ void count_kernel(unsigned long long* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1ull);
}

// How the nearly empty kernels are launched.
enum class Path { kernel, graph_node, graph };

const char* path_name(Path p) {
  return p == Path::kernel ? "kernel" : p == Path::graph_node ? "graph_node" : "graph";
}

class GpuLaunches final : public Instance {
 public:
  // reps: 1 to 2^20, as a chain's steps (none would launch nothing and check nothing), refused
  // before the graph is captured.
  GpuLaunches(const Params& p, Path path) : reps_(launch::chain_param(p, "reps", std::int64_t{1} << 20)), counter_(1) {
    if (path != Path::kernel) launch::load_kernel(count_kernel);  // before the capture
    if (path == Path::graph_node)
      graph_ = std::make_unique<launch::CapturedGraph>([this](cudaStream_t s) { launches(s, reps_); });
    if (path == Path::graph) {
      graph_ = std::make_unique<launch::CapturedGraph>([this](cudaStream_t s) { launches(s, 1); });
      graph_replays_ = reps_;
    }
  }

  void prepare(std::uint64_t) override { CUDA_CHECK(cudaMemset(counter_.get(), 0, sizeof(unsigned long long))); }

  void run() override {
    if (!graph_) return launches(nullptr, reps_);
    for (std::int64_t r = 0; r < graph_replays_; ++r) graph_->launch();
  }

  Verification verify() override {
    const auto c = counter_.download();
    return check_all(tolerance_for(Precision::fp64), "the kernels counted vs the kernels launched", 1,
                     [&](Checker& chk, std::int64_t i) {
                       chk.check(static_cast<double>(c[0]), static_cast<double>(reps_), i);
                     });
  }

 private:
  void launches(cudaStream_t s, std::int64_t count) {
    for (std::int64_t r = 0; r < count; ++r) {
      count_kernel<<<1, 32, 0, s>>>(counter_.get());
      CUDA_CHECK_LAUNCH();
    }
  }

  std::int64_t reps_;
  std::int64_t graph_replays_ = 1;
  DeviceBuffer<unsigned long long> counter_;
  std::unique_ptr<launch::CapturedGraph> graph_;
};

Variant make(Path path) {
  Variant v;
  v.family = "ceiling";
  v.variant = std::string("launch_") + path_name(path);
  v.precision = Precision::fp64;  // the counter's precision in the check; the ceiling has none
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.level = Level::l2;
  v.warm = true;  // timed as the launch lesson it is the roof of (Variant::warm)
  v.reference = "the kernels counted by the device equal the kernels launched";
  v.summary = path == Path::graph_node ? "one CUDA graph of reps nearly empty kernel nodes, replayed with one launch"
              : path == Path::graph    ? "a CUDA graph of one nearly empty kernel node, replayed reps times back to back"
                                    : "reps nearly empty kernels (1 block of 32 threads) launched back to back on the "
                                      "default stream";
  const Count reps = Count::param("reps");
  v.work = Work()
               .write("a counter bumped once per kernel", reps, sizeof(unsigned long long))
               .launches(path_name(path), reps);
  v.launch_synchronizes = true;  // the host's launches are what it measures
  v.sizes = {Params{{"reps", 2000}}};
  v.quick_sizes = {Params{{"reps", 1000}}};
  v.test_sizes = {Params{{"reps", 1}}, Params{{"reps", 7}}};
  v.ceiling = CeilingSpec{
      v.variant, CeilingKind::launch, Level::l2,
      path == Path::graph_node ? "cudaGraphLaunch of a captured graph of reps kernel nodes <<<1, 32>>>, timed with "
                                 "events after a synchronize"
      : path == Path::graph    ? "reps cudaGraphLaunch of a captured graph of one kernel node <<<1, 32>>> back to back "
                                 "on the default stream, timed with events after a synchronize"
                            : "reps launches of a kernel <<<1, 32>>> back to back on the default stream, timed "
                              "with events after a synchronize",
      path_name(path)};
  // Launch rates are the process's own (its driver queues and contexts): a part of a split run
  // measured against another process's launch ceiling sat at 114-124% of it on the H200.
  v.ceiling->per_process = true;
  v.make = [path](const Params& p) { return std::make_unique<GpuLaunches>(p, path); };
  return v;
}
ROOFBENCH_REGISTER(make(Path::kernel));
ROOFBENCH_REGISTER(make(Path::graph_node));
ROOFBENCH_REGISTER(make(Path::graph));

}  // namespace
}  // namespace roofbench::ceilings
