#pragma once
// The log-log roofline chart as standalone SVG: every ceiling as a labelled line (the roofs
// solid, lower ceilings dashed), ridge points marked, one point per placed kernel, coloured by
// family and shaped by precision, and a legend. Reads the results model only.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "bench/results.h"
#include "reports/compare.h"

namespace roofbench {

// Where things go: data ranges (whole decades) and the plot rectangle in pixels.
struct ChartLayout {
  double width = 1300, height = 720;
  double left = 110, right = 1030, top = 60, bottom = 660;  // plot area
  std::string clip_id = "plot-area";                       // the plot area's clip path, unique in a page
  double x_min = 0.01, x_max = 100;                       // intensity, FLOP/byte
  double y_min = 1e9, y_max = 1e12;                       // performance, FLOP/s
  double px_x(double intensity) const;
  double px_y(double flop_per_s) const;
};

// Decade-aligned ranges that hold every placed point, every roof's visible part and every
// ridge point, with at least 3 decades on each axis.
ChartLayout layout_chart(const Results& r);

// One chart, or with more kernels (family/variant series) than a chart can tell apart, a stack of
// panels, each a whole roofline over the same roofs holding whole families in the order they ran
// (chart_panels). Within a panel no two series look the same.
std::string render_svg(const Results& r);

// The series keys ("family/variant") of each panel, in run order. A panel holds at most
// kPanelSeries series: the distinct looks, series_colour's 8 colours each solid or hollow. A
// family goes whole into one panel unless it alone has more series than that.
constexpr std::size_t kPanelSeries = 16;
std::vector<std::vector<std::string>> chart_panels(const Results& r);

// Several machines' rooflines on the same axes (the CPU and the GPU, two GPUs), each in its
// colour: its DRAM roof, its compute roofs (the highest solid), the ridge points where they
// meet (its machine balance: FLOPs per byte before it is compute-bound), and its kernels.
std::string render_svg_machines(const std::vector<const Results*>& runs, const std::vector<std::string>& labels);

// The hierarchical roofline (Nsight Compute's, against the ceilings measured in the same run):
// for every kernel with counters, one point per memory level (L1, L2, HBM) at the same height,
// its measured FLOPs over the timed median, and at the intensity of those FLOPs over the bytes
// counted at that level; one bandwidth roof per level. "" when no kernel has counters.
struct HierarchyPoint {
  const BenchmarkResult* benchmark = nullptr;
  double flop_per_s = 0;                   // counter FLOPs / timed median
  std::map<Level, double> intensity;       // by level: l1, l2, dram
};
std::vector<HierarchyPoint> hierarchy_points(const Results& r);
std::string render_svg_hierarchy(const Results& r);

// The width in pixels a line of text takes at `font_size`, by DejaVu Sans' advances (Debian's
// font for "Helvetica, Arial, sans-serif"; Helvetica and Arial are narrower). Every label is placed
// by it; the browser test (tests/scripts/test_charts_in_browser.py) measures the text it drew.
double text_width(const std::string& utf8, double font_size, bool bold = false);

// compare's and ab's roofline diff: the roofs of NEW's run, and each kernel placed in both runs as
// an arrow from its point in BASE (hollow) to its point in NEW (filled), coloured by its verdict.
// An arrow that leans sideways says the kernel's work per byte changed (declared or counted
// differently). Kernels not placed in both (no FLOPs, failed, refused) are listed under it.
struct DiffArrow {
  std::string name;
  Verdict verdict = Verdict::unsure;
  double base_intensity = 0, new_intensity = 0;  // FLOP/byte
  double base_rate = 0, new_rate = 0;            // FLOP/s
  double base_roof_pct = 0, new_roof_pct = 0;    // share of its roof in its own run
};
struct RooflineDiff {
  std::string svg;
  std::vector<DiffArrow> arrows;                               // in the comparison's row order
  std::vector<std::pair<std::string, std::string>> not_drawn;  // name, why
};
RooflineDiff render_roofline_diff(const Comparison& c, const Results& base, const Results& fresh);
// Its colour for a verdict: SLOWER red, FASTER green, UNSURE orange, SAME grey (others: black).
const char* verdict_colour(Verdict v);
// The Markdown beside the chart: a link to it (`link`, relative to the Markdown) and a small table,
// per verdict, of the kernels drawn and how many moved toward their roof and away from it.
std::string roofline_diff_markdown(const RooflineDiff& d, const std::string& link);
// A standalone HTML page: the chart, then compare's text.
std::string roofline_diff_html(const RooflineDiff& d, const Comparison& c);

// The colour of the i-th series in every chart (the roofline's families, history's benchmarks).
const char* series_colour(std::size_t i);

}  // namespace roofbench
