#pragma once
// Order statistics over timing samples. Quantiles use linear interpolation between closest
// ranks (type 7 in Hyndman & Fan, numpy's default), so the median of an even count is the mean
// of the two middle values.
#include <cstdint>
#include <vector>

namespace roofbench {

struct SampleStats {
  int n = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;
  double q1 = 0, median = 0, q3 = 0;
  double iqr() const { return q3 - q1; }
  double rel_iqr() const { return median > 0 ? iqr() / median : 0.0; }
};

double quantile(std::vector<double> v, double q);           // q in [0,1]; throws on empty input
// A 95% lower bound of the population IQR over the median, from order statistics alone: the
// upper end of the first quartile's distribution-free confidence interval (rank n/4 + 1.96 sd of
// a binomial) to the lower end of the third's. 0 when n is too small for the two to be apart.
double noise_floor_rel_iqr(std::vector<double> samples);
SampleStats summarize(const std::vector<double>& samples);  // throws on empty input

}  // namespace roofbench

namespace roofbench {

// Two-sided Mann-Whitney U test (Wilcoxon rank-sum): do values of `a` tend to be larger or
// smaller than values of `b`? It uses ranks only, so it holds for the skewed, long-tailed and
// bimodal timing distributions that a t-test misreads. Computed as scipy.stats.mannwhitneyu
// does by default (method "auto"): the exact distribution when the smaller sample has at most 8
// values and there are no ties; otherwise the normal approximation with the tie correction and
// the continuity correction.
struct MannWhitney {
  double u = 0;  // U of `a`: the number of pairs (a_i, b_j) with a_i > b_j, ties counting 1/2
  double p = 1;  // two-sided
  bool exact = false;
};
MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b);  // throws on empty input

// The smallest two-sided p the exact test can reach with n and m values: 2 / C(n+m, n). When
// it is not below the significance level, no data could show a difference (3 vs 3 values:
// 0.1), and a "not significant" answer says nothing.
double min_two_sided_p(int n, int m);

// Benjamini-Hochberg adjusted p-values (q-values), in the input order. Comparing many
// benchmarks at once, "q < alpha" keeps the expected share of false discoveries under alpha;
// "p < alpha" on each would flag about alpha x (number of benchmarks) by chance alone.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

struct Interval {
  double lo = 0, hi = 0;
};

// The median of one bootstrap resample (n draws with replacement) of `sorted` (ascending), drawn
// exactly but without drawing the resample: from the order statistics of the n uniforms that would
// pick it (a Beta variate, and for an even n the next one). O(1), however many values.
double resampled_median(const std::vector<double>& sorted, std::uint64_t& state);

// Percentile bootstrap interval of median(fresh) / median(base): both samples resampled with
// replacement `resamples` times from a fixed seed, so the same inputs give the same interval.
// Each resample's median comes from resampled_median: the cost is two sorts, not resamples × n.
Interval bootstrap_median_ratio(const std::vector<double>& base, const std::vector<double>& fresh, double confidence,
                                int resamples, std::uint64_t seed);


// Paired differences (an interleaved A/B: one difference per round, each round running both
// sides back to back): the one-sample Student t test of their mean against 0 and the t interval
// of that mean. Differences of log rates make the mean a log ratio (the geometric mean ratio)
// and rounds in which the whole machine was faster or slower cancel, since both sides saw it.
struct PairedT {
  int n = 0;
  double mean = 0, sd = 0;  // of the differences
  double p = 1;             // two-sided; 1 when n < 2; 0 when every difference is the same non-zero value
  Interval mean_ci;         // at the confidence given
};
PairedT paired_t(const std::vector<double>& differences, double confidence);  // throws on n < 1
// Change points of a series (a kernel's median rate, run after run): e-divisive means (Matteson
// and James, 2014, with exponent 1, as Otava and MongoDB's signal processing use it). In a
// segment, each split point's energy statistic
//   Q(τ) = m·k/(m+k) · (2/(m·k) Σ|x_i − y_j| − 2/(m(m−1)) Σ|x_i − x_i'| − 2/(k(k−1)) Σ|y_j − y_j'|)
// (x: the m values before τ, y: the k from τ on) is largest where the two sides differ most. Its
// significance is a permutation test: the segment's values shuffled `permutations` times, p =
// (1 + the shuffles whose largest Q reaches it) / (1 + permutations). A split with p < alpha is a
// change point; the search then continues in every segment the found points make, until none is
// significant. Each side keeps at least `min_size` values. Deterministic for a seed. The cost is
// permutations × n² a segment: history searches the latest kMaxChangePointRuns runs only.
inline constexpr std::size_t kMaxChangePointRuns = 100;
struct ChangePoint {
  int index = 0;          // the first value after the step
  double p = 1;           // the permutation test's
  double before = 0, after = 0;  // the medians of the segment's values before and after it
};
std::vector<ChangePoint> change_points(const std::vector<double>& series, double alpha, int permutations = 499,
                                       int min_size = 3, std::uint64_t seed = 1);

// Student's t distribution: P(T > t) with `df` degrees of freedom, and its inverse (the t with
// that upper tail), from Boost.Math. Both throw std::invalid_argument outside their domain (df <= 0,
// a tail outside (0, 1)); the survival function of a NaN is NaN.
double student_t_sf(double t, double df);
double student_t_quantile(double upper_tail, double df);

}  // namespace roofbench
