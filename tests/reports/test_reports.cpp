#include <gtest/gtest.h>

#include "bench/harness.h"
#include "kernels/overlap/overlap.h"
#include "reports/format.h"
#include "reports/tables.h"
#include "reports/report.h"
#include "reports/svg.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {
Results report_sample() {
  Results r = sample_results();
  BenchmarkResult bad = kernel("bad", 1, 1, 1);
  bad.verification.ok = false;
  bad.error = "verification failed: C[0,0]: got 1, expected 2";
  bad.measurement.reset();
  r.benchmarks = {kernel("a", 2e9, 1e9, 0.02), kernel("fast|pipe", 2e9, 1e9, 0.0089), bad};
  apply_model(r);
  return r;
}
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(Format, SiPrefixesAndDurations) {
  EXPECT_EQ(si(1.234e10, "FLOP/s"), "12.3 GFLOP/s");
  EXPECT_EQ(si(999, "B/s"), "999 B/s");
  EXPECT_EQ(si(1e12, "FLOP/s"), "1.00 TFLOP/s");
  EXPECT_EQ(duration(1.5e-3), "1.50 ms");
  EXPECT_EQ(duration(2.5e-6), "2.50 us");
  EXPECT_EQ(duration(42), "42.0 s");
  EXPECT_EQ(intensity(0.126), "0.13");
  EXPECT_EQ(intensity(171.2), "171");
}

TEST(Format, CeilingPassesShareOnePrefix) {
  Ceiling c = bandwidth_ceiling("dram_read", 1.2e12);
  EXPECT_EQ(ceiling_passes(c), "");
  c.value_start = 999e9;
  c.value_end = 1.2e12;
  EXPECT_EQ(ceiling_passes(c), "0.999 / 1.2 TB/s");
}

// A GPU is named with the NVIDIA driver it ran under where NVML gave it, beside the CUDA driver
// API's version; a file from before that has the CUDA one alone.
TEST(Format, TheDeviceLineNamesTheNvidiaDriverWhereItWasRead) {
  Results r = sample_results();
  r.device = {{"kind", "cuda"}, {"index", 0}, {"name", "NVIDIA H200"}, {"compute_capability", "9.0"},
              {"sm_count", 132}, {"driver_version", "13.0"}, {"runtime_version", "13.0"}};
  EXPECT_EQ(device_line(r), "NVIDIA H200 (cuda:0, sm 9.0, 132 SMs, driver 13.0, runtime 13.0)");
  r.device["nvidia_driver_version"] = nullptr;  // NVML could not give it
  EXPECT_EQ(device_line(r), "NVIDIA H200 (cuda:0, sm 9.0, 132 SMs, driver 13.0, runtime 13.0)");
  r.device["nvidia_driver_version"] = "580.95.05";
  EXPECT_EQ(device_line(r), "NVIDIA H200 (cuda:0, sm 9.0, 132 SMs, driver 580.95.05 (CUDA 13.0), runtime 13.0)");
}

TEST(Markdown, OneTableRowPerBenchmarkAndCeiling) {
  const std::string md = render_markdown(report_sample());
  EXPECT_EQ(count(md, "| `gemm/"), 3u);
  EXPECT_EQ(count(md, "| DRAM "), 2u);
  EXPECT_NE(md.find("| `gemm/a/fp32/n:1` | 20.0 ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("50.0% | memory |"), std::string::npos) << md;
  EXPECT_NE(md.find("FAILED: verification failed"), std::string::npos);
  EXPECT_NE(md.find("fast\\|pipe"), std::string::npos);  // a '|' cannot break the table
  EXPECT_NE(md.find("**Warnings**"), std::string::npos);
}

TEST(Reports, ATimingOnlyKernelIsPlacedButMarkedUnverifiedInEveryReport) {
  Results r = sample_results();
  BenchmarkResult t = kernel("mine", 2e9, 1e9, 0.02);
  t.timing_only = true;
  t.verification = {};
  r.benchmarks = {kernel("a", 2e9, 1e9, 0.02), t};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[1].placement);  // placed, as a measured kernel is
  const std::string md = render_markdown(r);
  EXPECT_EQ(count(md, "UNVERIFIED (timing only)"), 1u) << md;
  const std::string html = render_html(r);
  EXPECT_NE(html.find("NO: timing only, no reference"), std::string::npos);
  const std::string svg = render_svg(r);
  EXPECT_EQ(count(svg, "data-unverified=\"timing only\""), 1u);
  EXPECT_NE(svg.find("UNVERIFIED: timing only, no reference</title>"), std::string::npos);
  EXPECT_NE(svg.find("(unverified)</text>"), std::string::npos) << svg;
}

TEST(Markdown, LessonsTableShowsTheSpeedupOverTheFormItImprovesOn) {
  Results r = sample_results();
  BenchmarkResult slow = kernel("sincos_unfused", 5e6, 44e6, 6e-3), fast = kernel("sincos_fused", 5e6, 8e6, 1.2e-3);
  slow.family = fast.family = "fusion";
  slow.name = "fusion/sincos_unfused/fp32/n:1";
  fast.name = "fusion/sincos_fused/fp32/n:1";
  fast.compared_with = "fusion/sincos_unfused/fp32";
  BenchmarkResult other_size = fast;
  other_size.params = {{"n", 2}};  // no unfused run at n:2: no row
  other_size.name = "fusion/sincos_fused/fp32/n:2";
  r.benchmarks = {slow, fast, other_size};
  apply_model(r);
  const auto rows = lessons(r);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "fusion/sincos_fused/fp32/n:1");
  EXPECT_EQ(rows[0].against, "fusion/sincos_unfused/fp32/n:1");
  EXPECT_EQ(rows[0].speedup, "5.00×");
  EXPECT_EQ(rows[0].bytes, "8.00 MB");
  EXPECT_EQ(rows[0].against_bytes, "44.0 MB");
  const std::string md = render_markdown(r);
  // Predicted from the roofs: both forms memory-bound at 100 GB/s, 0.44 ms against 0.08 ms.
  EXPECT_EQ(rows[0].predicted, "5.50×");
  EXPECT_EQ(rows[0].bounds, "memory ← memory");
  EXPECT_NE(md.find("| `fusion/sincos_fused/fp32/n:1` | `fusion/sincos_unfused/fp32/n:1` | 1.20 ms | 6.00 ms | 5.00× | "
                    "5.50× | memory ← memory | 8.00 MB | 44.0 MB |"),
            std::string::npos)
      << md;
  EXPECT_NE(render_html(r).find("<h2>Lessons</h2>"), std::string::npos);
}

