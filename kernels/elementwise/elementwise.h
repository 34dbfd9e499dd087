#pragma once
// The elementwise lessons, shared by their CPU and CUDA files: declared work, references and
// checks. Each lesson pairs a naive form with a better one measured at the same sizes:
//   fusion    y = sin²x + cos²x as five kernels (each a full pass through memory) against one;
//             bias + GELU as two kernels against one;
//   lowprec   ReLU in FP32 against FP16 and BF16: half the bytes for the same work, so the
//             intensity doubles from 1/8 to 1/4 FLOP/byte and a memory-bound kernel goes twice
//             as fast.
// A pair's file holds both forms side by side, since the lesson is the difference between them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "roofbench/variant.h"
#include "kernels/ceilings/stream_ceilings.h"
#include "roofbench/half.h"
#include "roofbench/random.h"
#include "roofbench/verify.h"

namespace roofbench::elementwise {

inline constexpr std::int64_t kBiasLength = 1024;  // y[i] = gelu(x[i] + bias[i % 1024]): a row of 1024

// GELU in its tanh form (GPT-2; PyTorch's approximate="tanh").
inline double gelu(double t) {
  return 0.5 * t * (1.0 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)));
}

// The fusion lessons' roofs: each pass is a streaming loop of one STREAM shape, read one array and
// write another (copy) or read two and write one (triad), so its bytes are placed against the
// suite's own kernel of that shape (kernels/ceilings/, the same on CPU and GPU), not against the
// level's best ceiling: that is update, one array read and written back in place, a shape none of
// these passes has (40 against 55 GB/s on the 2-core Xeon of reports/baselines/
// cpu-intel-xeon-2c-avx512-l3-260m, where the best-of-level roof predicted the unfused chain 12%
// too fast). Fused and unfused forms alike, so the predicted speedup compares like with like.
inline const std::string kCopyRoof = ceilings::stream_ceiling_name(ceilings::StreamOp::copy, Level::dram);
inline const std::string kTriadRoof = ceilings::stream_ceiling_name(ceilings::StreamOp::triad, Level::dram);
// ---------------------------------------------------------------- y = sin²x + cos²x (FP32)
inline Variant sincos_variant(bool fused) {
  Variant v;
  v.family = "fusion";
  v.variant = fused ? "sincos_fused" : "sincos_unfused";
  v.reference = fused
                    ? "sin²x + cos²x computed in FP64, NaN where x is (one x in 256)"
                    : "sin²x + cos²x, and the sin x and cos x passes, computed in FP64, NaN where x is (one x in 256)";
  v.precision = Precision::fp32;
  const Count n = Count::param("n");
  const char* ops = "sin, cos, two squares and an add, a sin or a cos counted as one";
  if (fused) {
    // One sincos call: both from one range reduction (SLEEF's sincos on the CPU, CUDA's sincosf).
    v.work = Work()
                 .phase("y = sin²x + cos²x", kCopyRoof)
                 .read<float>("x", n)
                 .write<float>("y = sin²x + cos²x", n)
                 .flops(5 * n, ops)
                 .transcendentals("sincos", n);
    v.compared_with = "fusion/sincos_unfused/fp32";
  } else {
    // Five passes, each intermediate through memory: s = sin x, c = cos x, s² = s·s, c² = c·c, y = s² + c².
    v.work = Work()
                 .phase("s = sin x", kCopyRoof)
                 .read<float>("x", n)
                 .write<float>("s", n)
                 .flops(n, "sin counted as one")
                 .transcendentals("sin", n)
                 .phase("c = cos x", kCopyRoof)
                 .read<float>("x again", n)
                 .write<float>("c", n)
                 .flops(n, "cos counted as one")
                 .transcendentals("cos", n)
                 .phase("s² = s·s", kCopyRoof)
                 .read<float>("s", n)
                 .write<float>("s²", n)
                 .flops(n, "a square")
                 .phase("c² = c·c", kCopyRoof)
                 .read<float>("c", n)
                 .write<float>("c²", n)
                 .flops(n, "a square")
                 .phase("y = s² + c²", kTriadRoof)
                 .read<float>("s² and c²", 2 * n)
                 .write<float>("y", n)
                 .flops(n, "an add");
  }
  v.test_sizes = vector_sizes({1, 1000, 1 << 16, (1 << 16) + 3});
  return v;
}

