#pragma once
// A user's kernel family on roofbench's roofline: y = max(a·x + b, 0), written as two passes
// (t = a·x + b, then y = max(t, 0)) and fused into one. What both backends share lives here: the
// declaration (what it is, the work it must do, what it is checked against) and the check.
#include <roofbench/roofbench.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace fused_op {

constexpr float kA = 1.5f, kB = -0.25f;

// Everything but the backend, the unit, the sizes and the instance, which each backend adds.
inline roofbench::Variant declare(bool fused) {
  using roofbench::Count;
  roofbench::Variant v;
  v.family = "myops";
  v.variant = fused ? "axpb_relu_fused" : "axpb_relu_unfused";
  v.precision = roofbench::Precision::fp32;
  v.reference = "max(a·x + b, 0) computed in FP64";
  const Count n = Count::param("n");
  if (fused) {
    v.work = roofbench::Work().read<float>("x", n).write<float>("y", n).flops(3 * n, "a multiply, an add, a max");
    v.compared_with = "myops/axpb_relu_unfused/fp32";  // the reports put the two side by side
  } else {
    v.work = roofbench::Work()
                 .read<float>("x", n)
                 .write<float>("t = a·x + b", n)
                 .read<float>("t", n)
                 .write<float>("y = max(t, 0)", n)
                 .flops(3 * n, "a multiply, an add, a max");
  }
  v.test_sizes = roofbench::vector_sizes({1, 1000, (1 << 16) + 3});
  return v;
}

// Every element against the same arithmetic in FP64. Two roundings in FP32 (the multiply and the
// add) bound the error relative to what was added, |a·x| + |b|, not to the result: where a·x and b
// nearly cancel, the result is small but its error is not.
inline roofbench::Verification check(const float* x, const float* y, std::int64_t n) {
  return roofbench::check_all(roofbench::tolerance_for(roofbench::Precision::fp32, 2.0),
                              "every element vs max(a·x + b, 0) in FP64", n,
                              [&](roofbench::Checker& chk, std::int64_t i) {
                                const double ax = double(kA) * x[i];
                                const double ref = std::max(ax + double(kB), 0.0);
                                chk.check(y[i], ref, std::abs(ax) + std::abs(double(kB)),
                                          [i] { return "y[" + std::to_string(i) + "]"; });
                              });
}

}  // namespace fused_op
