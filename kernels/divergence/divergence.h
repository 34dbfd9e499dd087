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

#include "roofbench/variant.h"
#include "roofbench/verify.h"

namespace roofbench::divergence {

inline constexpr int kMaxWays = 32;

// A = 1 + (w+1)·2^-23, just above 1, B = 1/4 + w/64: each step adds about B to x while x is small
// (x·A exceeds x by at most 2^-18·|x|) and, once B is below an ulp, x·A alone moves x by an ulp or
// more. So every step of every element moves it, from any input in [-1, 1), until x overflows
// (after 20 million steps or more), and the exact check of y counts every step: a kernel that ran
// fewer fails. (The old A in [0.5, 0.75) made a contraction whose steps
// fell below half an ulp after 60 to 80: at the run's 512 only those were checked.) A stays an
// FMA's multiplier, not 1, which a compiler would fold into an add.
inline float coef_a(int w) {
  return 1.0f + static_cast<float>(w + 1) * 0x1p-23f;
}
inline float coef_b(int w) {
  return 0.25f + static_cast<float>(w) / 64.0f;
}

// What every variant must produce: the same FMAs in the same order, so the result is exact.
// *moved (if given) is cleared when a step leaves x where it was.
inline float expected(float x, int w, int iters, bool* moved = nullptr) {
  const float a = coef_a(w), b = coef_b(w);
  for (int k = 0; k < iters; ++k) {
    const float next = std::fma(x, a, b);
    if (moved && next == x) *moved = false;
    x = next;
  }
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
  return check_all(Tolerance{0, 0}, "every element vs the same FMAs on the host, exact, every step moving", n,
                   [&](Checker& chk, std::int64_t i) {
                     bool moved = true;
                     const float want = expected(x[i], way_of(i), iters, &moved);
                     if (!moved)
                       chk.fail([&] {
                         return fmt::format(
                             "y[{}]: from x = {}, the host's FMAs stop moving within the {} steps, so "
                             "the check could not count them all",
                             i, x[i], iters);
                       });
                     else
                       chk.check(y[i], want, 0, [i] { return fmt::format("y[{}]", i); });
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