TEST(Markdown, LessonsPredictTheSpeedupFromTheMathRoofWhereItBinds) {
  // Both forms call sin and cos once per element; at 1e9 calls/s each, 1e6 elements take 2 ms of
  // math whatever the bytes: the model predicts no gain from fusion (1.00×), and says why.
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 1e9));
  r.ceilings.push_back(transcendental_ceiling("cos", 1e9));
  BenchmarkResult slow = kernel("sincos_unfused", 5e6, 44e6, 2.4e-3), fast = kernel("sincos_fused", 5e6, 8e6, 2.1e-3);
  slow.family = fast.family = "fusion";
  slow.name = "fusion/sincos_unfused/fp32/n:1";
  fast.name = "fusion/sincos_fused/fp32/n:1";
  fast.compared_with = "fusion/sincos_unfused/fp32";
  slow.transcendentals = fast.transcendentals = {{"sin", 1e6}, {"cos", 1e6}};
  r.benchmarks = {slow, fast};
  apply_model(r);
  const auto rows = lessons(r);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].speedup, "1.14×");
  EXPECT_EQ(rows[0].predicted, "1.00×");
  EXPECT_EQ(rows[0].bounds, "transcendental ← transcendental");
  EXPECT_NE(render_html(r).find("<td>transcendental ← transcendental</td>"), std::string::npos);
}

// The overlap family as declared (kernels/overlap/overlap.h), at n = 2^20 in 16 chunks of 100 FMAs
// per element, against PCIe at 50 GB/s each way, DRAM at 100 GB/s and 4 TFLOP/s FP32: each pass
// takes 83.9 us (4 MiB over each link; the kernel's 8 MiB at DRAM speed), so serial is 251.7 us
// and the pipeline 251.7 / 16 + 15/16 · 83.9 = 94.4 us: 2.67× predicted.
TEST(Markdown, TheOverlapLessonPredictsThePipelineAndReportsItsEfficiency) {
  Results r = sample_results();
  for (const char* name : {"pcie_h2d_pinned", "pcie_d2h_pinned"}) r.ceilings.push_back(pcie_ceiling(name, 50e9));
  Ceiling duplex = pcie_ceiling("pcie_duplex_pinned", 100e9);  // full duplex: binds nothing
  duplex.level_roof = false;
  r.ceilings.push_back(duplex);
  Ceiling fma = compute_ceiling("fp32_fma_simt", Precision::fp32, 4e12);
  fma.unit = Unit::simt;
  r.ceilings.push_back(fma);
  const Params p = {{"n", 1 << 20}, {"chunks", 16}, {"iters", 100}};
  auto measured = [&](overlap::Form f, double seconds) {
    BenchmarkResult b = declare(overlap::overlap_variant(f), p);
    b.verification.ok = true;
    b.verification.checked = 1;
    b.measurement = measurement_of({seconds, seconds, seconds});
    return b;
  };
  r.benchmarks = {measured(overlap::Form::serial, 260e-6), measured(overlap::Form::streams4, 100e-6)};
  apply_model(r);
  const BenchmarkResult& serial = r.benchmarks[0];
  const BenchmarkResult& piped = r.benchmarks[1];
  ASSERT_TRUE(serial.placement && piped.placement) << serial.warnings.size() << piped.warnings.size();
  const double pass = 4.0 * (1 << 20) / 50e9;
  EXPECT_NEAR(serial.placement->model_time_s, 3 * pass, 1e-12);
  EXPECT_NEAR(piped.placement->model_time_s, 3 * pass / 16 + 15.0 / 16 * pass, 1e-12);
  EXPECT_EQ(piped.placement->bandwidth_ceiling, "pcie_h2d_pinned, dram_update, pcie_d2h_pinned");
  EXPECT_NE(piped.work.find("pipelined over C = chunks chunks"), std::string::npos) << piped.work;
  const auto rows = lessons(r);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].against, serial.name);
  EXPECT_EQ(rows[0].speedup, "2.60×");
  EXPECT_EQ(rows[0].predicted, "2.67×");
  // Against its passes as the serial form ran them: the copies at 83.9 us each, the kernel at what
  // the serial 260 us leaves, 92.2 us; the pipeline from those, 260 / 16 + 15/16 · 92.2 = 102.7 us,
  // over its 100 us.
  EXPECT_EQ(rows[0].roof_pct, "94.4% (overlap efficiency 0.94; 1.03 against its passes as measured)");
  // A serial form faster than its copies at their ceilings leaves its kernel no time: no such figure.
  Results fast_serial = r;
  fast_serial.benchmarks[0].measurement = measurement_of({150e-6, 150e-6, 150e-6});
  apply_model(fast_serial);
  ASSERT_EQ(lessons(fast_serial).size(), 1u);
  EXPECT_EQ(lessons(fast_serial)[0].roof_pct, "94.4% (overlap efficiency 0.94)");
  // A link that carries 80 GB/s both ways, not 100: the two copies' 8 MiB together pace the
  // pipeline at 1.25 passes a vector, and the lesson's efficiency is held to that roof.
  Results half_duplex = r;
  for (Ceiling& c : half_duplex.ceilings)
    if (c.name == "pcie_duplex_pinned") c.value = c.value_start = 80e9;
  apply_model(half_duplex);
  ASSERT_TRUE(half_duplex.benchmarks[1].placement);
  EXPECT_NEAR(half_duplex.benchmarks[1].placement->model_time_s, 3 * pass / 16 + 15.0 / 16 * 1.25 * pass, 1e-12);
  EXPECT_EQ(half_duplex.benchmarks[1].placement->bandwidth_ceiling,
            "pcie_duplex_pinned, pcie_h2d_pinned, dram_update, pcie_d2h_pinned");
}

