#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
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
  // The pooled sample in order: both sorted (compare hands them sorted: checked in O(n)), merged.
  std::vector<double> sa = a, sb = b;
  if (!std::is_sorted(sa.begin(), sa.end())) std::sort(sa.begin(), sa.end());
  if (!std::is_sorted(sb.begin(), sb.end())) std::sort(sb.begin(), sb.end());
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n);
  for (std::size_t i = 0, j = 0; i < n1 || j < n2;)
    if (j == n2 || (i < n1 && sa[i] <= sb[j]))
      pooled.push_back({sa[i++], 0});
    else
      pooled.push_back({sb[j++], 1});
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

namespace {
// A uniform in (0, 1), never 0 or 1.
double uniform01(std::uint64_t& state) {
  return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53;
}

// A standard normal (Box-Muller, one of the pair).
double standard_normal(std::uint64_t& state) {
  const double u = uniform01(state), v = uniform01(state);  // in this order, whatever the compiler
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

// Gamma(a, 1) by Marsaglia and Tsang (2000); for a < 1 through Gamma(a + 1) · U^(1/a).
double gamma_variate(double a, std::uint64_t& state) {
  if (a < 1) return gamma_variate(a + 1, state) * std::pow(uniform01(state), 1 / a);
  const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    const double x = standard_normal(state), t = 1 + c * x;
    if (t <= 0) continue;
    const double v = t * t * t, u = uniform01(state);
    if (u < 1 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
  }
}

double beta_variate(double a, double b, std::uint64_t& state) {
  const double x = gamma_variate(a, state);
  return x / (x + gamma_variate(b, state));
}
}  // namespace

double resampled_median(const std::vector<double>& sorted, std::uint64_t& state) {
  if (sorted.empty()) throw std::invalid_argument("the median of a resample of nothing");
  // A resample draws n indices floor(n·U_j) from n uniforms; the sorted resample is therefore
  // sorted[floor(n·U_(j))], by the uniforms' order statistics. U_(k) ~ Beta(k, n − k + 1), and
  // given U_(k) = u, U_(k+1) is the least of the other n − k, uniform on (u, 1).
  const std::size_t n = sorted.size();
  const double dn = static_cast<double>(n);
  const auto at = [&](double u) { return sorted[std::min(n - 1, static_cast<std::size_t>(u * dn))]; };
  const std::size_t k = n / 2 + (n % 2);  // the lower middle, 1-based
  const double u = n == 1 ? uniform01(state) : beta_variate(static_cast<double>(k), dn - static_cast<double>(k) + 1, state);
  if (n % 2 == 1) return at(u);
  const double next = u + (1 - u) * (1 - std::pow(uniform01(state), 1 / (dn - static_cast<double>(k))));
  return 0.5 * (at(u) + at(next));
}

Interval bootstrap_median_ratio(const std::vector<double>& base, const std::vector<double>& fresh, double confidence,
                                int resamples, std::uint64_t seed) {
  if (base.empty() || fresh.empty()) throw std::invalid_argument("bootstrap of an empty sample");
  if (!(confidence > 0 && confidence < 1) || resamples < 10) throw std::invalid_argument("bad bootstrap settings");
  std::uint64_t state = seed;
  std::vector<double> a = base, b = fresh;  // sorted already, in compare: checked in O(n)
  if (!std::is_sorted(a.begin(), a.end())) std::sort(a.begin(), a.end());
  if (!std::is_sorted(b.begin(), b.end())) std::sort(b.begin(), b.end());
  std::vector<double> ratios(static_cast<std::size_t>(resamples));
  for (auto& r : ratios) {
    const double mb = resampled_median(a, state);
    r = resampled_median(b, state) / mb;
  }
  const double tail = (1 - confidence) / 2;
  std::sort(ratios.begin(), ratios.end());
  return {sorted_quantile(ratios, tail), sorted_quantile(ratios, 1 - tail)};
}

namespace {
// The split of x[0..n) with the largest energy statistic: (its Q, its index); index −1 when no
// split leaves min_size values a side. O(n²) through running sums of |x_i − x_j|.
// `within_left` and `within_right` are scratch, reused across calls.
std::pair<double, int> best_split(const std::vector<double>& x, int min_size, std::vector<double>& within_left,
                                  std::vector<double>& within_right) {
  const int n = static_cast<int>(x.size());
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  if (n < 2 * min_size) return {kNone, -1};
  // within_left[t]: Σ over pairs i < j < t; within_right[t]: Σ over pairs t <= i < j; all pairs: total.
  within_left.assign(static_cast<std::size_t>(n) + 1, 0);
  within_right.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int t = 1; t <= n; ++t) {
    double add = 0;
    for (int i = 0; i < t - 1; ++i) add += std::fabs(x[static_cast<std::size_t>(i)] - x[static_cast<std::size_t>(t - 1)]);
    within_left[static_cast<std::size_t>(t)] = within_left[static_cast<std::size_t>(t - 1)] + add;
  }
  for (int t = n - 1; t >= 0; --t) {
    double add = 0;
    for (int j = t + 1; j < n; ++j) add += std::fabs(x[static_cast<std::size_t>(j)] - x[static_cast<std::size_t>(t)]);
    within_right[static_cast<std::size_t>(t)] = within_right[static_cast<std::size_t>(t + 1)] + add;
  }
  const double total = within_left[static_cast<std::size_t>(n)];
  std::pair<double, int> best{kNone, -1};
  for (int t = min_size; t <= n - min_size; ++t) {
    const double m = t, k = n - t;
    const double left = within_left[static_cast<std::size_t>(t)], right = within_right[static_cast<std::size_t>(t)];
    const double cross = total - left - right;
    const double q = m * k / (m + k) * (2 * cross / (m * k) - 2 * left / (m * (m - 1)) - 2 * right / (k * (k - 1)));
    if (q > best.first) best = {q, t};
  }
  return best;
}

double median_copy(std::vector<double> v) {
  return median_of(v);
}
}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& series, double alpha, int permutations, int min_size,
                                       std::uint64_t seed) {
  if (min_size < 2) throw std::invalid_argument("change points need at least 2 values a side");
  if (permutations < 1) throw std::invalid_argument("change points need at least one permutation");
  std::vector<ChangePoint> found;
  std::uint64_t state = seed;
  std::vector<double> left, right;  // best_split's scratch
  // Segments still to search, as [begin, end) of the series.
  std::vector<std::pair<int, int>> todo = {{0, static_cast<int>(series.size())}};
  while (!todo.empty()) {
    const auto [begin, end] = todo.back();
    todo.pop_back();
    std::vector<double> x(series.begin() + begin, series.begin() + end);
    const auto [q, at] = best_split(x, min_size, left, right);
    if (at < 0) continue;
    int reached = 0;
    std::vector<double> shuffled = x;
    for (int r = 0; r < permutations; ++r) {
      for (std::size_t i = shuffled.size() - 1; i > 0; --i)  // Fisher-Yates
        std::swap(shuffled[i], shuffled[splitmix64(state) % (i + 1)]);
      reached += best_split(shuffled, min_size, left, right).first >= q * (1 - 1e-12);
    }
    const double p = (1.0 + reached) / (1.0 + permutations);
    if (!(p < alpha)) continue;
    found.push_back({begin + at, p, median_copy({x.begin(), x.begin() + at}), median_copy({x.begin() + at, x.end()})});
    todo.push_back({begin, begin + at});
    todo.push_back({begin + at, end});
  }
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return found;
}

double student_t_sf(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("t distribution needs df > 0");
  if (std::isnan(t)) return t;  // as before Boost: a NaN difference gives a NaN p, not an exception
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
