#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "roofbench/splitmix.h"

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

double noise_floor_rel_iqr(std::vector<double> v) {
  const double n = static_cast<double>(v.size());
  if (v.size() < 8) return 0;
  std::sort(v.begin(), v.end());
  const double half = 1.96 * std::sqrt(n * 0.25 * 0.75);  // the binomial sd of a quartile's rank
  const auto q1_hi = static_cast<std::ptrdiff_t>(std::ceil(0.25 * n + half));
  const auto q3_lo = static_cast<std::ptrdiff_t>(std::floor(0.75 * n - half));
  if (q3_lo <= q1_hi || q1_hi < 0 || q3_lo >= static_cast<std::ptrdiff_t>(v.size())) return 0;
  const double median = quantile(v, 0.5);
  if (median <= 0) return 0;
  return (v[static_cast<std::size_t>(q3_lo)] - v[static_cast<std::size_t>(q1_hi)]) / median;
}

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

namespace roofbench {

namespace {

// Upper tail P(U >= k) of U for sizes (m, n) without ties. The number of arrangements with
// U = u is the coefficient of q^u in the Gaussian binomial [m+n choose m]_q =
// prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built here as a polynomial of degree m*n.
double exact_u_sf(double k, int m, int n) {
  if (m > n) std::swap(m, n);
  const int deg = m * n;
  std::vector<long double> c(static_cast<std::size_t>(deg) + 1, 0.0L);
  c[0] = 1.0L;
  for (int i = 1; i <= m; ++i) {
    for (int d = i; d <= deg; ++d) c[d] += c[d - i];                   // / (1 - q^i)
    for (int d = deg; d >= n + i; --d) c[d] -= c[d - (n + i)];         // * (1 - q^(n+i))
  }
  long double total = 0, tail = 0;
  for (int u = 0; u <= deg; ++u) {
    total += c[u];
    if (u >= k) tail += c[u];
  }
  return static_cast<double>(tail / total);
}

double normal_sf(double z) {
  return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), z));
}

double median_of(std::vector<double>& v) {
  const std::size_t n = v.size();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  const double hi = *mid;
  const double lo = *std::max_element(v.begin(), mid);
  return 0.5 * (lo + hi);
}

}  // namespace

MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("Mann-Whitney test of an empty sample");
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  // Midranks of the pooled sample.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n);
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && pooled[j + 1].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i + 1);
    const double midrank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k)
      if (pooled[k].second == 0) rank_sum_a += midrank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j + 1;
  }
  MannWhitney r;
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  r.u = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double u_big = std::max(r.u, dn1 * dn2 - r.u);
  if (std::min(n1, n2) <= 8 && !ties) {
    r.exact = true;
    r.p = std::min(1.0, 2.0 * exact_u_sf(u_big, static_cast<int>(n1), static_cast<int>(n2)));
    return r;
  }
  const double mu = dn1 * dn2 / 2;
  const double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (var <= 0) {  // every value equal
    r.p = 1;
    return r;
  }
  const double z = (u_big - mu - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, 2.0 * normal_sf(z));
  return r;
}

double min_two_sided_p(int n, int m) {
  if (n <= 0 || m <= 0) return 1.0;
  // C(n+m, n) as a product, stopping once it is large enough not to matter.
  double c = 1;
  const int k = std::min(n, m);
  for (int i = 1; i <= k && c < 1e18; ++i) c = c * (n + m - k + i) / i;
  return std::min(1.0, 2.0 / c);
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t l, std::size_t r) { return p[l] < p[r]; });
  std::vector<double> q(m, 1.0);
  double running = 1.0;
  for (std::size_t k = m; k-- > 0;) {
    const std::size_t i = order[k];
    running = std::min(running, p[i] * static_cast<double>(m) / static_cast<double>(k + 1));
    q[i] = std::min(1.0, running);
  }
  return q;
}

Interval bootstrap_median_ratio(const std::vector<double>& base, const std::vector<double>& fresh, double confidence,
                                int resamples, std::uint64_t seed) {
  if (base.empty() || fresh.empty()) throw std::invalid_argument("bootstrap of an empty sample");
  if (!(confidence > 0 && confidence < 1) || resamples < 10) throw std::invalid_argument("bad bootstrap settings");
  std::uint64_t state = seed;
  auto resampled_median = [&state](const std::vector<double>& v, std::vector<double>& scratch) {
    scratch.resize(v.size());
    for (auto& x : scratch) x = v[splitmix64(state) % v.size()];
    return median_of(scratch);
  };
  std::vector<double> ratios(static_cast<std::size_t>(resamples)), sa, sb;
  for (auto& r : ratios) {
    const double mb = resampled_median(base, sa);
    r = resampled_median(fresh, sb) / mb;
  }
  const double tail = (1 - confidence) / 2;
  return {quantile(ratios, tail), quantile(ratios, 1 - tail)};
}

double student_t_sf(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("t distribution needs df > 0");
  return boost::math::cdf(boost::math::complement(boost::math::students_t_distribution<double>(df), t));
}

double student_t_quantile(double upper_tail, double df) {
  if (!(upper_tail > 0 && upper_tail < 1)) throw std::invalid_argument("t quantile needs a tail in (0, 1)");
  if (!(df > 0)) throw std::invalid_argument("t distribution needs df > 0");
  return boost::math::quantile(boost::math::complement(boost::math::students_t_distribution<double>(df), upper_tail));
}

PairedT paired_t(const std::vector<double>& d, double confidence) {
  if (d.empty()) throw std::invalid_argument("paired t of no differences");
  PairedT r;
  r.n = static_cast<int>(d.size());
  for (double x : d) r.mean += x;
  r.mean /= r.n;
  r.mean_ci = {r.mean, r.mean};
  if (r.n < 2) return r;
  double ss = 0;
  for (double x : d) ss += (x - r.mean) * (x - r.mean);
  r.sd = std::sqrt(ss / (r.n - 1));
  const double se = r.sd / std::sqrt(static_cast<double>(r.n));
  const double df = r.n - 1;
  const double half = student_t_quantile((1 - confidence) / 2, df) * se;
  r.mean_ci = {r.mean - half, r.mean + half};
  if (se == 0)
    r.p = r.mean == 0 ? 1.0 : 0.0;
  else
    r.p = std::min(1.0, 2 * student_t_sf(std::fabs(r.mean) / se, df));
  return r;
}

}  // namespace roofbench
