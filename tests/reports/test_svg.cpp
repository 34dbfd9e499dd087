#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>

#include "reports/svg.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

Results chart_sample() {
  Results r = sample_results();
  r.device["name"] = "Test <CPU> & Co";         // must come out escaped
  r.benchmarks = {kernel("a", 2e9, 1e9, 0.02),  // I = 2,  100 GFLOP/s
                  kernel("b", 4e10, 1e9, 0.1),  // I = 40, 400 GFLOP/s
                  kernel("c", 4e10, 1e9, 0.1, Precision::fp64)};
  apply_model(r);
  return r;
}

struct Parsed {
  tinyxml2::XMLDocument doc;
  std::map<std::string, const tinyxml2::XMLElement*> points;  // data-name → the point's <g>
  std::vector<const tinyxml2::XMLElement*> ceilings, ridges;
};

void walk(const tinyxml2::XMLElement* e, Parsed& p) {
  for (; e; e = e->NextSiblingElement()) {
    const char* cls = e->Attribute("class");
    if (cls && std::string(cls) == "point") p.points[e->Attribute("data-name")] = e;
    if (cls && std::string(cls) == "ceiling") p.ceilings.push_back(e);
    if (cls && std::string(cls) == "ridge") p.ridges.push_back(e);
    walk(e->FirstChildElement(), p);
  }
}

}  // namespace

TEST(Svg, LayoutSpansWholeDecadesAroundTheData) {
  const ChartLayout L = layout_chart(chart_sample());
  // Intensities 2..40 and ridges 5, 10: [2/2, 40*3] → [1, 1000]. FLOP/s 100G..1T (peak 1T):
  // [100G/3, 1T*1.5] → [10 G, 10 T].
  EXPECT_DOUBLE_EQ(L.x_min, 1);
  EXPECT_DOUBLE_EQ(L.x_max, 1000);
  EXPECT_DOUBLE_EQ(L.y_min, 1e10);
  EXPECT_DOUBLE_EQ(L.y_max, 1e13);
}

TEST(Svg, ARateOffTheLogAxisLeavesItsRangeAlone) {
  // The reader refuses such files; the layout still never takes an infinite or negative rate
  // (its decade loop would not end).
  Results r = chart_sample();
  const ChartLayout clean = layout_chart(r);
  ASSERT_TRUE(r.benchmarks.at(0).placement);
  r.benchmarks[0].placement->flop_per_s = std::numeric_limits<double>::infinity();
  r.benchmarks[1].placement->flop_per_s = -1;
  const ChartLayout L = layout_chart(r);
  EXPECT_TRUE(std::isfinite(L.y_max) && std::isfinite(L.y_min) && L.y_min > 0) << L.y_min << " " << L.y_max;
  EXPECT_LE(L.y_max, clean.y_max);
  EXPECT_FALSE(render_svg(r).empty());
}

TEST(Svg, IsWellFormedXmlWithEveryElementOfTheChart) {
  Parsed p;
  const std::string svg = render_svg(chart_sample());
  ASSERT_EQ(p.doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS) << p.doc.ErrorStr();
  EXPECT_STREQ(p.doc.RootElement()->Name(), "svg");
  walk(p.doc.RootElement(), p);
  EXPECT_EQ(p.points.size(), 3u);
  EXPECT_EQ(p.ceilings.size(), 4u);  // every measured ceiling is drawn
  EXPECT_EQ(p.ridges.size(), 2u);    // FP32 and FP64 roofs against the DRAM roof
  EXPECT_NE(svg.find("Test &lt;CPU&gt; &amp; Co"), std::string::npos);
  EXPECT_NE(svg.find("DRAM update 100 GB/s"), std::string::npos);  // the roof, labelled with its value
  EXPECT_NE(svg.find("FP32 FMA (simd) 1.00 TFLOP/s"), std::string::npos);
  EXPECT_NE(svg.find("ridge 10.0 FLOP/B"), std::string::npos);
}

