#pragma once
// Why the GPU tests skip on this machine, in CUDA's own words (no driver, a driver too old for
// this build's runtime, no device), so that a skip on a machine that has a GPU is not mistaken
// for a machine without one.
#include <string>

#include "bench/device.h"

namespace roofbench::testing {

// Empty when a CUDA GPU is visible; else why not.
inline std::string no_gpu() {
  std::string why;
  if (cuda_device_count(&why) > 0) return "";
  return "no CUDA GPU visible" + (why.empty() ? std::string() : " (CUDA says " + why + ")");
}

}  // namespace roofbench::testing
