// Every CPU variant in the registry, at its test sizes (small, non-square, not multiples of any
// tile), against its reference. The list comes from the registry, so a new variant is tested
// without touching this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "bench/cpu_info.h"
#include "bench/harness.h"
#include "kernels/divergence/divergence.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/gemm/reference.h"
#include "kernels/launch/launch.h"
#include "roofbench/half.h"
#include "roofbench/random.h"
#include "tests/testing.h"

using namespace roofbench;

namespace {
std::vector<const Variant*> cpu_variants() {
  return roofbench::testing::variants_of(Backend::cpu);
}
}  // namespace

class CpuVariant : public ::testing::TestWithParam<const Variant*> {};

TEST_P(CpuVariant, MatchesItsReferenceAtEveryTestSize) {
  const Variant& v = *GetParam();
  auto dev = make_cpu_device();
  for (const auto& p : v.test_sizes) {
    auto inst = v.make(p);
    const Verification r = prepare_and_verify(*dev, *inst, 1234);
    EXPECT_TRUE(r.ok) << v.name(p) << ": " << r.detail;
    EXPECT_GT(r.checked, 0) << v.name(p);
  }
}

// prepare() leaves every checked output poisoned, so a kernel that wrote nothing fails its check
// instead of passing on what an earlier instance left in the same memory.
TEST_P(CpuVariant, FailsItsCheckWhenItDidNotRun) {
  const Variant& v = *GetParam();
  for (const auto& p : v.test_sizes) {
    auto inst = v.make(p);
    inst->prepare(1234);
    const Verification r = inst->verify();
    EXPECT_FALSE(r.ok) << v.name(p) << " passed its check without running: " << r.method;
  }
}

TEST_P(CpuVariant, DeclaresPositiveWorkAtEverySize) {
  const Variant& v = *GetParam();
  for (const auto* sizes : {&v.sizes, &v.quick_sizes, &v.test_sizes})
    for (const auto& p : *sizes) {
      EXPECT_GT(v.work.bytes(p), 0) << v.name(p);
      EXPECT_GE(v.work.flops(p), 0) << v.name(p);
      EXPECT_GT(v.work.host_bytes(p), 0) << v.name(p);
    }
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuVariant, ::testing::ValuesIn(cpu_variants()), roofbench::testing::VariantName());

TEST(CpuInfo, CountsLinuxCpuLists) {
  EXPECT_EQ(count_cpu_list("0"), 1);
  EXPECT_EQ(count_cpu_list("0-1"), 2);
  EXPECT_EQ(count_cpu_list("0-7,16-23"), 16);
  EXPECT_EQ(count_cpu_list("3,5,9-10"), 4);
  for (const char* bad : {"", "x", "0-", "-3", "4-2", "1,,2", "0-1a"}) EXPECT_EQ(count_cpu_list(bad), 0) << bad;
}

// Each cache ceiling's slice is at most half of its level's share per thread (the level over the
// threads that share it), so that all the threads' slices stay resident together.
TEST(CpuInfo, CacheCeilingSlicesFitTheirLevelsShare) {
  const CpuInfo& cpu = cpu_info();
  const std::map<std::string, std::pair<std::size_t, int>> levels = {
      {"ceiling/l1_read/fp32", {cpu.l1d_bytes, cpu.l1d_sharers}},
      {"ceiling/l2_read/fp32", {cpu.l2_bytes, cpu.l2_sharers}},
      {"ceiling/l3_read/fp32", {cpu.llc_bytes, cpu.llc_sharers}}};
  int seen = 0;
  for (const auto* v : cpu_variants()) {
    const auto it = levels.find(v->base_name());
    if (it == levels.end()) continue;
    ++seen;
    const auto [bytes, sharers] = it->second;
    ASSERT_GE(sharers, 1);
    const std::int64_t kib = param(v->sizes.at(0), "kib_per_thread");
    EXPECT_LE(static_cast<std::size_t>(kib) * 1024,
              std::max<std::size_t>(4096, bytes / 2 / static_cast<std::size_t>(std::min(sharers, cpu.threads))))
        << v->base_name();
  }
  EXPECT_EQ(seen, 3);
}

