// libFuzzer target: a calibration file (noise.json, from `roofbench calibrate` on some machine)
// as compare, history and ab read it with --noise. An InputError is the program refusing;
// anything else that escapes, and every sanitizer report, is a finding. Run: scripts/fuzz.sh
#include <cstddef>
#include <cstdint>
#include <string>

#include "reports/ab.h"

using namespace roofbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)parse_noise(std::string(reinterpret_cast<const char*>(data), size), "noise.json", "");
  } catch (const InputError&) {
  }
  return 0;
}
