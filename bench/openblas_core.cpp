#include "bench/openblas_core.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "bench/cpu_info.h"

extern "C" char* openblas_get_corename(void);  // OpenBLAS's own, declared in its cblas.h

namespace roofbench {

std::string openblas_core() {
  const char* c = openblas_get_corename();
  return c ? c : "";
}

std::string openblas_better_core(const std::string& core, const std::string& isa) {
  // OpenBLAS's cores with AVX2 kernels (0.3.21 names); anything else on an AVX2 CPU is a fallback.
  static const std::set<std::string> avx2 = {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen",
                                             "Excavator"};
  if (core.empty() || avx2.count(core)) return "";
  if (isa == "avx512f") return "SkylakeX";
  if (isa == "avx2+fma") return "Haswell";
  return "";
}

void restart_for_openblas(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "run") != 0 && std::strcmp(argv[1], "ceilings") != 0)) return;
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("ROOFBENCH_OPENBLAS_FALLBACK")) return;  // the user's, or done
  const std::string core = openblas_core();
  const std::string better = openblas_better_core(core, cpu_info().isa);
  if (better.empty()) return;
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  setenv("ROOFBENCH_OPENBLAS_FALLBACK", core.c_str(), 1);
  execv("/proc/self/exe", argv);
  // exec failed: carry on with the kernels OpenBLAS chose; the device description says which.
  unsetenv("OPENBLAS_CORETYPE");
}

namespace {
std::string& noted_fallback() {
  static std::string chosen;
  return chosen;
}
}  // namespace

void note_openblas_fallback(const std::string& chosen) { noted_fallback() = chosen; }

std::string openblas_core_description() {
  std::string d = openblas_core();
  const char* fallback = std::getenv("ROOFBENCH_OPENBLAS_FALLBACK");
  if (!fallback && !noted_fallback().empty()) fallback = noted_fallback().c_str();
  if (fallback)
    d += std::string(" (OPENBLAS_CORETYPE set by roofbench: OpenBLAS chose ") + fallback + " on this CPU model)";
  else if (const char* env = std::getenv("OPENBLAS_CORETYPE"))
    d += std::string(" (OPENBLAS_CORETYPE=") + env + " from the environment)";
  return d;
}

}  // namespace roofbench
