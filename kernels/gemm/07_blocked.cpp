// Cache-blocked CPU GEMM: from naive, C is computed in BM×BN tiles, K in BK-deep slabs, and the
// innermost loop runs along a row of B so it vectorizes.
// Run only this: roofbench run --device cpu --filter 'gemm/blocked'
#include <algorithm>

#include "kernels/gemm/cpu_gemm.h"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// A BK×BN slab of B (128 KiB) stays in L2 while every row of the C tile streams over it, and the
// BM×BN tile of C (32 KiB) stays in L1/L2 across the whole K loop. The i-k-j order turns the
// inner loop into c_row += a_ik · b_row: unit stride, one FMA per element, vectorized by the
// compiler in a clone per instruction set (AVX-512, AVX2, baseline) picked at run time.
constexpr std::int64_t BM = 32, BN = 256, BK = 128;

__attribute__((target_clones("avx512f", "avx2,fma", "default"))) void tile(const float* a, const float* b, float* c,
                                                                           std::int64_t N, std::int64_t K,
                                                                           std::int64_t i0, std::int64_t i1,
                                                                           std::int64_t j0, std::int64_t j1) {
  float acc[BM][BN];
  const std::int64_t w = j1 - j0;
  for (std::int64_t i = i0; i < i1; ++i)
    for (std::int64_t j = 0; j < w; ++j) acc[i - i0][j] = 0.0f;
  for (std::int64_t k0 = 0; k0 < K; k0 += BK) {
    const std::int64_t k1 = std::min(K, k0 + BK);
    for (std::int64_t i = i0; i < i1; ++i) {
      float* __restrict__ crow = acc[i - i0];
      for (std::int64_t k = k0; k < k1; ++k) {
        const float aik = a[i * K + k];
        const float* __restrict__ brow = b + k * N + j0;
#pragma omp simd
        for (std::int64_t j = 0; j < w; ++j) crow[j] += aik * brow[j];
      }
    }
  }
  for (std::int64_t i = i0; i < i1; ++i)
    for (std::int64_t j = 0; j < w; ++j) c[i * N + j0 + j] = acc[i - i0][j];
}

class BlockedGemm final : public CpuGemm {
 public:
  using CpuGemm::CpuGemm;

 private:
  void compute(const float* a, const float* b, float* c) override {
    const std::int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t ti = 0; ti < tiles_m; ++ti)
      for (std::int64_t tj = 0; tj < tiles_n; ++tj)
        tile(a, b, c, N, K, ti * BM, std::min(M, (ti + 1) * BM), tj * BN, std::min(N, (tj + 1) * BN));
  }
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = cpu_gemm_variant();
  v.variant = "blocked";
  v.summary = "32x256 tiles of C over 128-deep slabs of K; vectorized along rows of B";
  v.sizes = square_gemm_sizes({256, 512, 1024, 2048});
  v.quick_sizes = square_gemm_sizes({256, 512});
  v.make = [](const Params& p) { return std::make_unique<BlockedGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
