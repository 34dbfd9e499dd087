#pragma once
// The FMA ceilings' chains, x ← x·a + b, and the host's bit-exact model of them: shared by the GPU
// ceilings (gpu_fma.cu), the CPU ones (cpu_fma.cpp) and their host test (tests/kernels/
// test_fma_chain.cpp).
//
// An exact check of a chain's end tells a kernel that ran every step from one that ran fewer
// only if every step changes x. The ceilings' old chains were contractions (a < 1) toward a fixed
// point, and a contraction stops moving once its step is below half a unit in the last place:
// BF16's at once, FP16's after 450 to 560 of the GPU run's 4096 steps, the CPU's FP32 after 3.1
// million of its 4.2 million. So every chain now grows: a is the smallest number above 1 of its type,
// 1 + 2^-p (p: the bits after the binary point), and x·a exceeds x by x·2^-p, one to two units in
// x's last place. With b ≥ 0 every step moves x up by at least a unit, until it overflows: from
// 0.5, after about 12,900 steps in FP16 and 12,400 in BF16 (the GPU run takes 4096), never at
// these sizes in FP32 and FP64. run() counts the steps that moved, and the ceilings refuse a size
// at which one did not, so a chain that stalls cannot slip back in.
//
// The model's arithmetic: FP64 and FP32 by std::fma in their own type (one rounding, as the
// device's and the CPU's FMA). The 16-bit types by an FP32 fmaf, then one rounding to the 16-bit
// type; exact when b = 0, as the GPU's 16-bit chains use, because a product of two 16-bit values
// (at most 22 significant bits) fits FP32's 24, so fmaf does not round.
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "roofbench/half.h"
#include "roofbench/types.h"

#ifndef ROOFBENCH_HOST_DEVICE
#ifdef __CUDACC__
#define ROOFBENCH_HOST_DEVICE __host__ __device__
#else
#define ROOFBENCH_HOST_DEVICE
#endif
#endif

namespace roofbench::ceilings {

// Bits after the binary point of each precision's significand.
constexpr int fraction_bits(Precision p) {
  switch (p) {
    case Precision::fp64:
      return 52;
    case Precision::fp32:
      return 23;
    case Precision::fp16:
      return 10;
    case Precision::bf16:
      return 7;
  }
  return 0;
}

// 1 + 2^-p: exact in its precision, the smallest value above 1 there.
constexpr double growth_factor(Precision p) {
  double ulp = 1;
  for (int i = 0; i < fraction_bits(p); ++i) ulp /= 2;
  return 1 + ulp;
}

struct FmaChain {
  Precision precision;
  double a, b;  // exact in `precision`

  // One step, rounded as the hardware rounds it; x must be exact in `precision`.
  double step(double x) const {
    switch (precision) {
      case Precision::fp64:
        return std::fma(x, a, b);
      case Precision::fp32:
        return std::fma(static_cast<float>(x), static_cast<float>(a), static_cast<float>(b));
      case Precision::fp16:
        return static_cast<double>(
            half_t(std::fma(static_cast<float>(x), static_cast<float>(a), static_cast<float>(b))));
      case Precision::bf16:
        return static_cast<double>(
            bf16_t(std::fma(static_cast<float>(x), static_cast<float>(a), static_cast<float>(b))));
    }
    throw std::logic_error("FmaChain: unknown precision");
  }

  struct End {
    double x;            // after every step
    std::int64_t moved;  // steps, from the first, that each took x to a new finite value
  };
  End run(double x0, std::int64_t steps) const {
    End e{x0, 0};
    bool moving = true;
    for (std::int64_t i = 0; i < steps; ++i) {
      const double next = step(e.x);
      moving = moving && next != e.x && std::isfinite(next);
      if (moving) ++e.moved;
      e.x = next;
    }
    return e;
  }
};

// Where chain r starts. GPU: 0.5 + r/128, exact in every type. CPU: (50 + r)/100 in its type; a
// division, not 0.5 + 0.01·r, which a compiler may contract into an FMA inside the FMA kernels
// (clang does, under their target attribute) and not in the reference, moving every step by an ulp.
ROOFBENCH_HOST_DEVICE constexpr float gpu_fma_chain_start(int r) {
  return 0.5f + 0.0078125f * static_cast<float>(r);
}
template <class T>
T cpu_fma_chain_start(int r) {
  return static_cast<T>((50 + r) / 100.0);
}

// The GPU's chains: b = 0, passed at run time, so the compiler cannot see it and still emits an
// FMA (tests/kernels/test_sass.cpp counts them), and the 16-bit model stays exact.
constexpr FmaChain gpu_fma_chain(Precision p) {
  return FmaChain{p, growth_factor(p), 0};
}
// The CPU's: b = 2^-p, not 0, because its b is a constant the compiler sees, and an FMA that adds
// zero could be folded into a multiply (one FLOP, not the two the ceiling declares).
constexpr FmaChain cpu_fma_chain(Precision p) {
  return FmaChain{p, growth_factor(p), growth_factor(p) - 1};
}

}  // namespace roofbench::ceilings
