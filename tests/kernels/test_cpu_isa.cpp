// The CPU code picked per ISA at run time, at every ISA this CPU has (the others skip, saying
// so): the packed GEMM's micro-kernels, and the SLEEF loops of the elementwise families
// (kernels/elementwise/vmath.h): each function within SLEEF's 1.0-ULP bound of an FP64
// reference, and a result independent of where a chunk starts or ends (the tail goes through the
// same vector code).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/divergence/divergence.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/vmath.h"
#include "roofbench/host_buffer.h"
#include "kernels/gemm/packed.h"

using namespace roofbench;

namespace {

bool cpu_has(const std::string& isa) {
#if defined(__x86_64__)
  if (isa == "avx512f") return __builtin_cpu_supports("avx512f");
  if (isa == "avx2+fma") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return isa == "scalar";
}

std::vector<float> uniform(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// |got − ref| in units of the float spacing at ref.
double ulps(float got, double ref) {
  const float r = static_cast<float>(ref);
  const double spacing = std::nextafter(std::fabs(r), INFINITY) - std::fabs(r);
  return std::fabs(static_cast<double>(got) - ref) / spacing;
}

// "avx2+fma" -> "avx2_fma": a test name gtest takes.
std::string isa_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

class Vmath : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!cpu_has(GetParam())) GTEST_SKIP() << "this CPU has no " << GetParam();
    ops_ = vmath::ops_for(GetParam());
    if (!ops_) GTEST_SKIP() << "this build has no " << GetParam() << " loops (not x86-64)";
    ASSERT_EQ(std::string(ops_->isa), GetParam());
  }
  const vmath::Ops* ops_ = nullptr;
};

const std::vector<std::size_t> kSizes = {1, 7, 16, 17, 1000, 4099};

TEST_P(Vmath, SinAndCosAreWithinOneUlp) {
  for (std::size_t n : kSizes) {
    const auto x = uniform(n, -50, 50, 1);
    std::vector<float> s(n), c(n);
    ops_->sin(x.data(), s.data(), static_cast<std::int64_t>(n));
    ops_->cos(x.data(), c.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) {
      // SLEEF's u10 bound is 1.0 ULP of the exact value; the FP64 reference itself is 0.5 ULP
      // away from the float nearest it at most.
      EXPECT_LE(ulps(s[i], std::sin(static_cast<double>(x[i]))), 1.5) << "sin(" << x[i] << "), n " << n;
      EXPECT_LE(ulps(c[i], std::cos(static_cast<double>(x[i]))), 1.5) << "cos(" << x[i] << "), n " << n;
    }
  }
}

TEST_P(Vmath, EachLoopMeetsItsFamilysCheck) {
  for (std::size_t n : kSizes) {
    const auto x = uniform(n, -4, 4, 2), g = uniform(n, -1, 1, 3), b = uniform(n, -1, 1, 4);
    const auto ni = static_cast<std::int64_t>(n);
    std::vector<float> y(n), a1(n), a2(n), gx(n);
    ops_->sin2_plus_cos2(x.data(), y.data(), ni);
    EXPECT_TRUE(elementwise::check_sincos(x.data(), y.data(), ni).ok) << n;
    // The family's check reads its bias with a period of one row: give it a row.
    std::vector<float> xr(elementwise::kBiasLength), br = uniform(elementwise::kBiasLength, -1, 1, 5),
        yr(elementwise::kBiasLength);
    const std::size_t m = std::min<std::size_t>(n, elementwise::kBiasLength);
    std::memcpy(xr.data(), x.data(), m * sizeof(float));
    ops_->bias_gelu(xr.data(), br.data(), yr.data(), static_cast<std::int64_t>(m));
    EXPECT_TRUE(elementwise::check_bias_gelu(xr.data(), br.data(), yr.data(), static_cast<std::int64_t>(m)).ok)
        << n;
    ops_->sigmoid3(x.data(), a1.data(), a2.data(), y.data(), ni);
    ops_->sigmoid3_backward(x.data(), g.data(), gx.data(), ni);
    EXPECT_TRUE(elementwise::check_sigmoid3(x.data(), g.data(), y.data(), gx.data(), ni).ok) << n;
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_LE(ulps(a1[i], elementwise::sigmoid(x[i])), 4.0) << i;  // exp 1 ULP, then 1 + e and 1 / …
      std::vector<float> t(1, x[i] + b[i]), gl(1);
      ops_->gelu(t.data(), gl.data(), 1);
      EXPECT_NEAR(gl[0], elementwise::gelu(t[0]), 8 * 1.2e-7 * (std::fabs(elementwise::gelu(t[0])) + std::fabs(t[0])));
    }
  }
}

