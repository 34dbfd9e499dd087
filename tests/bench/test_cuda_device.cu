// The CUDA device on a real GPU (label `gpu`): launches hidden behind a blocking kernel leave
// a short kernel's launch out of its time, and a launch that waits for the GPU ends the hold
// instead of deadlocking (bench/launch_timing.h); a kernel fault loses the device for the rest of
// the process, and Device::lost() says so, which is what lets a run name the benchmark that
// faulted instead of failing every later one with the same CUDA error (bench/gbench_runner.cpp).
// An ordinary error (a bad launch configuration) loses nothing. The fault runs in a child
// process (a death test), since it would poison this one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "bench/device.h"
#include "roofbench/cuda.h"
#include "tests/gpu_skip.h"

using namespace roofbench;

namespace {

__global__ void trap_kernel() {
  __trap();  // what the wgmma GEMM's mbarrier wait does after 10 s
}

__global__ void touch_kernel(int* p) {
  if (p) *p = 1;
}

// In the child: a healthy device, a trap, then lost() must say why; exit 0 when it all holds.
[[noreturn]] void fault_and_ask() {
  auto dev = make_cuda_device(0);
  const bool healthy_before = dev->lost().empty();
  trap_kernel<<<1, 1>>>();
  (void)cudaDeviceSynchronize();
  const std::string why = dev->lost();
  std::fprintf(stderr, "lost: %s\n", why.c_str());
  std::exit(healthy_before && !why.empty() ? 0 : 1);
}

}  // namespace

TEST(CudaDeviceDeathTest, AKernelFaultLosesTheDeviceAndLostSaysWhy) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": the fault is tested on a GPU";
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: CUDA does not survive fork()
  EXPECT_EXIT(fault_and_ask(), ::testing::ExitedWithCode(0), "lost: cuda[A-Za-z]+ \\(");
}

TEST(CudaDevice, ABadLaunchConfigurationDoesNotLoseTheDevice) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": the device is tested on a GPU";
  auto dev = make_cuda_device(0);
  touch_kernel<<<1, 4096>>>(nullptr);  // more threads than a block may have: refused at launch
  EXPECT_EQ(dev->lost(), "");
  // Refused, not faulted: the error is this binary's runtime's last error (libroofbench carries a
  // runtime of its own, whose last error lost() clears), and reading it clears it. Which error
  // names the refusal is the runtime's choice: CUDA 13.0 with driver 580 on an H200 said
  // cudaErrorInvalidValue (smoke stage, 2026-11-27), older runtimes cudaErrorInvalidConfiguration.
  const cudaError_t refused = cudaGetLastError();
  EXPECT_TRUE(refused == cudaErrorInvalidConfiguration || refused == cudaErrorInvalidValue)
      << cudaGetErrorName(refused) << ": " << cudaGetErrorString(refused);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a refused launch's error is not sticky";
  touch_kernel<<<1, 32>>>(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

namespace {

__global__ void empty_kernel() {}

// One empty kernel per run: all its time is launch and event overhead.
class EmptyLaunch final : public Instance {
 public:
  explicit EmptyLaunch(bool synchronize_inside = false) : sync_(synchronize_inside) {}
  void prepare(std::uint64_t) override {}
  void run() override {
    empty_kernel<<<1, 1>>>();
    if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("empty_kernel did not launch");
    if (sync_) (void)cudaDeviceSynchronize();  // what a synchronous cudaMemcpy does
  }
  Verification verify() override { return {}; }

 private:
  bool sync_;
};

double median_of(Device& dev, Instance& inst, Launch launch, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(dev.time_run(inst, launch));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

TEST(CudaDevice, AShortKernelsTimeLeavesItsLaunchOutWhenTheStreamIsHeld) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": launch hiding is measured on a GPU";
  auto dev = make_cuda_device(0);
  EmptyLaunch inst;
  // The first launch unheld: a kernel not yet loaded (lazy loading, CUDA's default) may wait for
  // the GPU, which a held stream would keep busy until the hold's timeout (the harness's first
  // warm-up is unheld for the same reason).
  (void)median_of(*dev, inst, Launch::synchronous, 5);
  (void)median_of(*dev, inst, Launch::hidden, 20);  // clocks up
  const double hidden = median_of(*dev, inst, Launch::hidden, 300);
  const double synchronous = median_of(*dev, inst, Launch::synchronous, 300);
  std::printf("empty kernel: %.2f us queued behind the blocking kernel, %.2f us after a synchronize\n", hidden * 1e6,
              synchronous * 1e6);
  EXPECT_LT(hidden, 0.7 * synchronous);
  EXPECT_LT(hidden, 5e-6);
  EXPECT_EQ(dev->launch_method(Launch::hidden).rfind("queued behind a blocking kernel", 0), 0u);
}

TEST(CudaDevice, ALaunchThatWaitsForTheGpuEndsTheHoldAndLaterSamplesSynchronize) {
  // A run() that synchronizes while the stream is held waits for the blocking kernel's timeout
  // (5 s) once; the sample is taken again after a synchronize, and so is every later one.
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": the hold's timeout is tested on a GPU";
  auto dev = make_cuda_device(0);
  EmptyLaunch waits(/*synchronize_inside=*/true);
  const double t = dev->time_run(waits, Launch::hidden);
  EXPECT_GT(t, 0);
  EXPECT_LT(t, 1e-3);  // the retaken sample, not the wait
  EXPECT_NE(dev->launch_method(Launch::hidden).find("held the stream"), std::string::npos)
      << dev->launch_method(Launch::hidden);
  // Later samples start after a synchronize: the waiting run again costs no 5 s timeout.
  const auto start = std::chrono::steady_clock::now();
  const double again = dev->time_run(waits, Launch::hidden);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(again, 0);
  EXPECT_LT(again, 1e-3);
  EXPECT_LT(wall, 1.0) << "a later sample was held again and waited for the hold's timeout";
  EmptyLaunch inst;
  EXPECT_GT(dev->time_run(inst, Launch::hidden), 0);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(CudaDevice, ABufferLargerThanTheFreeDeviceMemoryIsRefusedBeforeCudaMalloc) {
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty())
    GTEST_SKIP() << why << ": device memory is checked on a GPU";
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  try {
    roofbench::DeviceBuffer<float> b(total_bytes / sizeof(float) + 1);
    ADD_FAILURE() << "a buffer larger than the device was allocated";
  } catch (const roofbench::MemoryRefused& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
  }
  // A refusal by cudaMalloc itself would have thrown CudaError, which the catch above lets through
  // (a failed test): that is the check (throw_cuda clears the last error, so cudaGetLastError
  // could not tell).
  roofbench::DeviceBuffer<float> small(1024);  // and the device still allocates
  EXPECT_NE(small.get(), nullptr);
}