TEST(Svg, PointsSitAtHandComputedCoordinates) {
  Parsed p;
  ASSERT_EQ(p.doc.Parse(render_svg(chart_sample()).c_str()), tinyxml2::XML_SUCCESS);
  walk(p.doc.RootElement(), p);
  // Plot area x 110..1030 over 3 decades from 1; y 660..60 over 3 decades from 1e10.
  //   a: x = 110 + 920·log10(2)/3 = 202.32;  y = 660 − 600·log10(10)/3 = 460.00
  //   b: x = 110 + 920·log10(40)/3 = 601.30; y = 660 − 600·log10(40)/3 = 339.59
  const auto* a = p.points.at("gemm/a/fp32/n:1")->FirstChildElement("circle");
  ASSERT_TRUE(a);
  EXPECT_NEAR(a->DoubleAttribute("cx"), 202.32, 0.01);
  EXPECT_NEAR(a->DoubleAttribute("cy"), 460.00, 0.01);
  const auto* b = p.points.at("gemm/b/fp32/n:1")->FirstChildElement("circle");
  EXPECT_NEAR(b->DoubleAttribute("cx"), 601.30, 0.01);
  EXPECT_NEAR(b->DoubleAttribute("cy"), 339.59, 0.01);
  // FP64 is drawn as a square centred on the same spot as b.
  const auto* c = p.points.at("gemm/c/fp64/n:1")->FirstChildElement("rect");
  ASSERT_TRUE(c);
  EXPECT_NEAR(c->DoubleAttribute("x") + c->DoubleAttribute("width") / 2, 601.30, 0.01);
}

TEST(Svg, AKernelsMathRoofIsItsOwnDashedSegmentAndNoMathCeilingIsDrawnAsAFlopRoof) {
  // 5e9 FLOPs and 1e9 sin calls at 2e9 calls/s: a math roof of 10 GFLOP/s, at I = 5 FLOP/B.
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  BenchmarkResult b = kernel("sin", 5e9, 1e9, 1.0);
  b.transcendentals = {{"sin", 1e9}};
  r.benchmarks = {b};
  apply_model(r);
  const std::string svg = render_svg(r);
  Parsed p;
  ASSERT_EQ(p.doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS);
  walk(p.doc.RootElement(), p);
  for (const auto* e : p.ceilings) EXPECT_STRNE(e->Attribute("data-ceiling"), "math_sin");
  const ChartLayout L = layout_chart(r);
  const std::string needle = "class=\"math-roof\" data-ceiling=\"math_sin\"";
  const auto at = svg.find(needle);
  ASSERT_NE(at, std::string::npos) << svg;
  tinyxml2::XMLDocument one;
  ASSERT_EQ(one.Parse(svg.substr(svg.rfind('<', at), svg.find("/>", at) + 2 - svg.rfind('<', at)).c_str()),
            tinyxml2::XML_SUCCESS);
  const auto* line = one.RootElement();
  EXPECT_NEAR(line->DoubleAttribute("y1"), L.px_y(10e9), 0.01);
  EXPECT_DOUBLE_EQ(line->DoubleAttribute("y1"), line->DoubleAttribute("y2"));
  EXPECT_NEAR(line->DoubleAttribute("x1"), L.px_x(5.0 / 4), 0.01);
  EXPECT_NEAR(line->DoubleAttribute("x2"), L.px_x(5.0 * 4), 0.01);
  EXPECT_NE(svg.find("sin calls (simd) 2.00 Gop/s"), std::string::npos) << "the legend lists the ceiling";
  EXPECT_NE(svg.find("transcendental-bound"), std::string::npos) << "the point's tooltip names the bound";
}

