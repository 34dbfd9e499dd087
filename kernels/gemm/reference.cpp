#include "kernels/gemm/reference.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "bench/half.h"
#include "bench/random.h"
#include "bench/verify.h"

namespace roofbench::gemm {

double flops(const Params& p) {
  return 2.0 * static_cast<double>(param(p, "M")) * static_cast<double>(param(p, "N")) *
         static_cast<double>(param(p, "K"));
}

double bytes(const Params& p, double in_bytes) {
  const double M = static_cast<double>(param(p, "M")), N = static_cast<double>(param(p, "N")),
               K = static_cast<double>(param(p, "K"));
  return in_bytes * (M * K + K * N) + 4.0 * M * N;
}

template <class T>
Verification check(const T* A, const T* B, const float* C, std::int64_t M, std::int64_t N, std::int64_t K,
                   std::uint64_t seed) {
  const bool full = M * N <= 65536;
  std::vector<std::int64_t> idx;
  if (full) {
    idx.resize(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M * N; ++i) idx[static_cast<std::size_t>(i)] = i;
  } else {
    idx = {0, N - 1, (M - 1) * N, M * N - 1};
    std::uint64_t s = seed ^ 0xC0FFEEull;
    while (idx.size() < 2048)
      idx.push_back(static_cast<std::int64_t>(splitmix64(s) % static_cast<std::uint64_t>(M * N)));
  }
  Checker chk(tolerance_for(Precision::fp32, std::sqrt(static_cast<double>(K))),
              full ? "every entry vs FP64 reference" : "2048 sampled entries vs FP64 reference");
  for (std::int64_t e : idx) {
    const std::int64_t i = e / N, j = e % N;
    double ref = 0, mag = 0;
    for (std::int64_t k = 0; k < K; ++k) {
      const double t = static_cast<double>(A[i * K + k]) * static_cast<double>(B[k * N + j]);
      ref += t;
      mag += std::fabs(t);
    }
    chk.check(static_cast<double>(C[e]), ref, mag, [i, j] { return fmt::format("C[{},{}]", i, j); });
  }
  return chk.finish();
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

Variant variant_for(Precision precision, Backend backend, const std::string& unit) {
  Variant v;
  v.family = "gemm";
  v.precision = precision;
  v.backend = backend;
  v.unit = unit;
  if (precision != Precision::fp32 && unit != "tensor") v.math = Precision::fp32;
  v.flops = flops;
  const double in_bytes = bytes_of(precision);
  v.bytes = [in_bytes](const Params& p) { return bytes(p, in_bytes); };
  v.work = kWork;
  v.test_sizes = test_shapes();
  return v;
}

}  // namespace roofbench::gemm