TEST(Html, HoldsTheChartAndBothTables) {
  const std::string html = render_html(report_sample());
  EXPECT_EQ(count(html, "<svg"), 1u);
  EXPECT_EQ(count(html, "<table>"), 4u);  // ceilings, device, settings, benchmarks
  EXPECT_NE(html.find("<h2>Device</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>Test CPU</td>"), std::string::npos);
  EXPECT_NE(html.find("2.00 → 2.00 GHz"), std::string::npos);  // clock before → after
  EXPECT_EQ(count(html, "<tr class=\"failed\">"), 1u);
  EXPECT_NE(html.find("<h2>Warnings</h2>"), std::string::npos);
  // The chart is inline: every placed kernel's point carries its tooltip (name, rates, % of roof).
  EXPECT_EQ(count(html, "<g class=\"point\""), count(html, "% of roof ("));
  EXPECT_GT(count(html, "<g class=\"point\""), 0u);
}

TEST(Html, NamesTheVariantsTimedWarmInARunThatFlushed) {
  Results r = report_sample();
  r.settings["cold_cache"] = true;
  EXPECT_EQ(render_html(r).find("Timed warm"), std::string::npos);  // every measurement cold
  for (auto& b : r.benchmarks)
    if (b.measurement && b.name == "gemm/a/fp32/n:1") b.measurement->cold_cache = false;
  const std::string html = render_html(r);
  const auto at = html.find("Timed warm");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(html.find("<code>gemm/a/fp32</code>", at), std::string::npos) << html.substr(at, 300);
  EXPECT_EQ(count(html, "<code>gemm/a/fp32</code>"), 1u);
}

// How tightly the run timed what runs long enough (issue 17: IQR/median of the kernels of at
// least 50 us, target 1%): counted over the measured kernels above the floor, the widest named.
TEST(Reports, SayHowTightlyTheKernelsLongEnoughToTimeWereTimed) {
  Results r = sample_results();
  r.benchmarks = {kernel("steady", 1e9, 1e9, 0.02)};  // three equal samples: no spread
  BenchmarkResult noisy = kernel("noisy", 1e9, 1e9, 1e-3);
  noisy.measurement = measurement_of({1.0e-3, 1.1e-3, 1.2e-3, 1.3e-3});  // IQR 0.15 of 1.15 ms
  r.benchmarks.push_back(noisy);
  BenchmarkResult short_one = kernel("short", 1e9, 1e9, 10e-6);  // below the floor: not counted
  short_one.measurement = measurement_of({5e-6, 10e-6, 40e-6});
  r.benchmarks.push_back(short_one);
  BenchmarkResult failed = kernel("failed", 1e9, 1e9, 1.0);
  failed.measurement.reset();
  r.benchmarks.push_back(failed);
  const auto s = spread_of(r);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kernels, 2u);
  EXPECT_EQ(s->within, 1u);
  EXPECT_NEAR(s->widest_rel_iqr, 0.15e-3 / 1.15e-3, 1e-12);
  EXPECT_EQ(s->widest, "gemm/noisy/fp32/n:1");
  const std::string text =
      "of the 2 kernels with a median of at least 50.0 us, 1 has an IQR within 1.0% of the median (median 6.52%; "
      "widest 13.0%, gemm/noisy/fp32/n:1)";
  EXPECT_EQ(spread_text(*s), text);
  EXPECT_NE(render_markdown(r).find("**Spread**: " + md_cell(text)), std::string::npos) << render_markdown(r);
  EXPECT_NE(render_html(r).find("Spread: " + text), std::string::npos);
  // Nothing long enough: no line rather than a line about nothing.
  r.benchmarks = {short_one, failed};
  EXPECT_FALSE(spread_of(r).has_value());
  EXPECT_EQ(render_markdown(r).find("**Spread**"), std::string::npos);
}