TEST(Svg, AKernelsLaunchRoofIsItsOwnDashedSegmentAndNoLaunchCeilingIsDrawnAsAFlopRoof) {
  // 1e6 FLOPs, 1e5 bytes and 1000 launches at 1e6/s: a launch roof of 1 GFLOP/s, at I = 10 FLOP/B.
  Results r = sample_results();
  r.ceilings.push_back(launch_ceiling("omp_region", 1e6));
  BenchmarkResult b = kernel("per_op", 1e6, 1e5, 2e-3);
  b.launches = {{"omp_region", 1000}};
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_EQ(r.benchmarks[0].placement->bound, "launch");
  const std::string svg = render_svg(r);
  Parsed p;
  ASSERT_EQ(p.doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS);
  walk(p.doc.RootElement(), p);
  for (const auto* e : p.ceilings) EXPECT_STRNE(e->Attribute("data-ceiling"), "launch_omp_region");
  const ChartLayout L = layout_chart(r);
  const std::string needle = "class=\"launch-roof\" data-ceiling=\"launch_omp_region\"";
  const auto at = svg.find(needle);
  ASSERT_NE(at, std::string::npos) << svg;
  tinyxml2::XMLDocument one;
  ASSERT_EQ(one.Parse(svg.substr(svg.rfind('<', at), svg.find("/>", at) + 2 - svg.rfind('<', at)).c_str()),
            tinyxml2::XML_SUCCESS);
  const auto* line = one.RootElement();
  EXPECT_NEAR(line->DoubleAttribute("y1"), L.px_y(1e9), 0.01);
  EXPECT_DOUBLE_EQ(line->DoubleAttribute("y1"), line->DoubleAttribute("y2"));
  EXPECT_NEAR(line->DoubleAttribute("x1"), L.px_x(10.0 / 4), 0.01);
  EXPECT_NE(svg.find("omp_region launches 1.00 Mlaunch/s"), std::string::npos) << "the legend lists the ceiling";
  EXPECT_NE(svg.find("launch-bound"), std::string::npos) << "the point's tooltip names the bound";
}

TEST(Svg, ComputeRoofIsHorizontalAndStartsAtTheRidge) {
  Parsed p;
  ASSERT_EQ(p.doc.Parse(render_svg(chart_sample()).c_str()), tinyxml2::XML_SUCCESS);
  walk(p.doc.RootElement(), p);
  const ChartLayout L = layout_chart(chart_sample());
  for (const auto* e : p.ceilings) {
    if (std::string(e->Attribute("data-ceiling")) != "fp32_fma") continue;
    EXPECT_DOUBLE_EQ(e->DoubleAttribute("y1"), e->DoubleAttribute("y2"));
    EXPECT_NEAR(e->DoubleAttribute("x1"), L.px_x(10.0), 0.01);  // ridge at 1 T / 100 G
    EXPECT_NEAR(e->DoubleAttribute("y1"), L.px_y(1e12), 0.01);
    return;
  }
  FAIL() << "no fp32_fma line";
}

TEST(Svg, FailedAndUnplacedKernelsAreNotDrawn) {
  Results r = sample_results();
  BenchmarkResult bad = kernel("bad", 1, 1, 1);
  bad.verification.ok = false;
  bad.error = "verification failed";
  bad.measurement.reset();
  r.benchmarks = {bad};
  apply_model(r);
  Parsed p;
  ASSERT_EQ(p.doc.Parse(render_svg(r).c_str()), tinyxml2::XML_SUCCESS);
  walk(p.doc.RootElement(), p);
  EXPECT_TRUE(p.points.empty());
}

TEST(Svg, EmptyResultsStillRenderAValidChart) {
  Results r;
  r.device = {{"kind", "cpu"}, {"name", "x"}};
  tinyxml2::XMLDocument doc;
  EXPECT_EQ(doc.Parse(render_svg(r).c_str()), tinyxml2::XML_SUCCESS);
}

TEST(Svg, PointLabelsNeverOverlap) {
  Results r = sample_results();
  // Eight kernels crowded into one spot: each label must find a free place or be left out.
  for (int i = 0; i < 8; ++i) r.benchmarks.push_back(kernel("v" + std::to_string(i), 2e9, 1e9, 0.02 + 1e-5 * i));
  apply_model(r);
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(render_svg(r).c_str()), tinyxml2::XML_SUCCESS);
  Parsed p;
  walk(doc.RootElement(), p);
  ASSERT_EQ(p.points.size(), 8u);
  struct Box {
    double x0, y0, x1, y1;
  };
  std::vector<Box> boxes;
  for (const auto& [name, g] : p.points)
    if (const auto* t = g->FirstChildElement("text")) {
      const double x = t->DoubleAttribute("x"), y = t->DoubleAttribute("y");
      const double w = 5.2 * std::string(t->GetText()).size();
      boxes.push_back({x, y - 8, x + w, y + 2});
    }
  EXPECT_GE(boxes.size(), 4u);  // most still get a label
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      const bool overlap = boxes[i].x0 < boxes[j].x1 && boxes[j].x0 < boxes[i].x1 && boxes[i].y0 < boxes[j].y1 &&
                           boxes[j].y0 < boxes[i].y1;
      EXPECT_FALSE(overlap) << i << " and " << j;
    }
}

