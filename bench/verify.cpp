#include "roofbench/verify.h"

#include <fmt/format.h>

#include <algorithm>

namespace roofbench {

Tolerance tolerance_for(Precision p, double growth, double abs_tol) {
  return Tolerance{abs_tol, 4.0 * growth * unit_roundoff(p)};
}

void Checker::mismatch(double got, double ref, double scale, const std::function<std::string()>& where) {
  if (reported_.size() < kMaxReported)
    reported_.push_back(fmt::format("{}: got {:.9g}, expected {:.9g} (tolerance {:.3g})", where(), got, ref,
                                    tol_.abs_tol + tol_.rel_tol * scale));
  ++v_.mismatches;
}

void Checker::check_nan(double got, const std::function<std::string()>& where) {
  ++v_.checked;
  if (std::isnan(got)) return;
  if (reported_.size() < kMaxReported) reported_.push_back(fmt::format("{}: got {:.9g}, expected NaN", where(), got));
  ++v_.mismatches;
}

void Checker::fail(const std::function<std::string()>& why) {
  ++v_.checked;
  if (reported_.size() < kMaxReported) reported_.push_back(why());
  ++v_.mismatches;
}

void Checker::absorb(const Checker& later) {
  v_.checked += later.v_.checked;
  v_.mismatches += later.v_.mismatches;
  v_.max_abs_error = std::max(v_.max_abs_error, later.v_.max_abs_error);
  for (const auto& r : later.reported_) {
    if (reported_.size() >= kMaxReported) break;
    reported_.push_back(r);
  }
}

Verification Checker::finish() {
  v_.ok = v_.checked > 0 && v_.mismatches == 0;
  v_.detail.clear();
  for (const auto& r : reported_) v_.detail += (v_.detail.empty() ? "" : "; ") + r;
  if (v_.checked == 0) v_.detail = "nothing was checked";
  if (v_.mismatches > static_cast<std::int64_t>(kMaxReported))
    v_.detail += fmt::format("; and {} more", v_.mismatches - static_cast<std::int64_t>(kMaxReported));
  return v_;
}

}  // namespace roofbench
