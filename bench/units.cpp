#include "bench/units.h"

#include <fmt/format.h>

#include <cmath>

namespace roofbench {

std::string si(double v, const std::string& unit) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  if (!std::isfinite(v)) return "—";
  int i = 0;
  double a = std::fabs(v);
  while (a >= 999.5 && i < 6) {
    a /= 1000;
    v /= 1000;
    ++i;
  }
  const int digits = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
  return fmt::format("{:.{}f} {}{}", v, digits, prefixes[i], unit);
}

std::string duration(double s) {
  if (!std::isfinite(s)) return "—";
  const double a = std::fabs(s);
  auto three = [](double x, const char* u) {
    const int d = std::fabs(x) >= 99.95 ? 0 : std::fabs(x) >= 9.995 ? 1 : 2;
    return fmt::format("{:.{}f} {}", x, d, u);
  };
  if (a >= 1) return three(s, "s");
  if (a >= 1e-3) return three(s * 1e3, "ms");
  if (a >= 1e-6) return three(s * 1e6, "us");
  return three(s * 1e9, "ns");
}

}  // namespace roofbench