TEST(Registry, HasTheFoundationFamiliesOnTheCpu) {
  std::set<std::string> names;
  for (const auto* v : cpu_variants()) names.insert(v->base_name());
  for (const char* n : {"gemm/naive/fp32", "gemm/blocked/fp32", "gemm/openblas/fp32", "stream/saxpy/fp32",
                        "ceiling/dram_read/fp32", "ceiling/dram_write/fp32", "ceiling/dram_copy/fp32",
                        "ceiling/dram_triad/fp32", "ceiling/fp32_fma/fp32", "ceiling/fp64_fma/fp64"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(GemmWork, FlopsAndBytesFollowTheirDerivation) {
  const Params p = {{"M", 64}, {"N", 32}, {"K", 16}};
  EXPECT_DOUBLE_EQ(gemm::work(Precision::fp32).flops(p), 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(gemm::work(Precision::fp32).bytes(p), 4.0 * (64 * 16 + 16 * 32 + 64 * 32));
  // 16-bit inputs, FP32 output.
  EXPECT_DOUBLE_EQ(gemm::work(Precision::bf16).bytes(p), 2.0 * (64 * 16 + 16 * 32) + 4.0 * 64 * 32);
  // The derivation is written from the same terms.
  EXPECT_EQ(gemm::work(Precision::bf16).derivation(),
            "reads A (K·M × 2 B), B (K·N × 2 B); writes C (M·N × 4 B): 2·K·M + 2·K·N + 4·M·N B; 2·K·M·N FLOPs (a "
            "multiply and an add per term of C = A·B)");
}

TEST(GemmWork, SixteenBitVariantsDeclareTheirBytesAndTheirMath) {
  const Params p = {{"M", 8}, {"N", 8}, {"K", 8}};
  const Variant simt = gemm::variant_for(Precision::bf16, Backend::cuda, Unit::simt);
  EXPECT_EQ(simt.math, Precision::fp32);  // widened to FP32 on the CUDA cores: the FP32 roof
  EXPECT_DOUBLE_EQ(simt.work.bytes(p), 2.0 * 128 + 4.0 * 64);
  const Variant tensor = gemm::variant_for(Precision::fp16, Backend::cuda, Unit::tensor);
  EXPECT_FALSE(tensor.math);  // the tensor rate is the input type's
  EXPECT_EQ(tensor.precision, Precision::fp16);
  EXPECT_FALSE(gemm::variant_for(Precision::fp32, Backend::cpu, Unit::simd).math);
}

TEST(GemmCheck, SixteenBitInputsAreCheckedAtTheirStoredValues) {
  // A = 1/3 and B = 3 rounded to FP16: the reference multiplies the stored values, so an FP32
  // accumulation of their exact products passes, and the product of the unrounded values fails.
  const std::int64_t M = 4, N = 4, K = 64;
  const std::vector<half_t> A(M * K, half_t(1.0 / 3.0)), B(K * N, half_t(3.0));
  const double exact = static_cast<double>(A[0]) * static_cast<double>(B[0]) * K;
  std::vector<float> C(M * N, static_cast<float>(exact));
  EXPECT_TRUE(gemm::check(A.data(), B.data(), C.data(), M, N, K, 1).ok);
  std::fill(C.begin(), C.end(), static_cast<float>(K));  // (1/3)·3·K without the rounding of 1/3
  EXPECT_FALSE(gemm::check(A.data(), B.data(), C.data(), M, N, K, 1).ok);
}

TEST(GemmCheck, CatchesASingleWrongEntry) {
  const std::int64_t M = 20, N = 30, K = 40;
  std::vector<float> A(M * K, 0.5f), B(K * N, 0.25f), C(M * N, 0.5f * 0.25f * K);
  EXPECT_TRUE(gemm::check(A.data(), B.data(), C.data(), M, N, K, 1).ok);
  C[17 * N + 3] *= 1.0001f;  // far outside 4·u·sqrt(K) relative
  const Verification v = gemm::check(A.data(), B.data(), C.data(), M, N, K, 1);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.mismatches, 1);
  EXPECT_NE(v.detail.find("C[17,3]"), std::string::npos) << v.detail;
}

TEST(GemmCheck, SamplesLargeOutputsButAlwaysTheCorners) {
  const std::int64_t M = 300, N = 300, K = 2;
  std::vector<float> A(M * K, 1.0f), B(K * N, 1.0f), C(M * N, 2.0f);
  C[M * N - 1] = 0;  // the last corner
  const Verification v = gemm::check(A.data(), B.data(), C.data(), M, N, K, 1);
  EXPECT_EQ(v.checked, 2048);
  EXPECT_FALSE(v.ok);
}

TEST(GemmCheck, SamplesOneEntryInEveryTileOfALargeC) {
  // A wrong or unwritten tile, at the kernels' smallest tile size or larger, is always in the
  // sample; at 8192^2 a sample of 2048 random entries missed a given 128x128 tile 6 times in 10.
  for (const auto& [M, N, block] : std::vector<std::array<std::int64_t, 3>>{
           {8192, 8192, 32}, {300, 300, 32}, {1, 100000, 32}, {16384, 16384, 64}, {4099, 2053, 32}}) {
    const gemm::Sample s = gemm::sample_entries(M, N, 5);
    EXPECT_EQ(s.block, block) << M << "x" << N;
    std::set<std::pair<std::int64_t, std::int64_t>> tiles;
    std::set<std::int64_t> cols;
    for (const std::int64_t e : s.entries) {
      ASSERT_GE(e, 0);
      ASSERT_LT(e, M * N);
      tiles.insert({e / N / block, e % N / block});
      cols.insert(e % N);
    }
    EXPECT_EQ(static_cast<std::int64_t>(tiles.size()), ((M + block - 1) / block) * ((N + block - 1) / block))
        << M << "x" << N;
    EXPECT_GE(static_cast<std::int64_t>(s.entries.size()), gemm::kLeastSampled);
    EXPECT_LE(static_cast<std::int64_t>(s.entries.size()), gemm::kFullCheck + gemm::kLeastSampled);
    for (const std::int64_t corner : {std::int64_t{0}, N - 1, (M - 1) * N, M * N - 1})
      EXPECT_TRUE(std::count(s.entries.begin(), s.entries.end(), corner)) << M << "x" << N << " corner " << corner;
    if (s.entries.size() > static_cast<std::size_t>(gemm::kLeastSampled))  // one column per tile column, 2 corners
      EXPECT_LE(static_cast<std::int64_t>(cols.size()), (N + block - 1) / block + 2) << M << "x" << N;
    EXPECT_EQ(gemm::sample_entries(M, N, 5).entries, s.entries);  // fixed by the seed
  }
  EXPECT_EQ(gemm::sample_entries(256, 256, 5).block, 0);  // 65536 entries: all of them
  EXPECT_EQ(gemm::sample_entries(256, 256, 5).entries.size(), 65536u);
}

TEST(GemmCheck, CatchesOneUnwrittenTileAnywhere) {
  const std::int64_t M = 1000, N = 2000, K = 2;  // sampled: 2,000,000 entries
  std::vector<float> A(M * K, 1.0f), B(K * N, 1.0f);
  for (const auto& [r0, c0] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {32, 1984}, {992, 1024}, {480, 640}, {992, 1984}}) {
    std::vector<float> C(static_cast<std::size_t>(M * N), 2.0f);
    for (std::int64_t i = r0; i < std::min(M, r0 + 32); ++i)
      for (std::int64_t j = c0; j < std::min(N, c0 + 32); ++j) C[static_cast<std::size_t>(i * N + j)] = 0;
    const Verification v = gemm::check(A.data(), B.data(), C.data(), M, N, K, 9);
    EXPECT_FALSE(v.ok) << "a 32x32 tile at (" << r0 << ", " << c0 << ") went unseen";
    EXPECT_NE(v.method.find("one in every 32x32 block"), std::string::npos) << v.method;
  }
}

TEST(GemmCheck, TheGatheredColumnsGiveTheSameSumsAsWalkingBsColumns) {
  // The check gathers the columns of B it needs into rows (cache-friendly, on every core); its
  // sums are the FP64 sums in k order that walking B's columns gives, to the last bit: C is set
  // to those sums plus a known FP32 rounding error, and the largest error found must be exactly it.
  const std::int64_t M = 300, N = 257, K = 131;  // 77100 entries: sampled
  const auto A = uniform_vector<float>(M * K, 7), B = uniform_vector<float>(K * N, 8);
  std::vector<float> C(static_cast<std::size_t>(M * N));
  double largest = 0;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (std::int64_t k = 0; k < K; ++k) ref += static_cast<double>(A[i * K + k]) * static_cast<double>(B[k * N + j]);
      C[static_cast<std::size_t>(i * N + j)] = static_cast<float>(ref);
      largest = std::max(largest, std::fabs(static_cast<double>(static_cast<float>(ref)) - ref));
    }
  const Verification v = gemm::check(A.data(), B.data(), C.data(), M, N, K, 3);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.checked, 2048);
  EXPECT_LE(v.max_abs_error, largest);  // only the FP32 rounding of the exact sums
  EXPECT_GT(v.max_abs_error, 0);
  // Every entry, at a size checked whole: the same to the last bit.
  const std::int64_t m = 64, n = 48, k = 40;
  std::vector<float> c(static_cast<std::size_t>(m * n));
  double most = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (std::int64_t t = 0; t < k; ++t) ref += static_cast<double>(A[i * k + t]) * static_cast<double>(B[t * n + j]);
      c[static_cast<std::size_t>(i * n + j)] = static_cast<float>(ref);
      most = std::max(most, std::fabs(static_cast<double>(static_cast<float>(ref)) - ref));
    }
  const Verification w = gemm::check(A.data(), B.data(), c.data(), m, n, k, 3);
  EXPECT_EQ(w.checked, m * n);
  EXPECT_EQ(w.max_abs_error, most);
}

