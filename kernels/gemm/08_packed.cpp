// Packed CPU GEMM in the GotoBLAS/BLIS style: from blocked, A and B are copied into panels laid
// out in the order a register-blocked micro-kernel reads them, and the loops around it are
// blocked for the caches this CPU reports.
// Run only this: roofbench run --device cpu --filter 'gemm/packed'
//
// The five loops (BLIS's names): jc over NC-wide column panels of B and C (sized to the LLC),
// pc over KC-deep slabs of K (the micro-kernel's A and B slivers, (MR + NR) x KC floats, fit in
// L1), ic over MC-tall row panels of A (an MC x KC packed block fits in L2), then jr and ir over
// the MR x NR tiles of C. Each B slab is packed once per (jc, pc) by all threads together; each
// thread packs its own A block and runs the tiles of its rows. The micro-kernel keeps an MR x NR
// tile of C in registers (AVX-512: 12 x 32, 24 zmm accumulators; AVX2: 6 x 16, 12 ymm) and per
// k broadcasts MR values of A against NR of B: MR x NR FMAs for (MR + NR) loads.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "roofbench/cpu.h"
#include "kernels/gemm/cpu_gemm.h"
#include "kernels/gemm/packed.h"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- micro-kernels
// c[MR x NR] (row stride ldc) = (accumulate ? c : 0) + sum over k < kc of a[k][MR] * b[k][NR],
// a and b packed: a sliver of A is MR values per k, a sliver of B NR values per k. The tile of C
// is rarely in cache (C is touched once per KC slab): its lines are prefetched first and added
// after the k loop, so their latency hides behind the FMAs instead of stalling the first one.
using MicroKernel = void (*)(std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc,
                             bool accumulate);

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void micro_avx512(std::int64_t kc, const float* a, const float* b, float* c,
                                                     std::int64_t ldc, bool accumulate) {
  constexpr int MR = 12;
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 31), _MM_HINT_T0);
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b + 32 * k), b1 = _mm512_loadu_ps(b + 32 * k + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 ar = _mm512_set1_ps(a[MR * k + r]);
      acc0[r] = _mm512_fmadd_ps(ar, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(ar, b1, acc1[r]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    if (accumulate) {
      acc0[r] = _mm512_add_ps(acc0[r], _mm512_loadu_ps(c + r * ldc));
      acc1[r] = _mm512_add_ps(acc1[r], _mm512_loadu_ps(c + r * ldc + 16));
    }
    _mm512_storeu_ps(c + r * ldc, acc0[r]);
    _mm512_storeu_ps(c + r * ldc + 16, acc1[r]);
  }
}

__attribute__((target("avx2,fma"))) void micro_avx2(std::int64_t kc, const float* a, const float* b, float* c,
                                                    std::int64_t ldc, bool accumulate) {
  constexpr int MR = 6;
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 15), _MM_HINT_T0);
    acc0[r] = _mm256_setzero_ps();
    acc1[r] = _mm256_setzero_ps();
  }
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + 16 * k), b1 = _mm256_loadu_ps(b + 16 * k + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + MR * k + r);
      acc0[r] = _mm256_fmadd_ps(ar, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(ar, b1, acc1[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    if (accumulate) {
      acc0[r] = _mm256_add_ps(acc0[r], _mm256_loadu_ps(c + r * ldc));
      acc1[r] = _mm256_add_ps(acc1[r], _mm256_loadu_ps(c + r * ldc + 8));
    }
    _mm256_storeu_ps(c + r * ldc, acc0[r]);
    _mm256_storeu_ps(c + r * ldc + 8, acc1[r]);
  }
}
#endif

// Without AVX2: the same loop nest in plain C++, 4 x 16, left to the compiler.
void micro_generic(std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc, bool accumulate) {
  constexpr int MR = 4, NR = 16;
  float acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = accumulate ? c[r * ldc + j] : 0.0f;
  for (std::int64_t k = 0; k < kc; ++k)
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) acc[r][j] += a[MR * k + r] * b[NR * k + j];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) c[r * ldc + j] = acc[r][j];
}

struct Shape {
  int mr, nr;
  MicroKernel kernel;
};