namespace {
// A GPU-like run with L2 and shared-memory roofs, and two kernels with counters: a naive GEMM
// whose reuse shows as much more traffic at L1 and L2 than at HBM, and a stream kernel.
Results hierarchy_sample() {
  Results r = sample_results();
  Ceiling l2 = bandwidth_ceiling("l2_read", 1e12);
  l2.level = Level::l2;
  Ceiling smem = bandwidth_ceiling("smem_read", 4e12);
  smem.level = Level::smem;
  r.ceilings.push_back(l2);
  r.ceilings.push_back(smem);
  r.benchmarks = {kernel("naive", 2e9, 1.2e7, 0.01), kernel("stream_like", 1e8, 1.2e9, 0.02)};
  r.benchmarks[0].counters = counters_of(2e9, 1.2e7, 8e8, 8e9);
  r.benchmarks[1].counters = counters_of(1e8, 1.2e9, 1.2e9, 1.2e9);
  apply_model(r);
  return r;
}
}  // namespace

TEST(SvgHierarchy, OnePointPerLevelAtTheTimedRateAndOneRoofPerLevel) {
  const Results r = hierarchy_sample();
  const auto pts = hierarchy_points(r);
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_DOUBLE_EQ(pts[0].flop_per_s, 2e9 / 0.01);  // counter FLOPs over the timed median
  EXPECT_DOUBLE_EQ(pts[0].intensity.at(Level::dram), 2e9 / 1.2e7);
  EXPECT_DOUBLE_EQ(pts[0].intensity.at(Level::l2), 2e9 / 8e8);
  EXPECT_DOUBLE_EQ(pts[0].intensity.at(Level::l1), 2e9 / 8e9);

  tinyxml2::XMLDocument doc;
  const std::string svg = render_svg_hierarchy(r);
  ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
  std::map<std::string, int> points_per_level, roofs_per_level;
  std::map<std::string, double> naive_x;  // level → pixel x of the naive GEMM's point
  std::function<void(const tinyxml2::XMLElement*, const char*)> visit = [&](const tinyxml2::XMLElement* e,
                                                                            const char* bench) {
    for (; e; e = e->NextSiblingElement()) {
      const std::string cls = e->Attribute("class") ? e->Attribute("class") : "";
      const char* b = e->Attribute("data-benchmark") ? e->Attribute("data-benchmark") : bench;
      if (cls == "point") {
        const std::string level = e->Attribute("data-level");
        ++points_per_level[level];
        if (b && std::string(b).find("naive") != std::string::npos) {
          const auto* shape = e->FirstChildElement("title")->NextSiblingElement();
          naive_x[level] = shape->DoubleAttribute("cx", shape->DoubleAttribute("x", 0));
          if (std::string(shape->Name()) == "path") naive_x[level] = std::stod(std::string(shape->Attribute("d")).substr(2));
        }
      }
      if (cls == "ceiling" && e->Attribute("data-level")) ++roofs_per_level[e->Attribute("data-level")];
      visit(e->FirstChildElement(), b);
    }
  };
  visit(doc.RootElement(), nullptr);
  EXPECT_EQ(points_per_level, (std::map<std::string, int>{{"dram", 2}, {"l1", 2}, {"l2", 2}}));
  // One bandwidth roof per level; shared memory's stands in for L1.
  EXPECT_EQ(roofs_per_level, (std::map<std::string, int>{{"dram", 1}, {"l1", 1}, {"l2", 1}}));
  // The naive GEMM's reuse: L1 and L2 points sit left of (at lower intensity than) its HBM point.
  EXPECT_LT(naive_x.at("l1"), naive_x.at("l2"));
  EXPECT_LT(naive_x.at("l2"), naive_x.at("dram"));
}

