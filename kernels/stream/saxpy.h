#pragma once
// What the CPU and CUDA SAXPY share: declared work, the constant and the check.
#include <fmt/format.h>

#include <cmath>

#include "roofbench/variant.h"
#include "roofbench/verify.h"

namespace roofbench::stream {

inline constexpr float kSaxpyAlpha = 1.5f;

// y_out[i] must equal a·x[i] + y_in[i], within one rounding (with or without a fused multiply-add).
inline Verification check_saxpy(const float* x, const float* y_in, const float* y_out, std::int64_t n) {
  return check_all(tolerance_for(Precision::fp32, 2.0), "every element vs FP64 reference", n,
                   [&](Checker& chk, std::int64_t i) {
                     const double ref = static_cast<double>(kSaxpyAlpha) * x[i] + y_in[i];
                     chk.check(y_out[i], ref, std::fabs(kSaxpyAlpha * x[i]) + std::fabs(y_in[i]),
                               [i] { return fmt::format("y[{}]", i); });
                   });
}

inline Variant saxpy_variant() {
  Variant v;
  v.family = "stream";
  v.variant = "saxpy";
  v.reference = "a·x + y computed in FP64";
  v.precision = Precision::fp32;
  const Count n = Count::param("n");
  v.work = Work().read<float>("x", n).read<float>("y", n).write<float>("y = a·x + y", n).flops(2 * n, "a multiply and an add");
  v.test_sizes = vector_sizes({1, 1000, 1 << 16, (1 << 16) + 3});
  return v;
}

}  // namespace roofbench::stream
