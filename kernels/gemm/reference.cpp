#include "kernels/gemm/reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "roofbench/half.h"
#include "roofbench/random.h"
#include "roofbench/verify.h"

namespace roofbench::gemm {

Work work(Precision input) {
  const Count M = Count::param("M"), N = Count::param("N"), K = Count::param("K");
  return Work()
      .read("A", M * K, input)
      .read("B", K * N, input)
      .write("C", M * N, Precision::fp32)
      .flops(2 * M * N * K, "a multiply and an add per term of C = A·B");
}

Sample sample_entries(std::int64_t M, std::int64_t N, std::uint64_t seed) {
  Sample out;
  if (M * N <= kFullCheck) {
    out.entries.resize(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M * N; ++i) out.entries[static_cast<std::size_t>(i)] = i;
    return out;
  }
  out.block = 32;
  auto blocks = [&](std::int64_t b) { return ((M + b - 1) / b) * ((N + b - 1) / b); };
  while (blocks(out.block) > kFullCheck) out.block *= 2;
  std::uint64_t s = seed ^ 0xC0FFEEull;
  auto below = [&s](std::int64_t n) {
    return static_cast<std::int64_t>(splitmix64(s) % static_cast<std::uint64_t>(n));
  };
  out.entries = {0, N - 1, (M - 1) * N, M * N - 1};
  for (std::int64_t c0 = 0; c0 < N; c0 += out.block) {
    const std::int64_t col = c0 + below(std::min(out.block, N - c0));  // one column per block column
    for (std::int64_t r0 = 0; r0 < M; r0 += out.block)
      out.entries.push_back((r0 + below(std::min(out.block, M - r0))) * N + col);
  }
  while (static_cast<std::int64_t>(out.entries.size()) < kLeastSampled) out.entries.push_back(below(M * N));
  return out;
}

template <class T>
Verification check(const T* A, const T* B, const float* C, std::int64_t M, std::int64_t N, std::int64_t K,
                   std::uint64_t seed) {
  const Sample sample = sample_entries(M, N, seed);
  const std::vector<std::int64_t>& idx = sample.entries;
  const bool full = sample.block == 0;
  // The columns of B the checked entries need, gathered once into contiguous rows: each dot
  // product then walks two rows, instead of B's column with a stride of N (a cache miss per term,
  // minutes at 8192 on one core). Every input type converts to float exactly.
  std::vector<std::int64_t> cols;
  for (std::int64_t e : idx) cols.push_back(e % N);
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  const auto ncols = static_cast<std::int64_t>(cols.size());
  std::vector<float> bt(static_cast<std::size_t>(ncols * K));
  constexpr std::int64_t kRows = 64;  // rows of B per task: each row of bt is written 256 bytes at a time
#pragma omp parallel for schedule(static)
  for (std::int64_t k0 = 0; k0 < K; k0 += kRows)
    for (std::int64_t c = 0; c < ncols; ++c)
      for (std::int64_t k = k0; k < std::min(K, k0 + kRows); ++k)
        bt[static_cast<std::size_t>(c * K + k)] = static_cast<float>(B[k * N + cols[static_cast<std::size_t>(c)]]);

  return check_all(
      tolerance_for(Precision::fp32, std::sqrt(static_cast<double>(K))),
      full ? "every entry vs FP64 reference"
           : fmt::format("{} sampled entries (one in every {}x{} block of C) vs FP64 reference", idx.size(),
                         sample.block, sample.block),
      static_cast<std::int64_t>(idx.size()),
      [&](Checker& chk, std::int64_t s) {
        const std::int64_t e = idx[static_cast<std::size_t>(s)], i = e / N, j = e % N;
        const std::int64_t c = std::lower_bound(cols.begin(), cols.end(), j) - cols.begin();
        const T* a = A + i * K;
        const float* b = bt.data() + c * K;
        // In k order, in FP64, as the exact products of the stored inputs.
        double ref = 0, mag = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          const double t = static_cast<double>(a[k]) * static_cast<double>(b[k]);
          ref += t;
          mag += std::fabs(t);
        }
        chk.check(static_cast<double>(C[e]), ref, mag, [i, j] { return fmt::format("C[{},{}]", i, j); });
      },
      // About 4 million terms per task (at most the default 16,384 entries): at 8192, 512 entries, 128
      // tasks for 65,540 of them.
      std::clamp<std::int64_t>((std::int64_t{1} << 22) / std::max<std::int64_t>(1, K), 16, 1 << 14));
}

template Verification check<float>(const float*, const float*, const float*, std::int64_t, std::int64_t, std::int64_t,
                                   std::uint64_t);
template Verification check<half_t>(const half_t*, const half_t*, const float*, std::int64_t, std::int64_t,
                                    std::int64_t, std::uint64_t);
template Verification check<bf16_t>(const bf16_t*, const bf16_t*, const float*, std::int64_t, std::int64_t,
                                    std::int64_t, std::uint64_t);

std::vector<Params> test_shapes() {
  return {{{"M", 64}, {"N", 64}, {"K", 64}},
          {{"M", 67}, {"N", 45}, {"K", 33}},
          {{"M", 1}, {"N", 129}, {"K", 7}},
          {{"M", 300}, {"N", 257}, {"K", 131}}};
}

Variant variant_for(Precision precision, Backend backend, Unit unit) {
  Variant v;
  v.family = "gemm";
  v.reference = "an FP64 GEMM of the same inputs (every entry at small sizes; at large, one in every 32x32 block)";
  v.precision = precision;
  v.backend = backend;
  v.unit = unit;
  if (precision != Precision::fp32 && unit != Unit::tensor) v.math = Precision::fp32;
  v.work = work(precision);
  v.test_sizes = test_shapes();
  return v;
}

}  // namespace roofbench::gemm