TEST(SvgHierarchy, NothingToDrawWithoutCounters) {
  Results r = hierarchy_sample();
  EXPECT_FALSE(render_svg_hierarchy(r).empty());
  r.benchmarks[0].counters->error = "no permission";
  r.benchmarks[1].counters.reset();
  EXPECT_EQ(render_svg_hierarchy(r), "");
}

namespace {

// A crowded chart: sixteen kernels with long names over many sizes, and more ceilings than the
// plot is tall, as a full run has.
Results crowded_sample() {
  Results r = sample_results();
  for (int i = 0; i < 12; ++i)
    r.ceilings.push_back(bandwidth_ceiling("dram_lower_ceiling_number_" + std::to_string(i), 10e9 + 5e9 * i));
  for (int v = 0; v < 16; ++v)
    for (int n = 0; n < 4; ++n) {
      // Up to 80% of the 1 TFLOP/s and 100 GB/s roofs: a point above its roof is refused, not drawn.
      BenchmarkResult b = kernel("a_variant_with_a_rather_long_name_" + std::to_string(v), 1e9 * (1 + n) * (1 + v),
                                 1e8 * (1 + v), 0.02 * (1 + n));
      b.params = {{"n", std::int64_t{1} << (20 + n)}};
      b.name = "gemm/" + b.variant + "/fp32/n:" + std::to_string(std::int64_t{1} << (20 + n));
      r.benchmarks.push_back(b);
    }
  apply_model(r);
  return r;
}

// Where a <text> lies, about: its anchor point, its width as the chart estimates it (text_width;
// the browser test measures the real one), its height the font size, rotated as its transform says.
struct TextBox {
  double x0, y0, x1, y1;
};
TextBox box_of(const tinyxml2::XMLElement* t, double inherited_size) {
  const double size = t->DoubleAttribute("font-size", inherited_size);
  const std::string text = t->GetText() ? t->GetText() : "";
  const char* weight = t->Attribute("font-weight");
  const double w = roofbench::text_width(text, size, weight && std::string(weight) == "bold");
  double x = t->DoubleAttribute("x"), y = t->DoubleAttribute("y");
  const char* anchor = t->Attribute("text-anchor");
  if (anchor && std::string(anchor) == "end") x -= w;
  if (anchor && std::string(anchor) == "middle") x -= w / 2;
  double deg = 0;
  if (const char* tr = t->Attribute("transform"); tr && std::sscanf(tr, "rotate(%lf", &deg) != 1) return {-1, -1, -1, -1};
  const double a = deg * M_PI / 180;
  const double xs[] = {x, x + w * std::cos(a), x + size * std::sin(a), x + w * std::cos(a) + size * std::sin(a)};
  const double ys[] = {y, y + w * std::sin(a), y - size * std::cos(a), y + w * std::sin(a) - size * std::cos(a)};
  return {*std::min_element(xs, xs + 4), *std::min_element(ys, ys + 4), *std::max_element(xs, xs + 4),
          *std::max_element(ys, ys + 4)};
}

void every_text(const tinyxml2::XMLElement* e, double size, const std::function<void(const tinyxml2::XMLElement*, double)>& f) {
  for (; e; e = e->NextSiblingElement()) {
    const double here = e->DoubleAttribute("font-size", size);
    if (std::string(e->Name()) == "text") f(e, here);
    every_text(e->FirstChildElement(), here, f);
  }
}

}  // namespace

