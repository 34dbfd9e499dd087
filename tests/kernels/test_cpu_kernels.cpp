// Every CPU variant in the registry, at its test sizes (small, non-square, not multiples of any
// tile), against its reference. The list comes from the registry, so a new variant is tested
// without touching this file.
#include <gtest/gtest.h>

#include <algorithm>

#include <cctype>
#include <set>

#include "bench/harness.h"
#include "bench/half.h"
#include "kernels/gemm/reference.h"
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

TEST_P(CpuVariant, DeclaresPositiveWorkAtEverySize) {
  const Variant& v = *GetParam();
  for (const auto* sizes : {&v.sizes, &v.quick_sizes, &v.test_sizes})
    for (const auto& p : *sizes) {
      EXPECT_GT(v.bytes(p), 0) << v.name(p);
      EXPECT_GE(v.flops(p), 0) << v.name(p);
    }
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuVariant, ::testing::ValuesIn(cpu_variants()), roofbench::testing::VariantName());

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
  EXPECT_DOUBLE_EQ(gemm::flops(p), 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(gemm::bytes(p, 4), 4.0 * (64 * 16 + 16 * 32 + 64 * 32));
  // 16-bit inputs, FP32 output.
  EXPECT_DOUBLE_EQ(gemm::bytes(p, 2), 2.0 * (64 * 16 + 16 * 32) + 4.0 * 64 * 32);
}

TEST(GemmWork, SixteenBitVariantsDeclareTheirBytesAndTheirMath) {
  const Params p = {{"M", 8}, {"N", 8}, {"K", 8}};
  const Variant simt = gemm::variant_for(Precision::bf16, Backend::cuda, "simt");
  EXPECT_EQ(simt.math, Precision::fp32);  // widened to FP32 on the CUDA cores: the FP32 roof
  EXPECT_DOUBLE_EQ(simt.bytes(p), 2.0 * 128 + 4.0 * 64);
  const Variant tensor = gemm::variant_for(Precision::fp16, Backend::cuda, "tensor");
  EXPECT_FALSE(tensor.math);  // the tensor rate is the input type's
  EXPECT_EQ(tensor.precision, Precision::fp16);
  EXPECT_FALSE(gemm::variant_for(Precision::fp32, Backend::cpu, "simd").math);
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
