// libFuzzer target: what `ncu --csv` printed, as `roofbench crosscheck` reads it (a file a user
// hands over), and each kernel name cut to its base name. An InputError is the program refusing;
// anything else that escapes, and every sanitizer report, is a finding. Run: scripts/fuzz.sh
#include <cstddef>
#include <cstdint>
#include <string>

#include "reports/crosscheck.h"

using namespace roofbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    for (const auto& k : parse_ncu_csv(std::string(reinterpret_cast<const char*>(data), size)))
      (void)kernel_base_name(k.name);
  } catch (const InputError&) {
  }
  return 0;
}