TEST(Svg, EveryTextLiesInsideTheChartHoweverCrowded) {
  // The roofline, the hierarchical roofline and several machines on one chart.
  const Results crowded = crowded_sample();
  Results long_named = chart_sample();
  long_named.device["name"] = "A GPU with a name long enough to reach well past the right edge of a chart";
  std::vector<std::string> svgs = {render_svg(chart_sample()), render_svg(crowded),
                                   render_svg_machines({&crowded, &long_named}, {"crowded", "long named"})};
  Results h = crowded;
  for (auto& b : h.benchmarks) b.counters = counters_of(b.flops, b.bytes, 2 * b.bytes, 4 * b.bytes);
  apply_model(h);
  svgs.push_back(render_svg_hierarchy(h));
  for (const std::string& svg : svgs) {
    tinyxml2::XMLDocument doc;
    ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS);
    const tinyxml2::XMLElement* root = doc.RootElement();
    const double width = root->DoubleAttribute("width"), height = root->DoubleAttribute("height");
    std::string view = root->Attribute("viewBox");
    EXPECT_EQ(view, fmt::format("0 0 {} {}", root->Attribute("width"), root->Attribute("height")));
    int checked = 0;
    every_text(root->FirstChildElement(), root->DoubleAttribute("font-size", 12), [&](const tinyxml2::XMLElement* t, double size) {
      const TextBox b = box_of(t, size);
      if (b.x0 == -1) return;  // the rotated axis title: translate + rotate, centred on its axis
      ++checked;
      EXPECT_GE(b.x0, 0) << t->GetText();
      EXPECT_LE(b.x1, width) << t->GetText();
      EXPECT_GE(b.y0, 0) << t->GetText();
      EXPECT_LE(b.y1, height) << t->GetText();
    });
    EXPECT_GT(checked, 10);
  }
}

TEST(Svg, EveryPointLabelNamesItsKernelAndEveryPointHasATooltip) {
  const Results r = crowded_sample();
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(render_svg(r).c_str()), tinyxml2::XML_SUCCESS);
  Parsed p;
  walk(doc.RootElement(), p);
  ASSERT_EQ(p.points.size(), 64u);
  int labelled = 0;
  for (const auto& [name, g] : p.points) {
    const auto* title = g->FirstChildElement("title");
    ASSERT_TRUE(title) << name;
    const std::string tip = title->GetText();
    EXPECT_EQ(tip.rfind(name + ": ", 0), 0u) << tip;  // name, rate, % of roof, bound
    EXPECT_NE(tip.find("% of roof ("), std::string::npos) << tip;
    EXPECT_NE(tip.find("-bound)"), std::string::npos) << tip;
    if (const auto* t = g->FirstChildElement("text")) {
      ++labelled;
      const std::string variant = name.substr(5, name.find("/fp32") - 5);
      EXPECT_EQ(std::string(t->GetText()).rfind(variant + " ", 0), 0u) << t->GetText();
    }
  }
  EXPECT_GT(labelled, 0);
}

TEST(Svg, AnImplausibleKernelIsListedUnderTheLegendAndDrawnAsNoPoint) {
  Results r = sample_results();
  r.benchmarks = {kernel("fine", 2e9, 1e9, 0.02), kernel("impossible", 2e9, 1e9, 0.005)};  // 50% and 200%
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[1].implausible());
  tinyxml2::XMLDocument doc;
  const std::string svg = render_svg(r);
  ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS);
  Parsed p;
  walk(doc.RootElement(), p);
  ASSERT_EQ(p.points.size(), 1u);
  EXPECT_EQ(p.points.begin()->first, "gemm/fine/fp32/n:1");
  EXPECT_NE(svg.find("IMPLAUSIBLE, not drawn (1)"), std::string::npos);
  EXPECT_NE(svg.find("gemm/impossible/fp32/n:1: 200% of its roof"), std::string::npos);
}

TEST(Svg, NoLabelCoversAnotherOrACeilingsLabel) {
  const Results r = crowded_sample();
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(render_svg(r).c_str()), tinyxml2::XML_SUCCESS);
  std::vector<std::pair<std::string, TextBox>> labels;  // point labels and horizontal ceiling labels
  every_text(doc.RootElement()->FirstChildElement(), 12, [&](const tinyxml2::XMLElement* t, double size) {
    const char* cls = t->Attribute("class");
    const bool point_label = t->Parent()->ToElement() && t->Parent()->ToElement()->Attribute("class") &&
                             std::string(t->Parent()->ToElement()->Attribute("class")) == "point";
    if (point_label || (cls && std::string(cls) == "ceiling-label" && !t->Attribute("transform")))
      labels.emplace_back(t->GetText(), box_of(t, size));
  });
  ASSERT_GT(labels.size(), 4u);
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      const TextBox &a = labels[i].second, &b = labels[j].second;
      // A pixel of slack: the estimate of a text's width is an estimate.
      const bool overlap = a.x0 + 1 < b.x1 && b.x0 + 1 < a.x1 && a.y0 + 1 < b.y1 && b.y0 + 1 < a.y1;
      EXPECT_FALSE(overlap) << labels[i].first << " / " << labels[j].first;
    }
}