// Tensor cores do not accumulate as FP32 round-to-nearest does. Fasi et al. ("Numerical behavior of
// NVIDIA tensor cores", 2021): each MMA step aligns its k-group's exact products and the FP32
// accumulator to the largest exponent among them, cuts each addend's bits below FP32's last place
// there (plus a few guard bits, 0 on V100, 3 on A100), adds the rest exactly and truncates the sum
// to FP32: errors that lean toward zero instead of cancelling. The check's 4·u·sqrt(K)·Σ|ab| must
// still pass such a GEMM, with room to spare, at the largest K any GPU GEMM runs, on the inputs the
// GPU GEMMs use (uniform in [-1, 1)), and still catch one k-group left out. The margin rests on
// those inputs having mean zero: with all-positive inputs the accumulator only grows, every cut
// leans the same way, and the error would exceed this tolerance.
namespace {

float toward_zero(double v) {
  float f = static_cast<float>(v);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}

// One MMA step: acc + Σ products, as above, with `guard` bits below FP32's last place kept.
float truncating_mma_step(float acc, const std::vector<double>& products, int guard) {
  int top = std::numeric_limits<int>::min();
  for (const double v : products)
    if (v != 0) top = std::max(top, std::ilogb(v));
  if (acc != 0) top = std::max(top, std::ilogb(acc));
  if (top == std::numeric_limits<int>::min()) return 0;
  const double quantum = std::ldexp(1.0, top - 23 - guard);  // FP32's last place at `top`, less the guard bits
  double sum = std::trunc(static_cast<double>(acc) / quantum) * quantum;
  for (const double v : products) sum += std::trunc(v / quantum) * quantum;  // exact: < 2^40 quanta
  return toward_zero(sum);
}

template <class T>
void check_truncating_tensor_core_gemm(std::int64_t K, std::int64_t group, int guard) {
  SCOPED_TRACE("K = " + std::to_string(K) + ", k-groups of " + std::to_string(group) + ", " + std::to_string(guard) +
               " guard bits, " + to_string(precision_of<T>()));
  const std::int64_t M = 16, N = 16;
  const auto A = uniform_vector<T>(M * K, 11), B = uniform_vector<T>(K * N, 12);
  std::vector<float> C(static_cast<std::size_t>(M * N)), skipped(C.size());
  double least_tolerance = std::numeric_limits<double>::infinity();
  std::vector<double> products;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float acc = 0, without_last = 0;
      double magnitude = 0;
      for (std::int64_t k0 = 0; k0 < K; k0 += group) {
        products.clear();  // products of 16-bit values: exact in FP64, as inside the MMA
        for (std::int64_t k = k0; k < std::min(K, k0 + group); ++k) {
          products.push_back(static_cast<double>(A[i * K + k]) * static_cast<double>(B[k * N + j]));
          magnitude += std::fabs(products.back());
        }
        without_last = acc;
        acc = truncating_mma_step(acc, products, guard);
      }
      least_tolerance = std::min(least_tolerance, tolerance_for(Precision::fp32, std::sqrt(K)).rel_tol * magnitude);
      C[static_cast<std::size_t>(i * N + j)] = acc;
      skipped[static_cast<std::size_t>(i * N + j)] = without_last;
    }
  const Verification v = gemm::check(A.data(), B.data(), C.data(), M, N, K, 1);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.checked, M * N);
  EXPECT_GT(v.max_abs_error, 0);  // the truncation did cut
  EXPECT_LT(v.max_abs_error, least_tolerance / 4) << "within the tolerance, but not by a wide margin";
  std::vector<float> one_wrong = C;
  one_wrong[5 * N + 9] = skipped[5 * N + 9];
  const Verification w = gemm::check(A.data(), B.data(), one_wrong.data(), M, N, K, 1);
  EXPECT_FALSE(w.ok);
  EXPECT_EQ(w.mismatches, 1);
  EXPECT_NE(w.detail.find("C[5,9]"), std::string::npos) << w.detail;
}

}  // namespace

