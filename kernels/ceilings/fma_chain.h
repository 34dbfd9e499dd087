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
// 0.5, after about 13,000 steps in FP16 and 12,400 in BF16 (the GPU run takes 4096), never at
// these sizes in FP32 and FP64. run() counts the steps that moved, and the ceilings refuse a size
// at which one did not, so a chain that stalls cannot slip back in.
//
// The model's arithmetic: FP64 and FP32 by std::fma in their own type (one rounding, as the
// device's and the CPU's FMA). The 16-bit types by an FP32 fmaf, then one rounding to the 16-bit
// type; exact when b = 0, as the GPU's 16-bit chains use, because a product of two 16-bit values
// (at most 22 significant bits) fits FP32's 24, so fmaf does not round.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

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
// What each GPU thread writes: the sum, over its chains' lanes (paired 16-bit types: two equal
// lanes), of how far each moved from its start, x − start, in FP64, after `iters` steps; and the
// fewest steps any chain moved. Every difference is exact in FP64 (x and start lie within a factor
// of two of each other in FP64 and FP32; a 16-bit x has few bits), and so is their sum (multiples
// of one small unit, far below 2^53 of them). So the sum grows with every step any chain takes,
// and the check tells every step count from every other. (The chains' plain FP64 sum rounded: for
// FP64 chains it equalled its neighbour's at a quarter of the step counts, 1 and 2 among them.)
inline constexpr int kGpuFmaChains = 8;
constexpr int gpu_fma_lanes(Precision p) {
  return p == Precision::fp16 || p == Precision::bf16 ? 2 : 1;
}
struct GpuFmaThread {
  double sum = 0;
  std::int64_t moved = 0;
};
inline GpuFmaThread gpu_fma_thread(Precision p, std::int64_t iters) {
  const FmaChain chain = gpu_fma_chain(p);
  GpuFmaThread t{0, iters};
  for (int r = 0; r < kGpuFmaChains; ++r) {
    const FmaChain::End e = chain.run(gpu_fma_chain_start(r), iters);
    t.moved = std::min(t.moved, e.moved);
    for (int l = 0; l < gpu_fma_lanes(p); ++l) t.sum += e.x - gpu_fma_chain_start(r);
  }
  return t;
}
// Why the check of a thread's sum after `iters` steps could not count every step, or "": a chain
// that stopped moving, or a sum that came out as the sum one step either side.
inline std::string gpu_fma_uncounted(Precision p, std::int64_t iters) {
  const GpuFmaThread t = gpu_fma_thread(p, iters);
  if (t.moved < iters)
    return "a chain stops moving after " + std::to_string(t.moved) + " of its " + std::to_string(iters) + " steps";
  for (const std::int64_t other : {iters - 1, iters + 1})
    if (other >= 0 && gpu_fma_thread(p, other).sum == t.sum)
      return "a thread's sum after " + std::to_string(other) + " steps rounds to the same as after " +
             std::to_string(iters);
  return "";
}

// The CPU's: b = 2^-p, not 0, because its b is a constant the compiler sees, and an FMA that adds
// zero could be folded into a multiply (one FLOP, not the two the ceiling declares).
constexpr FmaChain cpu_fma_chain(Precision p) {
  return FmaChain{p, growth_factor(p), growth_factor(p) - 1};
}

}  // namespace roofbench::ceilings
