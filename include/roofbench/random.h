#pragma once
// Deterministic inputs: a seed always gives the same values on every machine and thread count.
#include <cstdint>
#include <vector>

#include "roofbench/parallel.h"
#include "roofbench/splitmix.h"

namespace roofbench {

// Uniform in [lo, hi), element i depends only on (seed, i) so parallel fills agree with serial.
template <class T>
void fill_uniform(T* data, std::int64_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t s = seed * 0x100000001B3ull + static_cast<std::uint64_t>(i);
    const double u = static_cast<double>(splitmix64(s) >> 11) * 0x1.0p-53;
    data[i] = static_cast<T>(lo + (hi - lo) * u);
  }
}

template <class T>
std::vector<T> uniform_vector(std::int64_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<T> v(static_cast<std::size_t>(n));
  fill_uniform(v.data(), n, seed, lo, hi);
  return v;
}

}  // namespace roofbench
