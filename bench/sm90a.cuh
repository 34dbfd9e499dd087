#pragma once
// What every sm_90a-only file shares: the guard that turns its kernels into traps for other
// entries of the architecture list, and the host-side check that refuses other GPUs first.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <string>

#include "bench/cuda_check.h"
#include "bench/types.h"

// wgmma, TMA and their kin exist only in sm_90a code. Device code guarded by
// `#ifdef ROOFBENCH_NO_SM90A` compiles to a trap for every other architecture in the list.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFBENCH_NO_SM90A 1
#endif

namespace roofbench {

// Variant::only_on for every sm_90a-only variant: the run leaves it out on other GPUs.
inline constexpr const char* kSm90Only = "9.0";

// Throws InputError naming `what` unless the current GPU is sm_90 (the only one sm_90a code runs on).
inline void require_sm90(const std::string& what) {
  int dev = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (major != 9 || minor != 0)
    throw InputError(fmt::format("{} is built for sm_90a (Hopper) only; this GPU is sm_{}{}", what, major, minor));
}

}  // namespace roofbench
