#pragma once
// Checking a kernel's output against its reference before any timing.
// An element passes when |got - ref| <= abs_tol + rel_tol * scale, where scale is |ref| for
// elementwise kernels and the sum of |terms| for reductions and dot products (the error bound
// of a sum grows with the magnitude of what was summed, not with the result).
// Non-finite output (the poisoned NaN left in place, an overflow) always fails.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "bench/results.h"
#include "bench/types.h"

namespace roofbench {

struct Tolerance {
  double abs_tol = 0;
  double rel_tol = 0;
};

// rel_tol = growth x unit roundoff of the precision, with a safety factor of 4; `growth` is how
// many roundings can pile up (1 for elementwise kernels, about sqrt(K) for a K-term dot product).
Tolerance tolerance_for(Precision p, double growth = 1.0, double abs_tol = 0.0);

// Records mismatches for the report: the first few (index, got, ref) in `detail`.
class Checker {
 public:
  Checker(Tolerance tol, std::string method) : tol_(tol) { v_.method = std::move(method); }
  // `where` names the element for the mismatch text, e.g. "C[3,17]" (built only on mismatch).
  void check(double got, double ref, double scale, const std::function<std::string()>& where);
  void check(double got, double ref, std::int64_t index) {
    check(got, ref, std::fabs(ref), [index] { return "[" + std::to_string(index) + "]"; });
  }
  Verification finish();

 private:
  Tolerance tol_;
  Verification v_;
  static constexpr int kMaxReported = 10;
};

// A poison value for outputs: NaN, so an element the kernel never wrote fails the check.
inline float poison_f32() {
  return std::nanf("0x7bad");
}

}  // namespace roofbench