TEST(GemmCheck, TruncatingTensorCoreAccumulationPassesAtTheLargestK) {
  std::int64_t largest = 0;
  for (const auto& v : registry())
    if (v.family == "gemm" && v.backend == Backend::cuda)
      for (const auto* sizes : {&v.sizes, &v.quick_sizes})
        for (const auto& p : *sizes) largest = std::max(largest, param(p, "K"));
#ifdef ROOFBENCH_HAVE_CUDA
  EXPECT_GE(largest, 8192);
#endif
  largest = std::max<std::int64_t>(largest, 8192);  // without CUDA, the size the GPU GEMMs reach
  for (const std::int64_t group : {4, 8, 16})
    for (const int guard : {0, 3}) {
      check_truncating_tensor_core_gemm<half_t>(largest, group, guard);
      check_truncating_tensor_core_gemm<bf16_t>(largest, group, guard);
    }
}

// ---------------------------------------------------------------- the lesson families' declarations

namespace {
const Variant& lesson(const std::string& base) {
  for (const auto& v : registry())
    if (v.backend == Backend::cpu && v.base_name() == base) return v;
  throw std::runtime_error("no CPU variant " + base);
}
}  // namespace

// sin²x + cos²x is 1 whatever x was read: the unfused form's sin and cos passes are what show
// that element i came from x[i]. A pass that read its neighbour is caught there, not in y.
TEST(SinCosCheck, SeesAnUnfusedPassThatReadTheWrongElement) {
  const std::int64_t n = 1000;
  std::vector<float> x(n), s(n), c(n), y(n, 1.0f);
  fill_uniform(x.data(), n, 11, -4.0, 4.0);
  for (std::int64_t i = 0; i < n; ++i) {
    s[i] = std::sin(x[i]);
    c[i] = std::cos(x[i]);
  }
  EXPECT_TRUE(elementwise::check_sincos(x.data(), y.data(), n, s.data(), c.data()).ok);
  s[417] = std::sin(x[418]);  // the sin pass read one element on
  const Verification bad = elementwise::check_sincos(x.data(), y.data(), n, s.data(), c.data());
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.mismatches, 1);
  EXPECT_NE(bad.detail.find("sin x[417]"), std::string::npos) << bad.detail;
  // y alone cannot see it: without NaNs in x, the fused form's check is of y being written and 1.
  EXPECT_TRUE(elementwise::check_sincos(x.data(), y.data(), n).ok);
  y[3] = std::nanf("");
  EXPECT_FALSE(elementwise::check_sincos(x.data(), y.data(), n).ok);
}