Shape shape_for(const std::string& isa) {
#if defined(__x86_64__)
  if (isa == "avx512f") return {12, 32, micro_avx512};
  if (isa == "avx2+fma") return {6, 16, micro_avx2};
#endif
  return {4, 16, micro_generic};
}

// ---------------------------------------------------------------- packing
// Rows [i0, i0 + mc) x columns [p0, p0 + kc) of A (row-major, lda K) into MR-row slivers, k-major
// inside each; rows past M are zeros, so the micro-kernel never branches on an edge.
void pack_a(const float* a, std::int64_t lda, std::int64_t i0, std::int64_t mc, std::int64_t M, std::int64_t p0,
            std::int64_t kc, int mr, float* out) {
  for (std::int64_t s = 0; s < mc; s += mr) {
    float* dst = out + s * kc;
    for (std::int64_t k = 0; k < kc; ++k)
      for (int r = 0; r < mr; ++r) {
        const std::int64_t i = i0 + s + r;
        dst[k * mr + r] = i < M ? a[i * lda + p0 + k] : 0.0f;
      }
  }
}

// Rows [p0, p0 + kc) x columns [j0, j0 + nc) of B into NR-column slivers, k-major inside each;
// columns past N are zeros. Sliver `s` of the nc / NR is packed by whichever thread gets it.
void pack_b_sliver(const float* b, std::int64_t ldb, std::int64_t p0, std::int64_t kc, std::int64_t j0,
                   std::int64_t s, std::int64_t N, int nr, float* out) {
  float* dst = out + s * nr * kc;
  const std::int64_t j = j0 + s * nr, width = std::min<std::int64_t>(nr, N - j);
  for (std::int64_t k = 0; k < kc; ++k) {
    const float* src = b + (p0 + k) * ldb + j;
    std::memcpy(dst + k * nr, src, sizeof(float) * static_cast<std::size_t>(width));
    for (std::int64_t x = width; x < nr; ++x) dst[k * nr + x] = 0.0f;
  }
}

// ---------------------------------------------------------------- the loops
class Packed {
 public:
  Packed(std::int64_t M, std::int64_t N, std::int64_t K, const std::string& isa)
      : M(M), N(N), K(K), shape_(shape_for(isa)) {
    const CpuInfo& cpu = cpu_info();
    const std::int64_t mr = shape_.mr, nr = shape_.nr;
    // KC: the B sliver, which stays while every A sliver of the block streams past it, in half of
    // L1 (BLIS's rule); the A slivers come from L2. A deeper KC touches C fewer times.
    const std::int64_t l1 = cpu.l1d_bytes ? static_cast<std::int64_t>(cpu.l1d_bytes) : 32 * 1024;
    kc_ = std::clamp<std::int64_t>(l1 / 2 / (4 * nr) / 8 * 8, 64, 512);
    // MC: a packed MC x KC block of A in half of L2.
    const std::int64_t l2 = cpu.l2_bytes ? static_cast<std::int64_t>(cpu.l2_bytes) : 512 * 1024;
    const std::int64_t mc_cache = std::clamp<std::int64_t>(l2 / 2 / (4 * kc_) / mr * mr, mr, 1024 / mr * mr);
    // The ic loop is what the threads share: as many MC blocks as a multiple of the thread count,
    // of equal height, each at most mc_cache. (One 1020-row block and one of 4 rows at M = 1024
    // left a thread idle and halved the rate.)
    const std::int64_t threads = cpu.threads > 0 ? cpu.threads : 1;
    std::int64_t blocks = std::max<std::int64_t>(threads, (M + mc_cache - 1) / mc_cache);
    blocks = (blocks + threads - 1) / threads * threads;
    mc_ = std::min(mc_cache, ((M + blocks - 1) / blocks + mr - 1) / mr * mr);
    // NC: a packed KC x NC slab of B in a quarter of the LLC the threads share (a VM may report
    // its host's whole L3: NC stops at 4096 columns).
    const std::int64_t llc = cpu.llc_bytes ? static_cast<std::int64_t>(cpu.llc_bytes) : 8 << 20;
    nc_ = std::clamp<std::int64_t>(llc / 4 / (4 * kc_) / nr * nr, nr, 4096 / nr * nr);
    b_pack_.resize(static_cast<std::size_t>(kc_ * nc_));
    a_pack_.resize(static_cast<std::size_t>(cpu.threads > 0 ? cpu.threads : 1));
    for (auto& a : a_pack_) a.resize(static_cast<std::size_t>(mc_ * kc_));
  }

