#pragma once
// What the host CPU is and what it can do in theory: cores, caches, SIMD width, FMA units and
// the clock it actually runs at (measured, since a VM's /proc/cpuinfo shows a nominal figure).
#include <cstddef>
#include <string>

#include "roofbench/cpu.h"

namespace roofbench {

// CpuInfo and cpu_info(): roofbench/cpu.h, public (a user's CPU kernel sizes its work by them).

// Every parallel region of the CPU kernels divides its work among all `threads`, each its own share
// (a cache slice, a counter, a chunk): with dynamic teams (OMP_DYNAMIC=true, or a program's own
// omp_set_dynamic) a region may get fewer, and the missing threads' shares go unwritten. This turns
// dynamic teams off for the regions the calling thread starts (the setting is per thread); the
// harness calls it wherever it prepares, runs or times a kernel.
void whole_openmp_teams();

// The number of CPUs in a Linux CPU list ("0-7,16-23": 16); 0 if it is empty or malformed.
int count_cpu_list(const std::string& list);

// Runs a chain of dependent integer adds (one cycle each on every x86 core since the P6) on all
// threads at once for about `seconds`, in five windows, and returns the mean over threads of each
// thread's fastest window, in cycles per second. Returns 0 where the chain is not implemented
// (non-x86).
double measure_core_clock_hz(double seconds);
// The calling thread's core clock from 0.2 ms of add chains (best of three windows): cheap
// enough to read after every sample. 0 where it cannot be measured.
double quick_core_clock_hz();

// cores x FP32 lanes x FMA units x 2 FLOP x clock; FP64 has half the lanes.
double theoretical_fma_peak(const CpuInfo& cpu, bool fp64, double clock_hz);
std::string theoretical_fma_derivation(const CpuInfo& cpu, bool fp64, double clock_hz);

}  // namespace roofbench
