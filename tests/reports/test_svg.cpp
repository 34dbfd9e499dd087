#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <functional>
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
  // Plot area x 90..740 over 3 decades from 1; y 530..60 over 3 decades from 1e10.
  //   a: x = 90 + 650·log10(2)/3 = 155.22;  y = 530 − 470·log10(10)/3 = 373.33
  //   b: x = 90 + 650·log10(40)/3 = 437.11; y = 530 − 470·log10(40)/3 = 279.01
  const auto* a = p.points.at("gemm/a/fp32/n:1")->FirstChildElement("circle");
  ASSERT_TRUE(a);
  EXPECT_NEAR(a->DoubleAttribute("cx"), 155.22, 0.01);
  EXPECT_NEAR(a->DoubleAttribute("cy"), 373.33, 0.01);
  const auto* b = p.points.at("gemm/b/fp32/n:1")->FirstChildElement("circle");
  EXPECT_NEAR(b->DoubleAttribute("cx"), 437.11, 0.01);
  EXPECT_NEAR(b->DoubleAttribute("cy"), 279.01, 0.01);
  // FP64 is drawn as a square centred on the same spot as b.
  const auto* c = p.points.at("gemm/c/fp64/n:1")->FirstChildElement("rect");
  ASSERT_TRUE(c);
  EXPECT_NEAR(c->DoubleAttribute("x") + c->DoubleAttribute("width") / 2, 437.11, 0.01);
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