// A GPU's datasheet peak is at its boost clock, the theoretical one at the clock measured around
// the samples: where a ceiling has both, the tables give both ratios, datasheet first.
TEST(Reports, ACeilingWithADatasheetAndATheoreticalPeakIsGivenAsARatioToEach) {
  Results r = report_sample();
  Ceiling& fma = *std::find_if(r.ceilings.begin(), r.ceilings.end(), [](const Ceiling& c) { return c.name == "fp32_fma"; });
  fma.datasheet = ReferenceValue{1.25e12, "a datasheet"};  // measured 1 TFLOP/s
  EXPECT_EQ(ceiling_reference(fma).value, "1.25 TFLOP/s (datasheet)");
  EXPECT_EQ(ceiling_reference(fma).ratio, "80.0%");
  fma.theoretical = ReferenceValue{1.05e12, "SMs x 256 FLOP/clock/SM x the measured clock"};
  EXPECT_EQ(ceiling_reference(fma).value, "1.25 TFLOP/s (datasheet), 1.05 TFLOP/s (theoretical)");
  EXPECT_EQ(ceiling_reference(fma).ratio, "80.0%, 95.2%");
  EXPECT_NE(render_markdown(r).find("| 1.25 TFLOP/s (datasheet), 1.05 TFLOP/s (theoretical) | 80.0%, 95.2% |"),
            std::string::npos)
      << render_markdown(r);
  fma.datasheet.reset();
  EXPECT_EQ(ceiling_reference(fma).ratio, "95.2%");
  fma.theoretical.reset();
  EXPECT_TRUE(ceiling_reference(fma).value.empty());
  EXPECT_TRUE(ceiling_reference(fma).ratio.empty());
}

// The copy ceiling beside the vendor's copy measured in the same run, in every report; nothing
// where the run has no vendor routine, or not the ceiling it is the reference for.
TEST(Reports, GiveTheSuitesOwnCeilingAsARatioToTheVendorsRoutine) {
  Results r = report_sample();  // dram_copy at 80 GB/s
  EXPECT_TRUE(vendor_reference_lines(r).empty());
  EXPECT_EQ(render_markdown(r).find("vendor's own"), std::string::npos);
  Ceiling memcpy_ceiling = bandwidth_ceiling("dram_memcpy", 64e9);
  memcpy_ceiling.reference_for = "dram_copy";
  r.ceilings.push_back(memcpy_ceiling);
  const auto lines = vendor_reference_lines(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "DRAM copy 80.0 GB/s is 1.25× DRAM memcpy 64.0 GB/s");
  EXPECT_NE(render_markdown(r).find("**Against the vendor's own routines**, measured in the same run: " + lines[0]),
            std::string::npos)
      << render_markdown(r);
  EXPECT_NE(render_html(r).find("in the same run: " + lines[0]), std::string::npos);
  EXPECT_NE(render_console(r, false).find("against the vendor's own: " + lines[0]), std::string::npos);
  // A rate of another unit is no reference for a bandwidth: no ratio of unlike rates.
  Results unlike = r;
  unlike.ceilings.back().value_unit = "FLOP/s";
  EXPECT_TRUE(vendor_reference_lines(unlike).empty());
  // Another form of the copy (named after it with a suffix) gets its ratio too; a ceiling that
  // merely starts with the same letters does not.
  Results forms = r;
  forms.ceilings.push_back(bandwidth_ceiling("dram_copy_bulk", 72e9));
  forms.ceilings.push_back(bandwidth_ceiling("dram_copyist", 90e9));
  const auto both = vendor_reference_lines(forms);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0], lines[0]);
  EXPECT_NE(both[1].find("72.0 GB/s is 1.12× DRAM memcpy 64.0 GB/s"), std::string::npos) << both[1];
  // The copy ceiling skipped: the vendor's stands alone, with no ratio to show.
  r.ceilings.erase(std::find_if(r.ceilings.begin(), r.ceilings.end(),
                                [](const Ceiling& c) { return c.name == "dram_copy"; }));
  EXPECT_TRUE(vendor_reference_lines(r).empty());
}

TEST(Console, PrintsEveryBenchmarkWithItsStatus) {
  const std::string out = render_console(report_sample(), /*verbose=*/true);
  EXPECT_NE(out.find("gemm/a/fp32/n:1"), std::string::npos);
  EXPECT_NE(out.find("FAILED: verification failed"), std::string::npos);
  EXPECT_NE(out.find("warning: gemm/fast|pipe/fp32/n:1"), std::string::npos);
}

