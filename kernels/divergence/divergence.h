#pragma once
// The control-divergence lesson, shared by its CPU and CUDA files. Every element runs `iters`
// dependent FMAs, x = fma(x, A[w], B[w]), on one of `ways` sets of constants, the way w chosen
// from the element's position. The variants differ only in how the way is chosen and reached:
//   divergent   GPU: w = lane % ways, so the branch splits inside every warp and the warp runs
//               each taken path in turn; CPU: w from random bits, so the branch predictor fails
//               half the time;
//   uniform     the same branches, GPU: w = warp % ways, so each warp takes one path; CPU: the
//               keys sorted, so the predictor is right;
//   branchless  no branch: A[w] and B[w] are loaded from a table and every thread runs the same
//               instructions.
// The same FLOPs everywhere, so the FLOP rates compare directly.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "bench/registry.h"
#include "roofbench/verify.h"

namespace roofbench::divergence {

inline constexpr int kMaxWays = 32;

// |A| < 1: the iteration converges to B / (1 − A) and stays finite for any iteration count.
inline float coef_a(int w) {
  return 0.5f + static_cast<float>(w) / 128.0f;
}
inline float coef_b(int w) {
  return 0.25f + static_cast<float>(w) / 64.0f;
}

// What every variant must produce: the same FMAs in the same order, so the result is exact.
inline float expected(float x, int w, int iters) {
  for (int k = 0; k < iters; ++k) x = std::fma(x, coef_a(w), coef_b(w));
  return x;
}

inline Variant divergence_variant(const std::string& how) {
  Variant v;
  v.family = "divergence";
  v.variant = how;
  v.reference = "the same FMAs on the host, exact";
  v.precision = Precision::fp32;
  const Count n = Count::param("n");
  v.work = Work().read<float>("x", n).write<float>("y", n).flops(
      2 * n * Count::param("iters"), "iters dependent FMAs per element on one of `ways` constant sets, an FMA is 2");
  if (how != "uniform") v.compared_with = "divergence/uniform/fp32";
  return v;
}

// `way_of(i)` is the way element i took.
template <class WayOf>
Verification check_divergence(const float* x, const float* y, std::int64_t n, int iters, WayOf way_of) {
  return check_all(Tolerance{0, 0}, "every element vs the same FMAs on the host, exact", n,
                   [&](Checker& chk, std::int64_t i) {
                     chk.check(y[i], expected(x[i], way_of(i), iters), 0, [i] { return fmt::format("y[{}]", i); });
                   });
}

// ---------------------------------------------------------------- the CPU lesson's loop
// (divergence.cpp): y[i] = kCpuIters FMAs on x[i] with way key[i]'s constants (0 or 1), reached
// through a branch or, branchless, through a table, over [0, n) on every OpenMP thread. Two
// builds of it: for the FMA instruction, and with libm's fmaf for a CPU without one (std::fma
// outside an FMA target is a call, and the calls would be the lesson). Declared for the tests of
// each path.
inline constexpr int kCpuIters = 4;
enum class CpuFmaPath { instruction, libm };
bool cpu_has_fma_instruction();
// Throws InputError for CpuFmaPath::instruction on a CPU without FMA.
void cpu_divergence_loop(CpuFmaPath path, bool branchless, const float* x, const std::uint8_t* key, float* y,
                         std::int64_t n);

}  // namespace roofbench::divergence
