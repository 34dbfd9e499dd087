#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace roofbench {

namespace {
double sorted_quantile(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}
}  // namespace

double quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (q < 0.0 || q > 1.0) throw std::invalid_argument("quantile outside [0,1]");
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, q);
}

SampleStats summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample");
  std::vector<double> s = samples;
  std::sort(s.begin(), s.end());
  SampleStats r;
  r.n = static_cast<int>(s.size());
  r.min = s.front();
  r.max = s.back();
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / r.n;
  double ss = 0;
  for (double x : s) ss += (x - r.mean) * (x - r.mean);
  r.stddev = r.n > 1 ? std::sqrt(ss / (r.n - 1)) : 0.0;
  r.q1 = sorted_quantile(s, 0.25);
  r.median = sorted_quantile(s, 0.5);
  r.q3 = sorted_quantile(s, 0.75);
  return r;
}

}  // namespace roofbench