// With the NaNs prepare() plants in x, y shows where each element came from: NaN exactly where x
// is. A kernel that wrote 1s, or read its neighbour, or skipped the last part of x fails.
TEST(SinCosCheck, PlantedNansShowWhichXEachYCameFrom) {
  const std::int64_t n = 4096;
  std::vector<float> x(n);
  fill_uniform(x.data(), n, 12, -4.0, 4.0);
  elementwise::plant_sincos_nans(x.data(), n, 12);
  const auto nans = std::count_if(x.begin(), x.end(), [](float v) { return std::isnan(v); });
  EXPECT_GE(nans, 16);  // one aligned run of 16 at least
  EXPECT_EQ(nans % 16, 0);
  EXPECT_LE(nans, 5 * 16);                  // about 1 run in 256
  for (std::int64_t i = 0; i < n; i += 16)  // whole aligned runs: a vector holds NaNs only or none
    EXPECT_EQ(std::count_if(x.begin() + i, x.begin() + i + 16, [](float v) { return std::isnan(v); }) % 16, 0) << i;
  std::vector<float> small(63);
  elementwise::plant_sincos_nans(small.data(), 63, 12);  // too few to hold a run safely
  EXPECT_TRUE(std::none_of(small.begin(), small.end(), [](float v) { return std::isnan(v); }));
  auto fused = [&](std::int64_t from) {  // y[i] from x[i + from], as a kernel off by `from` would
    std::vector<float> y(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = x[std::min(n - 1, i + from)], s = std::sin(v), c = std::cos(v);
      y[i] = s * s + c * c;
    }
    return y;
  };
  EXPECT_TRUE(elementwise::check_sincos(x.data(), fused(0).data(), n).ok);
  const Verification shifted = elementwise::check_sincos(x.data(), fused(1).data(), n);
  EXPECT_FALSE(shifted.ok);
  EXPECT_EQ(shifted.mismatches, 2 * (nans / 16)) << shifted.detail;  // each run seen one element early
  const std::vector<float> ones(n, 1.0f);
  const Verification constant = elementwise::check_sincos(x.data(), ones.data(), n);
  EXPECT_FALSE(constant.ok);
  EXPECT_EQ(constant.mismatches, nans);
  EXPECT_NE(constant.detail.find("expected NaN"), std::string::npos) << constant.detail;
  // The part of y from the first NaN run on written as 1s (a kernel that skipped that part of x):
  // at the run's sizes, with a run in every 4096 elements or so, any skipped stretch holds some.
  std::vector<float> skipped = fused(0);
  const auto first_nan = std::find_if(x.begin(), x.end(), [](float v) { return std::isnan(v); }) - x.begin();
  std::fill(skipped.begin() + first_nan, skipped.end(), 1.0f);
  EXPECT_FALSE(elementwise::check_sincos(x.data(), skipped.data(), n).ok);
}

TEST(LessonDeclarations, FusionMovesFewerBytesForTheSameWork) {
  const Params n = {{"n", 1000}};
  EXPECT_DOUBLE_EQ(lesson("fusion/sincos_unfused/fp32").work.bytes(n), 44000);  // 4 passes of 8 bytes, one of 12
  EXPECT_NE(lesson("fusion/sincos_unfused/fp32").work.derivation().find(": 44·n B;"), std::string::npos)
      << lesson("fusion/sincos_unfused/fp32").work.derivation();
  EXPECT_DOUBLE_EQ(lesson("fusion/sincos_fused/fp32").work.bytes(n), 8000);
  EXPECT_DOUBLE_EQ(lesson("fusion/sincos_unfused/fp32").work.flops(n),
                   lesson("fusion/sincos_fused/fp32").work.flops(n));
  EXPECT_DOUBLE_EQ(lesson("fusion/bias_gelu_unfused/fp32").work.bytes(n), 16000 + 4096);  // t written and read back
  EXPECT_DOUBLE_EQ(lesson("fusion/bias_gelu_fused/fp32").work.bytes(n), 8000 + 4096);
  EXPECT_DOUBLE_EQ(lesson("fusion/bias_gelu_fused/fp32").work.flops(n), 10000);
}