// sin²x + cos²x is 1 up to the rounding of sin, cos, two squares and a sum: for every x, so y
// alone cannot show that element i was computed from x[i]. So one run of 16 x in 256 (aligned to
// 16), picked by a hash of the seed, and at least one run where n >= 64, is NaN, and y must be NaN
// exactly there (sin and cos of a NaN are NaN): a kernel that wrote 1s, read a neighbour or
// skipped part of x puts its NaNs elsewhere or nowhere. Whole aligned runs, so that a NaN shares
// a vector only with NaNs: SLEEF sends a whole vector with a NaN lane down its slow range
// reduction (a NaN fails its |x| test), and scattered NaNs slowed the CPU forms by 15 to 40%. Not
// below 64 elements, where a run could cover all of x, and the poison NaN of an unwritten y would
// pass. The unfused form's intermediates show more: given them (sin_x, cos_x), its first two
// passes are checked against sin x[i] and cos x[i] too.
inline void plant_sincos_nans(float* x, std::int64_t n, std::uint64_t seed) {
  if (n < 64) return;
  constexpr std::int64_t kRun = 16;
  const std::int64_t runs = n / kRun;
  std::uint64_t g = seed ^ 0xA11CEull;
  const std::int64_t always = static_cast<std::int64_t>(splitmix64(g) % static_cast<std::uint64_t>(runs));
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < runs; ++r) {
    std::uint64_t s = (seed ^ 0x5EEDull) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(r);
    if (r == always || splitmix64(s) % 256 == 0)
      std::fill(x + r * kRun, x + (r + 1) * kRun, std::numeric_limits<float>::quiet_NaN());
  }
}

inline Verification check_sincos(const float* x, const float* y, std::int64_t n, const float* sin_x = nullptr,
                                 const float* cos_x = nullptr) {
  const bool passes = sin_x && cos_x;
  return check_all(tolerance_for(Precision::fp32, 8.0),
                   passes ? "every element vs sin²x + cos²x in FP64 (NaN where x is), and its sin x and cos x "
                            "passes vs FP64"
                          : "every element vs sin²x + cos²x in FP64 (NaN where x is)",
                   n, [&](Checker& chk, std::int64_t i) {
                     if (std::isnan(x[i])) {
                       chk.check_nan(y[i], [i] { return fmt::format("y[{}] (x[{}] is NaN)", i, i); });
                       if (!passes) return;
                       chk.check_nan(sin_x[i], [i] { return fmt::format("sin x[{}] (x[{}] is NaN)", i, i); });
                       chk.check_nan(cos_x[i], [i] { return fmt::format("cos x[{}] (x[{}] is NaN)", i, i); });
                       return;
                     }
                     const double s = std::sin(static_cast<double>(x[i])), c = std::cos(static_cast<double>(x[i]));
                     chk.check(y[i], s * s + c * c, 1.0, [i] { return fmt::format("y[{}]", i); });
                     if (!passes) return;
                     chk.check(sin_x[i], s, 1.0, [i] { return fmt::format("sin x[{}]", i); });
                     chk.check(cos_x[i], c, 1.0, [i] { return fmt::format("cos x[{}]", i); });
                   });
}

// ---------------------------------------------------------------- y = gelu(x + bias)
template <class T>
Variant bias_gelu_variant(bool fused) {
  Variant v;
  v.family = "fusion";
  v.variant = fused ? "bias_gelu_fused" : "bias_gelu_unfused";
  v.reference = "gelu(x + bias) computed in FP64";
  v.precision = precision_of<T>();
  if (v.precision != Precision::fp32) v.math = Precision::fp32;  // computed in FP32, stored in 16 bits
  const Count n = Count::param("n");
  // The bias add 1, GELU 9 (t³: 2, t + 0.044715·t³: 2, ×√(2/π): 1, tanh counted as 1, 1 + …: 1, ×t, ×0.5).
  const char* ops = "the bias add 1 and GELU 9, tanh counted as one";
  const Precision p = v.precision;
  if (fused) {
    v.work = Work()
                 .phase("y = gelu(x + bias)", kCopyRoof)
                 .read("x", n, p)
                 .read("the bias, once", kBiasLength, p)
                 .write("y = gelu(x + bias)", n, p)
                 .flops(10 * n, ops)
                 .transcendentals("tanh", n);
    v.compared_with = "fusion/bias_gelu_unfused/" + to_string(v.precision);
  } else {
    // Two passes: t = x + bias through memory, then y = gelu(t).
    v.work = Work()
                 .phase("t = x + bias", kCopyRoof)
                 .read("x", n, p)
                 .read("the bias, once", kBiasLength, p)
                 .write("t", n, p)
                 .flops(n, "the bias add")
                 .phase("y = gelu(t)", kCopyRoof)
                 .read("t back", n, p)
                 .write("y = gelu(t)", n, p)
                 .flops(9 * n, "GELU 9, tanh counted as one")
                 .transcendentals("tanh", n);
  }
  v.test_sizes = vector_sizes({1, 1000, 1 << 16, (1 << 16) + 3});
  return v;
}

// Both forms round to T once per stored value: the unfused one also rounds t, which moves y by
// up to |gelu'(t)| ≤ 1.13 times t's rounding, hence the scale |y| + |t|.
template <class T>
Verification check_bias_gelu(const T* x, const T* bias, const T* y, std::int64_t n) {
  return check_all(tolerance_for(precision_of<T>(), 4.0), "every element vs gelu(x + bias) in FP64", n,
                   [&](Checker& chk, std::int64_t i) {
                     const double t = static_cast<double>(x[i]) + static_cast<double>(bias[i % kBiasLength]);
                     const double ref = gelu(t);
                     chk.check(static_cast<double>(y[i]), ref, std::fabs(ref) + std::fabs(t),
                               [i] { return fmt::format("y[{}]", i); });
                   });
}