TEST(Svg, APipelinedFormsOverlapRoofIsItsOwnDashedSegment) {
  // Passes of 0.1 s (H2D at 10 GB/s), 0.2 s (2e11 FLOPs at 1 TFLOP/s) and 0.1 s (D2H), pipelined
  // over 4 chunks: 0.4 / 4 + 3/4 · 0.2 = 0.25 s, so its roof is 2e11 / 0.25 = 800 GFLOP/s.
  Results r = sample_results();
  for (const char* name : {"pcie_h2d_pinned", "pcie_d2h_pinned"}) r.ceilings.push_back(pcie_ceiling(name, 10e9));
  BenchmarkResult b = kernel("streams4", 2e11, 3e9, 0.3);
  b.phases = {{"H2D", 0, 1e9, {}, "pcie_h2d_pinned"}, {"kernel", 2e11, 1e9, {}, ""}, {"D2H", 0, 1e9, {}, "pcie_d2h_pinned"}};
  b.pipeline_chunks = 4;
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement);
  const std::string svg = render_svg(r);
  const auto at = svg.find("class=\"pipeline-roof\" data-ceiling=\"pcie_h2d_pinned, pcie_d2h_pinned\"");
  ASSERT_NE(at, std::string::npos) << svg;
  tinyxml2::XMLDocument one;
  ASSERT_EQ(one.Parse(svg.substr(svg.rfind('<', at), svg.find("/>", at) + 2 - svg.rfind('<', at)).c_str()),
            tinyxml2::XML_SUCCESS);
  EXPECT_NEAR(one.RootElement()->DoubleAttribute("y1"), layout_chart(r).px_y(2e11 / 0.25), 0.01);
}

TEST(Svg, ASustainedRoofIsADottedLineUnderItsBurstRoofWithItsValueAndClock) {
  Results r = chart_sample();
  Ceiling& fma = r.ceilings[2];
  fma.measurement.sample_clock_hz = {1.98e9};
  Measurement held = measurement_of({1.25});
  held.held_s = 10;
  held.sample_clock_hz = {1.6e9};
  fma.measurement_sustained = held;
  fma.value_sustained = 0.8e12;
  apply_model(r);
  const std::string svg = render_svg(r);
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
  std::vector<const tinyxml2::XMLElement*> lines, burst;
  std::function<void(const tinyxml2::XMLElement*)> find = [&](const tinyxml2::XMLElement* e) {
    for (; e; e = e->NextSiblingElement()) {
      const char* cls = e->Attribute("class");
      const char* name = e->Attribute("data-ceiling");
      if (cls && name && std::string(name) == "fp32_fma") {
        if (std::string(cls) == "sustained-roof") lines.push_back(e);
        if (std::string(cls) == "ceiling") burst.push_back(e);
      }
      find(e->FirstChildElement());
    }
  };
  find(doc.RootElement());
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(burst.size(), 1u);
  // 0.8 TFLOP/s: y = 660 − 600·log10(80)/3 = 279.38, below the burst roof's 1 TFLOP/s (260.00).
  EXPECT_NEAR(lines[0]->DoubleAttribute("y1"), 279.38, 0.01);
  EXPECT_NEAR(burst[0]->DoubleAttribute("y1"), 260.00, 0.01);
  EXPECT_NE(svg.find("FP32 FMA (simd) sustained 800 GFLOP/s at 1.60 GHz"), std::string::npos);
  EXPECT_NE(svg.find("sustained roof (held under load)"), std::string::npos);
  // Without a sustained pass, none and no legend entry.
  const std::string plain = render_svg(chart_sample());
  EXPECT_EQ(plain.find("sustained"), std::string::npos);
}