TEST(LessonDeclarations, EachFusionPassIsPlacedAtTheStreamCeilingOfItsShape) {
  // One array in and one out: copy; two in, one out: triad; fused and unfused forms alike.
  const Params n = {{"n", 1000}};
  auto roofs = [&](const std::string& base) {
    std::vector<std::string> out;
    for (const WorkPhase& ph : lesson(base).work.phases(n)) out.push_back(ph.ceiling);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(roofs("fusion/sincos_unfused/fp32"), (V{"dram_copy", "dram_copy", "dram_copy", "dram_copy", "dram_triad"}));
  EXPECT_EQ(roofs("fusion/sincos_fused/fp32"), V{"dram_copy"});
  EXPECT_EQ(roofs("fusion/bias_gelu_unfused/fp32"), (V{"dram_copy", "dram_copy"}));
  EXPECT_EQ(roofs("fusion/bias_gelu_fused/fp32"), V{"dram_copy"});
  for (const char* form : {"fusion/sincos_unfused/fp32", "fusion/sincos_fused/fp32"})
    for (const WorkPhase& ph : lesson(form).work.phases(n)) {
      const double per_element = ph.bytes / 1000;
      EXPECT_DOUBLE_EQ(per_element, ph.ceiling == "dram_triad" ? 12 : 8) << form << " " << ph.name;
    }
}

TEST(LessonDeclarations, LowPrecisionDoublesTheIntensity) {
  const Params n = {{"n", 1000}};
  const Variant &f32 = lesson("lowprec/relu/fp32"), &f16 = lesson("lowprec/relu/fp16"),
                &b16 = lesson("lowprec/relu/bf16");
  EXPECT_DOUBLE_EQ(f32.work.flops(n) / f32.work.bytes(n), 1.0 / 8);
  EXPECT_DOUBLE_EQ(f16.work.flops(n) / f16.work.bytes(n), 1.0 / 4);
  EXPECT_DOUBLE_EQ(b16.work.flops(n) / b16.work.bytes(n), 1.0 / 4);
}

TEST(LessonDeclarations, RecomputationTradesBytesForFlops) {
  const Params n = {{"n", 1000}};
  const Variant &store = lesson("recompute/sigmoid3_store/fp32"), &again = lesson("recompute/sigmoid3_recompute/fp32");
  EXPECT_DOUBLE_EQ(store.work.bytes(n), 36000);
  EXPECT_DOUBLE_EQ(again.work.bytes(n), 20000);
  EXPECT_DOUBLE_EQ(store.work.flops(n), 18000);
  EXPECT_DOUBLE_EQ(again.work.flops(n), 27000);
}

TEST(LessonDeclarations, DivergenceVariantsDoTheSameWork) {
  const Params p = {{"n", 1000}, {"iters", 4}, {"ways", 2}};
  for (const char* v : {"divergence/uniform/fp32", "divergence/divergent/fp32", "divergence/branchless/fp32"}) {
    EXPECT_DOUBLE_EQ(lesson(v).work.flops(p), 2.0 * 1000 * 4) << v;
    EXPECT_DOUBLE_EQ(lesson(v).work.bytes(p), 8000) << v;
  }
}

// The divergence check is exact and counts every step: from any input in [-1, 1), every way's
// chain moves at every step of every registered size (CPU and GPU), so a kernel that ran one step
// fewer fails; where the host's chain would stop moving, the check refuses, even with y right.
TEST(LessonDeclarations, DivergenceChecksCountEveryStep) {
  int sizes = 0;
  for (const auto& v : registry()) {
    if (v.family != "divergence") continue;
    for (const auto* list : {&v.sizes, &v.quick_sizes, &v.test_sizes})
      for (const auto& p : *list) {
        ++sizes;
        const int iters = static_cast<int>(param(p, "iters"));
        for (int w = 0; w < param(p, "ways"); ++w)
          for (const float x : {-1.0f, -0.5f, -1e-30f, 0.0f, 0.25f, 0.9999999f}) {
            bool moved = true;
            const float y = divergence::expected(x, w, iters, &moved);
            EXPECT_TRUE(moved) << v.name(p) << " way " << w << " from " << x;
            EXPECT_NE(y, divergence::expected(x, w, iters - 1)) << v.name(p) << " way " << w << " from " << x;
          }
      }
  }
  EXPECT_GT(sizes, 3);
  // The chains stop only once x overflows (tens of millions of steps): from the largest float, the
  // second step leaves x at infinity, and the check refuses.
  const float x = std::numeric_limits<float>::max(), y = divergence::expected(x, 0, 2);
  const Verification r = divergence::check_divergence(&x, &y, 1, 2, [](std::int64_t) { return 0; });
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.checked, 1);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.detail.find("stop moving"), std::string::npos) << r.detail;
}

