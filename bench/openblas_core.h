#pragma once
// OpenBLAS picks its kernels from the CPU model when it loads. On a VM whose CPU model it does not
// know (QEMU's "Intel(R) Xeon(R) Processor"), OpenBLAS 0.3.21 falls back to its Prescott (SSE3)
// kernels: 65 GFLOP/s of SGEMM on 2 AVX-512 cores where its SkylakeX kernels do several times
// that, and the CPU ladder's vendor reference would be a crippled one. The kernels are chosen
// before main() from OPENBLAS_CORETYPE, so the fix is a restart with it set.
#include <string>

namespace roofbench {

std::string openblas_core();  // the kernels OpenBLAS runs ("SkylakeX", "Haswell", "Prescott")

// The OPENBLAS_CORETYPE that runs this CPU's widest ISA ("avx512f" -> SkylakeX, "avx2+fma" ->
// Haswell) when `core` lacks even AVX2; empty when `core` is fine (a core OpenBLAS recognized,
// Zen included, is never second-guessed).
std::string openblas_better_core(const std::string& core, const std::string& isa);

// For `run` and `ceilings`: when OPENBLAS_CORETYPE is unset and openblas_better_core() names a
// core, sets it (and ROOFBENCH_OPENBLAS_FALLBACK to the core OpenBLAS chose) and restarts this
// process through /proc/self/exe, once. Returns when there is nothing to do or exec fails.
void restart_for_openblas(int argc, char** argv);

// What results.json's device records: the core in use and, after a restart, what OpenBLAS had
// chosen by itself ("SkylakeX (OPENBLAS_CORETYPE set by roofbench: OpenBLAS chose Prescott)").
std::string openblas_core_description();

// For a process that cannot restart (Python's: the roofbench package set OPENBLAS_CORETYPE for
// OpenBLAS's load alone, then put the environment back): what OpenBLAS would have chosen, for
// openblas_core_description(), as ROOFBENCH_OPENBLAS_FALLBACK says it after a restart.
void note_openblas_fallback(const std::string& chosen);

}  // namespace roofbench