TEST(Console, WarningsAreFoldedIntoACountPerKindUnlessVerbose) {
  Results r = report_sample();
  for (int i = 0; i < 30; ++i)
    r.benchmarks[0].warnings.push_back("noise: stopped at the 5.0 s budget with an IQR of 3% of the median");
  r.ceilings[0].warnings.push_back("end pass: noise: stopped at the 5.0 s budget");
  r.ceilings[0].warnings.push_back("roofline: measured +64% at the end of the run against its start");
  const std::string folded = render_console(r);
  EXPECT_EQ(folded.find("warning: "), std::string::npos) << folded;  // no line per warning
  EXPECT_NE(folded.find("  31 noise     sampling stopped with an IQR above the noise target"), std::string::npos) << folded;
  EXPECT_NE(folded.find("roofline  a ceiling that moved more than 10%"), std::string::npos) << folded;
  EXPECT_NE(folded.find("all of them here with --verbose"), std::string::npos) << folded;
  const std::string all = render_console(r, true);
  std::size_t lines = 0;
  for (std::size_t at = all.find("warning: "); at != std::string::npos; at = all.find("warning: ", at + 1)) ++lines;
  EXPECT_GE(lines, 32u);
}

TEST(Reports, EveryReportSaysWhichBenchmarksWereLeftOutAndWhy) {
  Results r = report_sample();
  r.not_run = {{"gemm/wgmma/bf16", "built for sm_90a only; this GPU is sm_80"}};
  const std::string line = "gemm/wgmma/bf16";
  const std::string why = "not run: built for sm_90a only; this GPU is sm_80";
  const std::string out = render_console(r, true);
  EXPECT_NE(out.find("warning: " + line + ": " + why), std::string::npos) << out;
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("- `" + line + "`: " + why), std::string::npos) << md;
  const std::string html = render_html(r);
  EXPECT_NE(html.find(why), std::string::npos);
}

TEST(Reports, AllThreeFilesAreRendered) {
  const auto files = render_reports(report_sample());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].first, "roofline.svg");
  EXPECT_EQ(files[1].first, "report.html");
  EXPECT_EQ(files[2].first, "summary.md");
}

namespace {
BenchmarkResult gemm_at(const std::string& variant, std::int64_t n, double seconds,
                        Precision p = Precision::fp32) {
  BenchmarkResult b = roofbench::testing::kernel(variant, 2.0 * n * n * n, 12.0 * n * n, seconds, p);
  b.params = {{"M", n}, {"N", n}, {"K", n}};
  b.name = "gemm/" + variant + "/" + to_string(p) + "/" + params_to_string(b.params);
  b.vendor_reference = variant == "openblas";  // as the OpenBLAS variant declares itself
  return b;
}
}  // namespace

TEST(Ladder, RatesAndRatiosToTheReferenceAtTheSameSize) {
  Results r = sample_results();
  // 2·100³ = 2e6 flops: 1 ms is 2 GFLOP/s, 0.5 ms 4 GFLOP/s; 2·200³ = 1.6e7 flops in 2 ms is 8 GFLOP/s.
  r.benchmarks = {gemm_at("naive", 100, 1e-3), gemm_at("openblas", 100, 0.5e-3), gemm_at("naive", 200, 2e-3),
                  gemm_at("openblas", 200, 1e-3)};
  const LadderTable t = gemm_ladder(r);
  EXPECT_EQ(t.reference, "openblas");
  ASSERT_EQ(t.sizes, (std::vector<std::string>{"100³", "200³"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].variant, "naive");
  EXPECT_EQ(t.rows[0].cells, (std::vector<std::string>{"2.00 GFLOP/s (0.50×)", "8.00 GFLOP/s (0.50×)"}));
  EXPECT_EQ(t.rows[1].cells[1], "16.0 GFLOP/s (1.00×)");
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("| naive | fp32 | simd | 2.00 GFLOP/s (0.50×) | 8.00 GFLOP/s (0.50×) |"), std::string::npos) << md;
  EXPECT_NE(render_html(r).find("<h2>GEMM ladder</h2>"), std::string::npos);
}

TEST(Ladder, ComparesOnlyLikeWithLikeAndNeedsAVerifiedReference) {
  Results r = sample_results();
  BenchmarkResult half = gemm_at("naive", 100, 1e-3, Precision::fp16);
  half.math = Precision::fp32;
  BenchmarkResult failed_ref = gemm_at("openblas", 100, 1e-3);
  failed_ref.error = "verification failed: C[0,0]";
  failed_ref.measurement.reset();
  r.benchmarks = {gemm_at("naive", 100, 1e-3), half, failed_ref};
  EXPECT_TRUE(gemm_ladder(r).rows.empty());  // no verified reference: no table at all
  EXPECT_EQ(render_markdown_ladder(r), "");
  r.benchmarks.push_back(gemm_at("openblas", 100, 0.25e-3));
  const LadderTable t = gemm_ladder(r);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0].cells[0], "2.00 GFLOP/s (0.25×)");
  EXPECT_EQ(t.rows[1].precision, "fp16");
  EXPECT_EQ(t.rows[1].unit, "simd (fp32 math)");
  EXPECT_EQ(t.rows[1].cells[0], "2.00 GFLOP/s");  // no FP16 reference ran: a rate, no ratio
}