  void compute(const float* a, const float* b, float* c) {
    const std::int64_t mr = shape_.mr, nr = shape_.nr;
    const int threads = static_cast<int>(a_pack_.size());
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      float* ap = a_pack_[static_cast<std::size_t>(t)].data();
      float edge[16 * 32];  // an MR x NR tile that overhangs C is computed here, then copied
      for (std::int64_t jc = 0; jc < N; jc += nc_) {
        const std::int64_t nc = std::min(nc_, N - jc), slivers = (nc + nr - 1) / nr;
        for (std::int64_t pc = 0; pc < K; pc += kc_) {
          const std::int64_t kc = std::min(kc_, K - pc);
          const bool accumulate = pc > 0;
#pragma omp for schedule(static)
          for (std::int64_t s = 0; s < slivers; ++s) pack_b_sliver(b, N, pc, kc, jc, s, N, shape_.nr, b_pack_.data());
          // (the implicit barrier: every sliver of B is packed before any thread reads it)
#pragma omp for schedule(dynamic, 1)
          for (std::int64_t ic = 0; ic < M; ic += mc_) {
            const std::int64_t mc = std::min(mc_, M - ic);
            pack_a(a, K, ic, mc, M, pc, kc, shape_.mr, ap);
            for (std::int64_t jr = 0; jr < nc; jr += nr) {
              const float* bs = b_pack_.data() + (jr / nr) * nr * kc;
              for (std::int64_t ir = 0; ir < mc; ir += mr) {
                const float* as = ap + ir * kc;
                float* ct = c + (ic + ir) * N + jc + jr;
                const std::int64_t rows = std::min(mr, M - ic - ir), cols = std::min(nr, N - jc - jr);
                if (rows == mr && cols == nr) {
                  shape_.kernel(kc, as, bs, ct, N, accumulate);
                  continue;
                }
                std::fill(edge, edge + mr * nr, 0.0f);
                if (accumulate)
                  for (std::int64_t r = 0; r < rows; ++r)
                    for (std::int64_t j = 0; j < cols; ++j) edge[r * nr + j] = ct[r * N + j];
                shape_.kernel(kc, as, bs, edge, nr, true);
                for (std::int64_t r = 0; r < rows; ++r)
                  for (std::int64_t j = 0; j < cols; ++j) ct[r * N + j] = edge[r * nr + j];
              }
            }
          }
          // (the implicit barrier: no thread repacks B while another still reads it)
        }
      }
    }
  }

  const std::int64_t M, N, K;

 private:
  Shape shape_;
  std::int64_t kc_ = 0, mc_ = 0, nc_ = 0;
  std::vector<float> b_pack_;
  std::vector<std::vector<float>> a_pack_;
};

class PackedGemm final : public CpuGemm {
 public:
  explicit PackedGemm(const Params& p) : CpuGemm(p), packed_(M, N, K, cpu_info().isa) {}

 private:
  void compute(const float* a, const float* b, float* c) override { packed_.compute(a, b, c); }
  Packed packed_;
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = cpu_gemm_variant();
  v.variant = "packed";
  v.summary = "A and B packed into micro-panels; a 12x32 (AVX-512) or 6x16 (AVX2) register tile of C; "
              "KC, MC, NC from the L1, L2 and LLC sizes";
  v.sizes = square_gemm_sizes({256, 512, 1024, 2048});
  v.quick_sizes = square_gemm_sizes({256, 512});
  v.make = [](const Params& p) { return std::make_unique<PackedGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace

void packed_gemm(const float* a, const float* b, float* c, std::int64_t M, std::int64_t N, std::int64_t K,
                 const std::string& isa) {
  Packed(M, N, K, isa).compute(a, b, c);
}

}  // namespace roofbench::gemm
