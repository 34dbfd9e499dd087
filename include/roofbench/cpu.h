#pragma once
// What the host CPU is, for a CPU kernel that sizes its work to it (threads, caches, the widest
// FMA it runs): the same figures roofbench's own CPU kernels and ceilings use, detected once.
#include <cstddef>
#include <string>

namespace roofbench {

struct CpuInfo {
  std::string vendor, model_name;
  int family = 0, model = 0;
  int threads = 1;            // OpenMP threads the suite uses (all cores)
  std::size_t l1d_bytes = 0;  // per core
  std::size_t l2_bytes = 0;   // per core
  std::size_t llc_bytes = 0;  // the last-level cache cpu0 uses (a VM may report its host's whole L3)
  // Logical CPUs that share cpu0's L1d, L2 and last-level cache (sysfs shared_cpu_list): SMT
  // siblings share a core's L1 and L2; an L3 is shared by its core complex, not the whole chip on
  // many AMD and some Intel parts. Where sysfs does not say: 1 for the L1d and L2, and every
  // thread for the LLC.
  int l1d_sharers = 1, l2_sharers = 1, llc_sharers = 1;
  std::size_t memory_bytes = 0;  // physical memory this system has (0: unknown)
  std::string isa;            // widest FMA kernel this CPU runs: "avx512f", "avx2+fma", "scalar"
  int fp32_lanes = 4;         // FP32 lanes of one FMA unit's datapath
  int fma_units = 1;          // FMA units per core
  std::string fma_source;     // where lanes and units come from
  double nominal_hz = 0;      // /proc/cpuinfo "cpu MHz", 0 if absent
};

const CpuInfo& cpu_info();  // detected once

}  // namespace roofbench