TEST_P(Vmath, AResultDoesNotDependOnWhereAChunkEnds) {
  const std::size_t n = 1000;
  const auto x = uniform(n, -4, 4, 6);
  std::vector<float> whole(n), pieces(n);
  ops_->sin2_plus_cos2(x.data(), whole.data(), static_cast<std::int64_t>(n));
  std::size_t at = 0;
  for (std::size_t len : {5u, 13u, 16u, 1u, 33u}) {  // then the rest
    ops_->sin2_plus_cos2(x.data() + at, pieces.data() + at, static_cast<std::int64_t>(len));
    at += len;
  }
  ops_->sin2_plus_cos2(x.data() + at, pieces.data() + at, static_cast<std::int64_t>(n - at));
  EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), n * sizeof(float)), 0);
}

// The streaming loops (vmath::Stores::streaming) write bit for bit what the cached ones write, at
// every size (tails included), on aligned outputs (streamed) and unaligned ones (they fall back).
TEST_P(Vmath, StreamingStoresWriteWhatCachedStoresWrite) {
  const vmath::Ops* st = vmath::ops_for(GetParam(), vmath::Stores::streaming);
  ASSERT_NE(st, nullptr);
  EXPECT_STREQ(st->isa, ops_->isa);
  EXPECT_STREQ(st->stores, GetParam() == "scalar" ? "cached" : "streaming");
  for (std::size_t n : kSizes) {
    for (std::size_t skew : {0u, 1u}) {  // output pointers a whole vector apart, or one float off
      const auto x = uniform(n, -4, 4, 7), g = uniform(n, -1, 1, 8), b = uniform(n, -1, 1, 9);
      const auto ni = static_cast<std::int64_t>(n);
      // One output of each loop at a time, each into a page-aligned buffer at `skew` floats.
      auto both = [&](auto&& call) {
        std::vector<std::vector<float>> out(2);
        for (int k = 0; k < 2; ++k) {
          HostBuffer<float> buf(n + 64 + skew);
          float* y = buf.data() + skew;
          std::fill(y, y + n, -1.0f);
          call(k ? *st : *ops_, y);
          out[k].assign(y, y + n);
        }
        return out[0] == out[1];
      };
      const char* at = skew ? "unaligned" : "aligned";
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.sin(x.data(), y, ni); })) << "sin " << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.cos(x.data(), y, ni); })) << "cos " << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.sin2_plus_cos2(x.data(), y, ni); })) << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.bias_gelu(x.data(), b.data(), y, ni); })) << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.gelu(x.data(), y, ni); })) << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.square(x.data(), y, ni); })) << "square " << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.add(x.data(), b.data(), y, ni); })) << "add " << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.exp(x.data(), y, ni); })) << "exp " << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.tanh(x.data(), y, ni); })) << "tanh " << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) { o.sigmoid3_backward(x.data(), g.data(), y, ni); }))
          << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) {
        o.sigmoid3_backward_stored(g.data(), x.data(), b.data(), g.data(), y, ni);
      })) << n << at;
      EXPECT_TRUE(both([&](const vmath::Ops& o, float* y) {
        std::vector<float> a1(n), a2(n);
        o.sigmoid3(x.data(), a1.data(), a2.data(), y, ni);
      })) << "sigmoid3 " << n << at;
    }
  }
}

// The stored-activation backward pass gives what the recomputing one gives from the same x.
TEST_P(Vmath, TheStoredBackwardPassMatchesTheRecomputingOne) {
  const std::size_t n = 1000;
  const auto x = uniform(n, -4, 4, 10), g = uniform(n, -1, 1, 11);
  const auto ni = static_cast<std::int64_t>(n);
  std::vector<float> a1(n), a2(n), y(n), stored(n), recomputed(n);
  ops_->sigmoid3(x.data(), a1.data(), a2.data(), y.data(), ni);
  ops_->sigmoid3_backward_stored(g.data(), a1.data(), a2.data(), y.data(), stored.data(), ni);
  ops_->sigmoid3_backward(x.data(), g.data(), recomputed.data(), ni);
  EXPECT_EQ(stored, recomputed);
}

