#pragma once
// Numbers as people read them, for every floor that prints one: the harness's progress lines,
// the model's warnings and the printers.
#include <string>

namespace roofbench {

// Engineering prefix, three significant digits: si(1.23e10, "FLOP/s") == "12.3 GFLOP/s".
std::string si(double v, const std::string& unit);
// 1.5e-3 → "1.50 ms"; seconds down to nanoseconds, "us" for micro.
std::string duration(double seconds);

}  // namespace roofbench