// The CPU divergence kernels are compiled for kCpuIters FMAs on two ways; a --size asking for other
// counts is refused with the counts it asked for and the ones it can have, before anything is allocated.
TEST(LessonDeclarations, CpuDivergenceRefusesOtherCountsNamingBoth) {
  const Variant& v = lesson("divergence/divergent/fp32");
  for (const Params& p :
       {Params{{"n", 1000}, {"iters", 8}, {"ways", 2}}, Params{{"n", 1000}, {"iters", 4}, {"ways", 32}}}) {
    try {
      v.make(p);
      ADD_FAILURE() << "iters = " << param(p, "iters") << ", ways = " << param(p, "ways") << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("iters=" + std::to_string(divergence::kCpuIters) + " FMAs on ways=2"), std::string::npos)
          << what;
      EXPECT_NE(
          what.find("not iters=" + std::to_string(param(p, "iters")) + " on ways=" + std::to_string(param(p, "ways"))),
          std::string::npos)
          << what;
    }
  }
  EXPECT_NE(v.make({{"n", 1000}, {"iters", divergence::kCpuIters}, {"ways", 2}}), nullptr);
}

TEST(LessonDeclarations, EveryComparedWithNamesARegisteredVariantOfTheSameBackend) {
  int pairs = 0;
  for (const auto& v : registry()) {
    if (v.compared_with.empty()) continue;
    ++pairs;
    bool found = false;
    for (const auto& a : registry()) found = found || (a.backend == v.backend && a.base_name() == v.compared_with);
    EXPECT_TRUE(found) << v.base_name() << " is compared with " << v.compared_with << ", which is not registered";
  }
  EXPECT_GE(pairs, 7);  // CPU: 2 fusion, 2 lowprec, 1 recompute, 2 divergence
}

// Each backend measures its vendor's copy (the C library's memcpy, cudaMemcpy device to device)
// beside its own copy ceiling, with the same declared work, as that ceiling's reference: a roof
// of its own too where it is the faster. Only the GPU's may move without a kernel, so counters
// leave it out.
TEST(CeilingDeclarations, EachBackendMeasuresItsVendorsCopyAsTheCopyCeilingsReference) {
  const Params p = {{"n", 1 << 20}};
  std::vector<Backend> backends = {Backend::cpu};
#ifdef ROOFBENCH_HAVE_CUDA
  backends.push_back(Backend::cuda);  // registered wherever the build has its CUDA backend
#endif
  for (Backend backend : backends) {
    const Variant *ours = nullptr, *vendor = nullptr;
    for (const auto& v : registry()) {
      if (v.backend != backend || !v.ceiling) continue;
      if (v.ceiling->name == "dram_copy") ours = &v;
      if (!v.ceiling->reference_for.empty()) {
        EXPECT_EQ(vendor, nullptr) << "a second vendor ceiling: " << v.base_name();
        vendor = &v;
      }
    }
    ASSERT_NE(ours, nullptr) << to_string(backend);
    ASSERT_NE(vendor, nullptr) << to_string(backend);
    EXPECT_EQ(vendor->ceiling->name, "dram_memcpy");
    EXPECT_EQ(vendor->ceiling->reference_for, "dram_copy");
    EXPECT_EQ(vendor->ceiling->kind, CeilingKind::bandwidth);
    EXPECT_EQ(vendor->ceiling->level, Level::dram);
    EXPECT_TRUE(vendor->ceiling->level_roof);
    EXPECT_DOUBLE_EQ(vendor->work.bytes(p), ours->work.bytes(p));
    EXPECT_DOUBLE_EQ(vendor->work.bytes(p), 8.0 * (1 << 20));
    EXPECT_EQ(vendor->sizes, ours->sizes);
    EXPECT_EQ(vendor->launches_kernels, backend == Backend::cpu);
  }
}

// ---------------------------------------------------------------- launch
// Dispatch is their subject, so the launch forms and the launch-rate roofs (both backends) are
// timed warm; nothing else is.
TEST(CpuLaunch, OnlyTheLaunchFormsAndTheirRoofsAreTimedWarm) {
  int warm = 0;
  for (const auto& v : registry()) {
    const bool launch_roof = v.ceiling && v.ceiling->kind == CeilingKind::launch;
    EXPECT_EQ(v.warm, v.family == "launch" || launch_roof) << v.base_name();
    warm += v.warm;
  }
  EXPECT_GE(warm, 4);  // CPU: three forms and the omp_region roof
}

