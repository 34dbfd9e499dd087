// The CUDA device on a real GPU (label `gpu`): a kernel fault loses the device for the rest of
// the process, and Device::lost() says so, which is what lets a run name the benchmark that
// faulted instead of failing every later one with the same CUDA error (bench/gbench_runner.cpp).
// An ordinary error (a bad launch configuration) loses nothing. The fault runs in a child
// process (a death test), since it would poison this one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "bench/device.h"
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
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // lost() cleared the non-sticky error
  touch_kernel<<<1, 32>>>(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}
