#pragma once
// Checking a kernel's output against its reference before any timing.
// An element passes when |got - ref| <= abs_tol + rel_tol * scale, where scale is |ref| for
// elementwise kernels and the sum of |terms| for reductions and dot products (the error bound
// of a sum grows with the magnitude of what was summed, not with the result).
// Non-finite output (the poisoned NaN left in place, an overflow) always fails.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roofbench/parallel.h"
#include "roofbench/types.h"

namespace roofbench {

// Outcome of checking a kernel's output against its reference.
struct Verification {
  bool ok = false;
  std::int64_t checked = 0;     // values compared (an element of each checked output)
  std::int64_t mismatches = 0;  // elements outside tolerance (or non-finite)
  double max_abs_error = 0;
  std::string method;  // e.g. "full FP64 reference" or "1024 sampled entries vs FP64"
  std::string detail;  // the first mismatches, index and both values
};

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
  // Inline up to the verdict: a check at 2^28 elements makes this call 2^28 times, and an
  // out-of-line call with a std::function made for each element cost 17 ns of a core per element
  // (a 2-core EPYC, lowprec/relu/fp16: more than its FP64 reference).
  template <class Where>
  void check(double got, double ref, double scale, const Where& where) {
    ++v_.checked;
    const double err = std::fabs(got - ref);
    if (std::isfinite(err) && err > v_.max_abs_error) v_.max_abs_error = err;
    if (std::isfinite(got) && err <= tol_.abs_tol + tol_.rel_tol * scale) return;
    mismatch(got, ref, scale, where);
  }
  void check(double got, double ref, std::int64_t index) {
    check(got, ref, std::fabs(ref), [index] { return "[" + std::to_string(index) + "]"; });
  }
  // An element whose reference is NaN (NaN in, NaN out): it passes only as a NaN.
  void check_nan(double got, const std::function<std::string()>& where);
  // An element that fails without a comparison, because the reference cannot judge it: it counts
  // as checked and as a mismatch (why() says why; built only while the first few are reported).
  void fail(const std::function<std::string()>& why);
  Verification finish();
  // Takes in the checks of `later`, made over elements that come after this one's: the counts
  // add up, and the first mismatches reported stay the first in element order.
  void absorb(const Checker& later);

 private:
  // An element that failed check(): counted and, while the first few are reported, reported.
  void mismatch(double got, double ref, double scale, const std::function<std::string()>& where);
  Tolerance tol_;
  Verification v_;
  std::vector<std::string> reported_;  // the first mismatches, in order; joined into detail by finish()
  static constexpr std::size_t kMaxReported = 10;
};

// Checks elements [0, n) on every core with the outcome of checking them one by one in order:
// each thread checks contiguous chunks with a Checker of its own, and the chunks are joined in
// element order. `one(chk, i)` checks element i (computing its reference, in FP64, there: the
// references are what takes the time, minutes single-threaded at 2^28 elements). `chunk`: elements
// per task; smaller where each element's reference is long (a GEMM entry's K-term dot product), so
// that a few thousand elements still go to every core.
template <class CheckOne>
Verification check_all(Tolerance tol, const std::string& method, std::int64_t n, CheckOne&& one,
                       std::int64_t chunk = 1 << 14) {
  const std::int64_t per_task = std::max<std::int64_t>(1, chunk);
  const std::int64_t chunks = std::max<std::int64_t>(1, (n + per_task - 1) / per_task);
  std::vector<Checker> parts(static_cast<std::size_t>(chunks), Checker(tol, method));
#pragma omp parallel for schedule(static, 1)  // chunks dealt out in turn: every thread gets a share
  for (std::int64_t c = 0; c < chunks; ++c) {
    Checker& chk = parts[static_cast<std::size_t>(c)];
    const std::int64_t end = std::min(n, (c + 1) * per_task);
    for (std::int64_t i = c * per_task; i < end; ++i) one(chk, i);
  }
  for (std::size_t c = 1; c < parts.size(); ++c) parts[0].absorb(parts[c]);
  return parts[0].finish();
}

// A poison value for outputs: NaN, so an element the kernel never wrote fails the check.
inline float poison_f32() {
  return std::nanf("0x7bad");
}

}  // namespace roofbench