INSTANTIATE_TEST_SUITE_P(Isa, Vmath, ::testing::Values("avx512f", "avx2+fma", "scalar"),
                         isa_test_name);

// The packed GEMM's micro-kernels, each ISA the CPU has, at shapes that cross every block edge:
// tiles that overhang C, K deeper than one KC slab (C accumulates), M taller than one MC block
// and N wider than one NC panel.
class PackedGemmIsa : public Vmath {};

TEST_P(PackedGemmIsa, MatchesAnFp64GemmAcrossEveryBlockEdge) {
  struct MNK {
    std::int64_t m, n, k;
  };
  for (const MNK s : {MNK{1, 1, 1}, MNK{13, 37, 5}, MNK{100, 70, 600}, MNK{1100, 40, 30}, MNK{13, 4200, 7}}) {
    const auto a = uniform(static_cast<std::size_t>(s.m * s.k), -1, 1, 7);
    const auto b = uniform(static_cast<std::size_t>(s.k * s.n), -1, 1, 8);
    std::vector<float> c(static_cast<std::size_t>(s.m * s.n), std::nanf(""));
    gemm::packed_gemm(a.data(), b.data(), c.data(), s.m, s.n, s.k, GetParam());
    int bad = 0;
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double ref = 0, mag = 0;
        for (std::int64_t k = 0; k < s.k; ++k) {
          ref += static_cast<double>(a[i * s.k + k]) * b[k * s.n + j];
          mag += std::fabs(static_cast<double>(a[i * s.k + k]) * b[k * s.n + j]);
        }
        const float got = c[i * s.n + j];
        // FP32 accumulation over K terms: K·eps of the sum of magnitudes, bounds any order.
        if (!(std::fabs(got - ref) <= (s.k + 1) * 1.2e-7 * mag) && bad++ < 5)
          ADD_FAILURE() << s.m << "x" << s.n << "x" << s.k << " C[" << i << "][" << j << "] = " << got << ", FP64 "
                        << ref;
      }
    EXPECT_EQ(bad, 0) << s.m << "x" << s.n << "x" << s.k;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, PackedGemmIsa, ::testing::Values("avx512f", "avx2+fma", "scalar"),
                         isa_test_name);

TEST(Vmath, TheLoopsOfThisCpuAreItsWidestIsa) {
  const std::string isa = vmath::ops().isa;
  EXPECT_TRUE(cpu_has(isa)) << isa;
  if (cpu_has("avx512f")) EXPECT_EQ(isa, "avx512f");
}

// The CPU divergence loop on each path this CPU has (the FMA instruction's, libm's), branchy and
// branchless, on random keys: every element exactly the host's FMAs of its way, across the
// threads' shares (an odd size, so the shares are uneven).
TEST(DivergenceLoop, EachPathIsExactlyTheHostsFmas) {
  const std::int64_t n = 100003;
  HostBuffer<float> x(n), y(n);
  HostBuffer<std::uint8_t> key(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    x.data()[i] = value(rng);
    key.data()[i] = static_cast<std::uint8_t>(rng() & 1);
  }
  std::vector<divergence::CpuFmaPath> paths = {divergence::CpuFmaPath::libm};
  if (divergence::cpu_has_fma_instruction()) paths.push_back(divergence::CpuFmaPath::instruction);
  for (const auto path : paths) {
    for (const bool branchless : {false, true}) {
      SCOPED_TRACE(::testing::Message() << (path == divergence::CpuFmaPath::libm ? "libm" : "instruction")
                                        << (branchless ? ", branchless" : ", branchy"));
      for (std::int64_t i = 0; i < n; ++i) y.data()[i] = std::nanf("");
      divergence::cpu_divergence_loop(path, branchless, x.data(), key.data(), y.data(), n);
      const Verification v = divergence::check_divergence(x.data(), y.data(), n, divergence::kCpuIters,
                                                          [&](std::int64_t i) { return int{key.data()[i]}; });
      EXPECT_TRUE(v.ok) << v.detail;
      EXPECT_EQ(v.checked, n);
    }
  }
  if (!divergence::cpu_has_fma_instruction()) {
    EXPECT_THROW(divergence::cpu_divergence_loop(divergence::CpuFmaPath::instruction, false, x.data(), key.data(),
                                                 y.data(), n),
                 InputError);
  }
}

}  // namespace