namespace {
// Families of the given sizes (series each), one kernel per series, spread below the roofs.
Results families_of(const std::vector<std::pair<std::string, int>>& families) {
  Results r = sample_results();
  int k = 0;
  for (const auto& [family, series] : families)
    for (int v = 0; v < series; ++v, ++k) {
      BenchmarkResult b = kernel("v" + std::to_string(v), 1e9 * (1 + k % 7), 1e8 * (1 + k % 5), 0.02 * (1 + k % 3));
      b.family = family;
      b.name = family + "/v" + std::to_string(v) + "/fp32/n:1";
      r.benchmarks.push_back(b);
    }
  apply_model(r);
  return r;
}
}  // namespace

TEST(Svg, PanelsHoldWholeFamiliesAndNoMoreSeriesThanTheLooksTellApart) {
  // 10 + 8 do not fit one panel of 16; a family of 20 fills panels of its own.
  const Results r = families_of({{"alpha", 10}, {"beta", 8}, {"gamma", 20}, {"delta", 3}});
  const auto panels = chart_panels(r);
  ASSERT_EQ(panels.size(), 4u);
  EXPECT_EQ(panels[0].size(), 10u);  // alpha
  EXPECT_EQ(panels[1].size(), 8u);   // beta
  EXPECT_EQ(panels[2].size(), 16u);  // gamma's first 16
  EXPECT_EQ(panels[3].size(), 7u);   // gamma's last 4, then delta whole
  std::set<std::string> seen;
  for (const auto& p : panels) {
    EXPECT_LE(p.size(), kPanelSeries);
    for (const auto& k : p) EXPECT_TRUE(seen.insert(k).second) << k << " is in two panels";
  }
  EXPECT_EQ(seen.size(), 41u);
  EXPECT_EQ(panels[1].front(), "beta/v0");
  EXPECT_EQ(panels[3].back(), "delta/v2");
  // A run that fits one chart draws one.
  EXPECT_EQ(chart_panels(families_of({{"alpha", 10}, {"beta", 6}})).size(), 1u);
}

TEST(Svg, EachPanelIsAWholeChartWhoseLegendSeriesAllLookDifferent) {
  const Results r = families_of({{"gemm", 8}, {"fusion", 4}, {"lowprec", 1}, {"recompute", 2}, {"divergence", 3},
                                 {"stream", 1}, {"launch", 3}, {"overlap", 4}});  // 26 series, as on the H200
  const std::string svg = render_svg(r);
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
  std::vector<const tinyxml2::XMLElement*> panels;
  for (auto* e = doc.RootElement()->FirstChildElement("svg"); e; e = e->NextSiblingElement("svg")) panels.push_back(e);
  ASSERT_EQ(panels.size(), 2u);
  std::size_t points = 0;
  std::set<std::string> clips;
  for (const auto* panel : panels) {
    Parsed p;
    walk(panel->FirstChildElement(), p);
    points += p.points.size();
    const auto* clip = panel->FirstChildElement("defs")->FirstChildElement("clipPath");
    EXPECT_TRUE(clips.insert(clip->Attribute("id")).second) << "two panels share the clip path " << clip->Attribute("id");
    std::set<std::pair<std::string, std::string>> looks;
    int swatches = 0;
    for (const auto* g = panel->FirstChildElement("g"); g; g = g->NextSiblingElement("g"))
      if (g->Attribute("class", "legend"))
        for (const auto* rect = g->FirstChildElement("rect"); rect; rect = rect->NextSiblingElement("rect")) {
          ++swatches;
          EXPECT_TRUE(looks.insert({rect->Attribute("fill"), rect->Attribute("stroke")}).second)
              << "two series of one panel look alike: " << rect->Attribute("fill") << " " << rect->Attribute("stroke");
        }
    EXPECT_GE(swatches, 11);
    EXPECT_LE(swatches, static_cast<int>(kPanelSeries));
  }
  EXPECT_EQ(points, 26u);  // every kernel, in exactly one panel
  EXPECT_NE(svg.find("Roofline (1 of 2: gemm, fusion, lowprec, recompute)"), std::string::npos);
  EXPECT_NE(svg.find("Roofline (2 of 2: divergence, stream, launch, overlap)"), std::string::npos);
  EXPECT_NE(svg.find("Measured in this run"), std::string::npos);
  EXPECT_NE(svg.find("value: under panel 1"), std::string::npos);
}
