#pragma once
// Order statistics over timing samples. Quantiles use linear interpolation between closest
// ranks (type 7 in Hyndman & Fan, numpy's default), so the median of an even count is the mean
// of the two middle values.
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
SampleStats summarize(const std::vector<double>& samples);  // throws on empty input

}  // namespace roofbench