TEST(Markdown, KernelTraceShowsWhenCountersCouldNotBeRead) {
  // No permission to read counters: every benchmark's counters have an error, yet CUPTI's
  // Activity API traced the kernels, and the reports keep that cross-check.
  Results r = sample_results();
  r.counters = {
      {"requested", true}, {"available", false}, {"reason", "no permission to read GPU performance counters"}};
  r.benchmarks = {roofbench::testing::kernel("a", 2e9, 1e9, 0.01)};
  Counters c;
  c.error = "not collected: no permission to read GPU performance counters";
  c.trace = KernelTrace{{9.5e-3, 9.6e-3, 9.4e-3}, {9.5e-3, 9.6e-3, 9.4e-3}, {"k"}, ""};
  r.benchmarks[0].counters = c;
  apply_model(r);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("**Counters**: none (no permission"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| `gemm/a/fp32/n:1` | — | not collected: no permission to read GPU performance counters | | | | | | "
              "| | | | | 9.50 ms (events +500 us) |"),
      std::string::npos)
      << md;
  const std::string html = render_html(r);
  EXPECT_NE(html.find("<td colspan=\"11\">not collected: no permission"), std::string::npos) << html;
  EXPECT_NE(html.find("9.50 ms (events +500 us)"), std::string::npos);
  EXPECT_NE(html.find("Kernel trace"), std::string::npos);
  EXPECT_EQ(html.find("Hierarchical roofline"), std::string::npos);  // no counters, no chart
  const auto files = render_reports(r);
  EXPECT_TRUE(std::none_of(files.begin(), files.end(), [](const auto& f) { return f.first == "hierarchy.svg"; }));
}

TEST(Markdown, SaysWhereTheBenchmarksTimeOutsideTheirSamplesWent) {
  Results r = sample_results();
  r.benchmarks = {roofbench::testing::kernel("a", 2e9, 1e9, 0.01), roofbench::testing::kernel("b", 1e9, 1e9, 0.01),
                  roofbench::testing::kernel("c", 1e9, 1e9, 0.01)};
  apply_model(r);
  EXPECT_EQ(host_time_line(r), "");  // nothing recorded (files written before host_s): no line
  EXPECT_EQ(render_markdown(r).find("host time"), std::string::npos);
  r.benchmarks[0].host_s = {{"make", 0.1}, {"prepare", 1.0}, {"verify", 3.0}, {"sample", 2.0}};
  r.benchmarks[1].host_s = {{"make", 0.1}, {"prepare", 0.5}, {"verify", 0.2}, {"sample", 4.0}, {"after", 1.5}};
  r.benchmarks[2].host_s = {{"make", 0.1}, {"prepare", 0.2}, {"verify", 0.1}, {"sample", 1.0}};
  const std::string line = host_time_line(r, 2);
  EXPECT_EQ(
      line,
      "host time of the benchmarks' steps: sampling 7.00 s, verifying 3.30 s, preparing 1.70 s, making 300 ms, "
      "counters 1.50 s; the most outside sampling: gemm/a/fp32/n:1 (verify 3.00 s), gemm/b/fp32/n:1 (after 1.50 s)");
  EXPECT_NE(render_markdown(r).find(line), std::string::npos);
  EXPECT_NE(render_html(r).find("host time of the benchmarks&apos; steps: sampling 7.00 s"), std::string::npos);
  // Where the sampling went, summed over the benchmarks that say, the largest part first.
  r.benchmarks[0].measurement->sampling_s = {{"runs", 0.5}, {"flush", 1.0}, {"readings", 0.25}};
  r.benchmarks[1].measurement->sampling_s = {{"runs", 1.0}, {"energy", 1.2}, {"warmup", 0.01}};
  const std::string split = host_time_line(r, 2);
  EXPECT_NE(split.find("counters 1.50 s; of sampling (" +
                       std::to_string(r.benchmarks[0].measurement->samples_s.size() +
                                      r.benchmarks[1].measurement->samples_s.size()) +
                       " samples): runs 1.50 s, energy passes 1.20 s, flushes 1.00 s, readings 250 ms, warm-ups 10.0 ms; "
                       "the most outside sampling:"),
            std::string::npos)
      << split;
}

TEST(Markdown, ShowsTheWaveModelOfFixedTileKernels) {
  Results r = sample_results();
  BenchmarkResult b = gemm_at("wmma", 1536, 1e-3);
  b.waves = wave_model(128, 128, 1536, 1536, 1, 132);
  r.benchmarks = {b};
  EXPECT_NE(render_markdown(r).find("| 1.09 (55%) |"), std::string::npos) << render_markdown(r);
  EXPECT_NE(render_html(r).find("1.09 (55%)"), std::string::npos);
}