// The same steps in each form; only how they are launched differs: ops regions, one, one.
TEST(CpuLaunch, EachFormDeclaresTheSameStepsAndItsOwnLaunches) {
  const Params p = {{"n", 1024}, {"ops", 1000}};
  const Variant& per_op = lesson("launch/per_op/fp32");
  const Variant& one = lesson("launch/one_region/fp32");
  const Variant& fused = lesson("launch/fused/fp32");
  EXPECT_EQ(per_op.work.launches(p), (std::map<std::string, double>{{"omp_region", 1000}}));
  EXPECT_EQ(one.work.launches(p), (std::map<std::string, double>{{"omp_region", 1}}));
  EXPECT_EQ(fused.work.launches(p), (std::map<std::string, double>{{"omp_region", 1}}));
  for (const Variant* v : {&per_op, &one, &fused}) EXPECT_DOUBLE_EQ(v->work.flops(p), 1024.0 * 1000);
  EXPECT_DOUBLE_EQ(per_op.work.bytes(p), 8.0 * 1024 * 1000);  // through L1 once per step
  EXPECT_DOUBLE_EQ(one.work.bytes(p), 8.0 * 1024 * 1000);
  EXPECT_DOUBLE_EQ(fused.work.bytes(p), 8.0 * 1024);  // once in all
  EXPECT_EQ(one.compared_with, "launch/per_op/fp32");
  EXPECT_EQ(fused.compared_with, "launch/per_op/fp32");
  EXPECT_TRUE(per_op.compared_with.empty());
  EXPECT_EQ(per_op.level, Level::l1);
}

// A chain of no step or no element, or of more steps than stay exact, is refused before anything
// is allocated (a user's --size), on the CPU and, through the same check, on the GPU.
TEST(CpuLaunch, AChainOfNoStepOrNoElementIsRefused) {
  const Variant& per_op = lesson("launch/per_op/fp32");
  for (const Params& p : {Params{{"n", 1024}, {"ops", 0}}, Params{{"n", 0}, {"ops", 10}},
                          Params{{"n", 1024}, {"ops", (1 << 20) + 1}}, Params{{"n", -1}, {"ops", 10}}}) {
    try {
      per_op.make(p);
      ADD_FAILURE() << "n = " << param(p, "n") << ", ops = " << param(p, "ops") << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("is outside [1, "), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(per_op.make({{"n", 1}, {"ops", 1 << 20}}), nullptr);
}

// The check sees one step missing or done twice: the chain's sums are exact.
TEST(CpuLaunch, TheCheckSeesAStepMissingOrDoneTwice) {
  const std::int64_t n = 1000, ops = 100;
  std::vector<float> x(n), y(n);
  launch::fill_chain_input(x.data(), n, 7);
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(x[i] * 256.0f, std::round(x[i] * 256.0f)) << i;  // multiples of 1/256
    float v = x[i];
    for (std::int64_t k = 0; k < ops; ++k) v += launch::step_constant(k);
    y[i] = v;
  }
  EXPECT_TRUE(launch::check_chain(x.data(), y.data(), n, ops).ok);
  std::vector<float> missing = y, twice = y;
  missing[500] -= launch::step_constant(37);
  twice[0] += launch::step_constant(99);
  EXPECT_FALSE(launch::check_chain(x.data(), missing.data(), n, ops).ok);
  EXPECT_FALSE(launch::check_chain(x.data(), twice.data(), n, ops).ok);
}

// The longest chain allowed (2^20 steps, sums near 2^12): every partial sum is still exact in FP32,
// and the check is exact too, so the smallest step (1/1024) missing is seen there as well; a
// relative FP32 tolerance would have let it through at that magnitude.
TEST(CpuLaunch, TheCheckSeesTheSmallestStepMissingAtTheLongestChain) {
  const std::int64_t n = 64, ops = std::int64_t{1} << 20;
  std::vector<float> x(n), y(n);
  launch::fill_chain_input(x.data(), n, 11);
  double sum = 0;
  for (std::int64_t k = 0; k < ops; ++k) sum += launch::step_constant(k);
  ASSERT_GT(sum, 2048.0);
  for (std::int64_t i = 0; i < n; ++i) {
    float v = x[i];
    for (std::int64_t k = 0; k < ops; ++k) v += launch::step_constant(k);
    ASSERT_EQ(static_cast<double>(v), static_cast<double>(x[i]) + sum) << i;  // exact, step by step
    y[i] = v;
  }
  EXPECT_TRUE(launch::check_chain(x.data(), y.data(), n, ops).ok);
  y[5] -= launch::step_constant(0);  // 1/1024
  EXPECT_FALSE(launch::check_chain(x.data(), y.data(), n, ops).ok);
}