// ---------------------------------------------------------------- y = max(x, 0)
template <class T>
Variant relu_variant() {
  Variant v;
  v.family = "lowprec";
  v.variant = "relu";
  v.reference = "max(x, 0), exact";
  v.precision = precision_of<T>();
  const Count n = Count::param("n");
  // A copy's shape (one array read, one written): placed against the copy ceiling, which must be
  // at least as fast as any kernel of its shape (a roof is an upper bound; roofline/model.h).
  v.work = Work()
               .phase("y = max(x, 0)", kCopyRoof)
               .read("x", n, v.precision)
               .write("y = max(x, 0)", n, v.precision)
               .flops(n, "a compare");
  if (v.precision != Precision::fp32) {
    v.compared_with = "lowprec/relu/fp32";
    // Placed against the FP32 roof: the GPU compares in FP32 after widening, and the CPU tests
    // a sign bit, an integer op no slower than an FP32 one. Either way the kernel is bounded by
    // memory long before any compute roof.
    v.math = Precision::fp32;
  }
  v.test_sizes = vector_sizes({1, 1000, 1 << 16, (1 << 16) + 3});
  return v;
}

template <class T>
Verification check_relu(const T* x, const T* y, std::int64_t n) {
  return check_all(tolerance_for(precision_of<T>(), 1.0), "every element vs max(x, 0), exact", n,
                   [&](Checker& chk, std::int64_t i) {
                     chk.check(static_cast<double>(y[i]), std::max(static_cast<double>(x[i]), 0.0), i);
                   });
}

}  // namespace roofbench::elementwise

namespace roofbench::elementwise {

// ---------------------------------------------------------------- three chained sigmoid layers
// Forward: a1 = σ(x), a2 = σ(a1), y = σ(a2). Backward, for an upstream gradient g:
//   gx = g · y(1−y) · a2(1−a2) · a1(1−a1).
// "store" keeps a1 and a2 in memory for the backward pass; "recompute" keeps only x and
// recomputes them inside the backward kernel: more FLOPs, fewer bytes. One run is a forward
// and a backward pass.
inline double sigmoid(double t) {
  return 1.0 / (1.0 + std::exp(-t));
}

inline Variant sigmoid3_variant(bool recompute) {
  Variant v;
  v.family = "recompute";
  v.variant = recompute ? "sigmoid3_recompute" : "sigmoid3_store";
  v.reference = "the three layers and their gradient computed in FP64";
  v.precision = Precision::fp32;
  // σ(t) = 1 / (1 + exp(−t)): 3 ops (exp counted as one). Forward 3 σ = 9; backward: a(1−a) per
  // layer (2 ops) and 3 products = 9; recompute adds the 3 σ again.
  const Count n = Count::param("n");
  if (recompute) {
    v.work = Work()
                 .phase("forward")
                 .read<float>("x", n)
                 .write<float>("y", n)
                 .flops(9 * n, "3 σ of 3, exp counted as one")
                 .transcendentals("exp", 3 * n)
                 .phase("backward")
                 .read<float>("x and g", 2 * n)
                 .write<float>("gx", n)
                 .flops(18 * n, "the 3 σ again and the gradient's 9")
                 .transcendentals("exp", 3 * n);
    v.compared_with = "recompute/sigmoid3_store/fp32";
  } else {
    v.work = Work()
                 .phase("forward")
                 .read<float>("x", n)
                 .write<float>("a1, a2, y", 3 * n)
                 .flops(9 * n, "3 σ of 3, exp counted as one")
                 .transcendentals("exp", 3 * n)
                 .phase("backward")
                 .read<float>("g, y, a2, a1", 4 * n)
                 .write<float>("gx", n)
                 .flops(9 * n, "the gradient's 9");
  }
  v.test_sizes = vector_sizes({1, 1000, 1 << 16, (1 << 16) + 3});
  return v;
}

inline Verification check_sigmoid3(const float* x, const float* g, const float* y, const float* gx, std::int64_t n) {
  return check_all(
      tolerance_for(Precision::fp32, 16.0), "y and gx vs the three layers and their gradient in FP64", n,
      [&](Checker& chk, std::int64_t i) {
        const double a1 = sigmoid(x[i]), a2 = sigmoid(a1), yy = sigmoid(a2);
        const double d = static_cast<double>(g[i]) * yy * (1 - yy) * a2 * (1 - a2) * a1 * (1 - a1);
        // 1 − a loses a/(1−a) of a's relative accuracy (a = 0.98 near x = 4: 49 times): the scale
        // carries that condition number of each factor.
        const double cond = 1 + a1 / (1 - a1) + a2 / (1 - a2) + yy / (1 - yy);
        chk.check(y[i], yy, std::fabs(yy), [i] { return fmt::format("y[{}]", i); });
        chk.check(gx[i], d, std::fabs(d) * cond, [i] { return fmt::format("gx[{}]", i); });
      });
}

}  // namespace roofbench::elementwise