TEST(Markdown, CountersTableShowsMeasuredBesideDeclaredAndEachLevelsIntensity) {
  Results r = sample_results();
  r.benchmarks = {roofbench::testing::kernel("a", 2e9, 1e9, 0.01), roofbench::testing::kernel("b", 1e9, 1e9, 0.01)};
  r.benchmarks[0].counters = roofbench::testing::counters_of(2e9, 1.05e9, 4e9, 8e9);
  Counters failed;
  failed.error = "another CUPTI client holds the profiler";
  r.benchmarks[1].counters = failed;
  apply_model(r);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("**Counters**"), std::string::npos) << md;
  // FLOPs 1.00× declared, HBM 1.05×, FLOP/B at L1, L2 and HBM: 0.25, 0.5, 1.90.
  EXPECT_NE(md.find("| `gemm/a/fp32/n:1` | 2 | 2.00 G | 1.00× | 1.05 GB | 1.05× | 4.00 GB | 8.00 GB | 0.25 | 0.50 | 1.90 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("another CUPTI client holds the profiler"), std::string::npos);
  const auto files = render_reports(r);
  EXPECT_TRUE(std::any_of(files.begin(), files.end(), [](const auto& f) { return f.first == "hierarchy.svg"; }));
  EXPECT_NE(render_html(r).find("Hierarchical roofline"), std::string::npos);

  // The kernels' own span from CUPTI's trace, and how far the event median (10 ms) is from it.
  EXPECT_NE(md.find("| — |\n"), std::string::npos) << md;  // no trace taken
  r.benchmarks[0].counters->trace = KernelTrace{{9.5e-3, 9.6e-3, 9.4e-3}, {9.5e-3, 9.6e-3, 9.4e-3}, {"k"}, ""};
  const std::string traced = render_markdown(r);
  EXPECT_NE(traced.find("| 9.50 ms (events +500 us) |"), std::string::npos) << traced;
  EXPECT_NE(render_html(r).find("9.50 ms (events +500 us)"), std::string::npos);
  // A chain traced as the host launched it: 55 us of gaps in a 245 us span (the sin/cos chain on an
  // H200 under the Activity API). The kernels' own time is the measure; the events (held, 197 us)
  // stand beside it, not beside the span.
  r.benchmarks[0].counters->trace = KernelTrace{{245e-6, 250e-6, 240e-6}, {190e-6, 189e-6, 191e-6}, {"k"}, ""};
  r.benchmarks[0].measurement->stats.median = 197e-6;
  r.benchmarks[0].measurement->samples_s = {197e-6};
  const std::string chain = render_markdown(r);
  EXPECT_NE(chain.find("| 190 us busy, a 245 us span (events +7.00 us) |"), std::string::npos) << chain;

  // A run whose counters were unavailable says why, and has no hierarchical chart.
  Results none = sample_results();
  none.counters = {{"requested", true}, {"available", false}, {"reason", "no permission to read GPU performance counters"}};
  EXPECT_NE(render_markdown(none).find("**Counters**: none (no permission"), std::string::npos);
  const auto plain = render_reports(none);
  EXPECT_TRUE(std::none_of(plain.begin(), plain.end(), [](const auto& f) { return f.first == "hierarchy.svg"; }));
}

TEST(ProvenanceLine, SaysHowLongTheRunTookWhenTheFileKnows) {
  Results r = sample_results();
  r.provenance.erase("wall_s");
  EXPECT_EQ(provenance_line(r).find(" · run "), std::string::npos) << provenance_line(r);
  r.provenance["wall_s"] = 53.1;
  EXPECT_NE(provenance_line(r).find(" · run 53 s"), std::string::npos) << provenance_line(r);
  r.provenance["wall_s"] = "soon";  // not a number: left out, not thrown
  EXPECT_EQ(provenance_line(r).find(" · run "), std::string::npos) << provenance_line(r);
}

// What the host took from the run (provenance.host_contention), in every report's provenance
// line where it took 1% or more either way; nothing said below that, or for a file without it.
TEST(ProvenanceLine, SaysHowMuchTheHostTookWhereItTookAny) {
  Results r = sample_results();
  r.provenance["wall_s"] = 20.0;
  r.provenance.erase("host_contention");
  EXPECT_EQ(provenance_line(r).find("the host took"), std::string::npos) << provenance_line(r);
  r.provenance["host_contention"] = {{"steal_s", 0.1},        {"steal_share", 0.002}, {"throttled_s", 12.0},
                                     {"throttled_share", 0.3}, {"throttled_periods", 700}, {"quota_cpus", 1.4},
                                     {"cgroup_source", "/sys/fs/cgroup/cpu/cpu.stat"}};
  EXPECT_NE(provenance_line(r).find(" · run 20 s, 4.00 s of it in timed samples (5.0×) · the host took 30% (CPU quota)"),
            std::string::npos)
      << provenance_line(r);
  EXPECT_NE(render_markdown(r).find("the host took 30% (CPU quota)"), std::string::npos);
  r.provenance["host_contention"]["throttled_share"] = 0.004;
  EXPECT_EQ(provenance_line(r).find("the host took"), std::string::npos) << provenance_line(r);
  // A merged file: each part's, where the host took from it.
  Results merged = r;
  merged.provenance.erase("host_contention");
  merged.provenance["merged_from"] = {{{"path", "a"}, {"wall_s", 5.0}, {"host_contention", {{"steal_share", 0.0}}}},
                                      {{"path", "b"}, {"wall_s", 5.0}, {"host_contention", {{"steal_share", 0.12}}}}};
  EXPECT_NE(provenance_line(merged).find(" · part 2: the host took 12% (steal)"), std::string::npos)
      << provenance_line(merged);
  EXPECT_EQ(provenance_line(merged).find("part 1:"), std::string::npos) << provenance_line(merged);
}

// The suite's own cost beside the time it measured: the run's wall time against the seconds
// inside its timed samples, the ceilings' only where the run measured them, and a merged file's
// parts added up.
TEST(ProvenanceLine, SaysHowMuchOfTheRunWasInTimedSamples) {
  Results r = sample_results();  // four ceilings of one 1 s sample each
  r.benchmarks = {kernel("a", 1e9, 1e9, 2.0), kernel("b", 1e9, 1e9, 0.5)};  // three samples each: 7.5 s
  r.benchmarks.push_back(kernel("failed", 1e9, 1e9, 1.0));
  r.benchmarks.back().measurement.reset();  // failed before it was timed
  r.ceilings[0].measurement_end = measurement_of({1.0, 1.5});  // the end pass: 2.5 s more
  r.provenance["wall_s"] = 42.0;
  auto t = run_time(r);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->wall_s, 42.0);
  EXPECT_DOUBLE_EQ(t->timed_s, 7.5 + 4.0 + 2.5);
  EXPECT_EQ(t->parts, 1u);
  EXPECT_NE(provenance_line(r).find(" · run 42 s, 14.0 s of it in timed samples (3.0×)"), std::string::npos)
      << provenance_line(r);

  // Energy passes and sustained holds are measuring, outside the timed samples: said beside them,
  // with the ratio over both; the ratio over the samples alone is the same.
  Results passes = r;
  passes.benchmarks[0].measurement->energy_run = Measurement::EnergyRun{"pass", 1.0, 300.0, 0.9, 1000};
  passes.ceilings[1].measurement_sustained = measurement_of({1.0});
  passes.ceilings[1].measurement_sustained->held_s = 5.0;  // read across: its energy_run is the hold's
  passes.ceilings[1].measurement_sustained->energy_run = Measurement::EnergyRun{"hold", 5.0, 4000.0, 5.0, 6000};
  passes.ceilings[2].measurement_sustained = measurement_of({1.0});
  passes.ceilings[2].measurement_sustained->held_s = 1.0;  // no counter to read across it: no energy_run
  EXPECT_DOUBLE_EQ(run_time(passes)->passes_s, 7.0);
  EXPECT_DOUBLE_EQ(run_time(passes)->timed_s, 14.0);
  EXPECT_NE(provenance_line(passes).find(" · run 42 s, 14.0 s of it in timed samples (3.0×), 7.00 s in energy passes "
                                         "and sustained holds (2.0× the two)"),
            std::string::npos)
      << provenance_line(passes);

  // Ceilings taken --ceilings-from another file were timed by that file's run, not this one.
  Results borrowed = r;
  borrowed.settings["ceilings_from"] = {{"path", "ceilings/results.json"}};
  EXPECT_DOUBLE_EQ(run_time(borrowed)->timed_s, 7.5);
  EXPECT_NE(provenance_line(borrowed).find(" · run 42 s, 7.50 s of it in timed samples (5.6×)"), std::string::npos)
      << provenance_line(borrowed);

  // Merged: the parts' wall times add up; the ceilings count when a part measured them.
  Results merged = r;
  merged.provenance.erase("wall_s");
  merged.provenance["merged_from"] = {
      {{"path", "ceilings"}, {"settings", {{"quick", true}}}, {"wall_s", 10.0}},
      {{"path", "gemm"}, {"settings", {{"ceilings_from", {{"path", "ceilings"}}}}}, {"wall_s", 32.0}}};
  EXPECT_DOUBLE_EQ(run_time(merged)->wall_s, 42.0);
  EXPECT_DOUBLE_EQ(run_time(merged)->timed_s, 14.0);
  EXPECT_NE(provenance_line(merged).find(" · run 42 s in 2 parts, 14.0 s of it in timed samples (3.0×)"),
            std::string::npos)
      << provenance_line(merged);
  merged.provenance["merged_from"][0]["settings"]["ceilings_from"] = {{"path", "elsewhere"}};
  EXPECT_DOUBLE_EQ(run_time(merged)->timed_s, 7.5);
  // A part that does not say how long it ran leaves the whole figure out, rather than a sum short of it.
  merged.provenance["merged_from"][1].erase("wall_s");
  EXPECT_FALSE(run_time(merged).has_value());
  EXPECT_EQ(provenance_line(merged).find(" · run "), std::string::npos) << provenance_line(merged);

  // A run with nothing timed says how long it ran and no ratio.
  Results nothing = sample_results();
  nothing.ceilings.clear();
  nothing.provenance["wall_s"] = 3.0;
  EXPECT_NE(provenance_line(nothing).find(" · run 3 s"), std::string::npos) << provenance_line(nothing);
  EXPECT_EQ(provenance_line(nothing).find("timed samples"), std::string::npos) << provenance_line(nothing);
}
