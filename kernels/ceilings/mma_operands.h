#pragma once
// The operands of the tensor-core ceilings (mma.sync and wgmma), shared by their kernels and
// their host checks. Each element of A and B is a small integer that depends on its row and
// column, so that a fragment loaded from the wrong place, a wrong shared-memory descriptor or a
// misread accumulator layout changes the result; with every element the same (1/8, the ceilings'
// old inputs) none of them could. Small integers keep every product and every partial sum exact
// in FP32, so the check is exact.

#ifdef __CUDACC__
#define ROOFBENCH_HOST_DEVICE __host__ __device__
#else
#define ROOFBENCH_HOST_DEVICE
#endif

namespace roofbench::ceilings {

// A (M x K) and B (K x N) elements, in [-2, 2]: one m×n×16 product term is at most 4, a k16
// dot product at most 64 in magnitude.
ROOFBENCH_HOST_DEVICE constexpr int mma_a(int m, int k) {
  return (2 * m + 3 * k + 1) % 5 - 2;
}
ROOFBENCH_HOST_DEVICE constexpr int mma_b(int k, int n) {
  return (3 * k + 4 * n + 2) % 5 - 2;
}
inline constexpr double kMmaDotBound = 64;  // |Σ_k a·b| over 16 terms

// D(m, n) of one k16 product.
constexpr int mma_dot16(int m, int n) {
  int s = 0;
  for (int k = 0; k < 16; ++k) s += mma_a(m, k) * mma_b(k, n);
  return s;
}

}  // namespace roofbench::ceilings
