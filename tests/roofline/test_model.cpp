#include <gtest/gtest.h>

#include <functional>

#include "bench/cpu_info.h"
#include "roofline/ceilings.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

// Roofs of sample_results(): BW = 100 GB/s (the best of update 100 and copy 80), FP32 = 1 TFLOP/s,
// FP64 = 0.5 TFLOP/s. Ridge points: FP32 at 10 FLOP/B, FP64 at 5 FLOP/B.

TEST(Model, RoofsAreTheBestMeasuredCeilingOfEachKind) {
  Results r = sample_results();
  // A second, slower ceiling of one precision and unit (a GPU's mma.sync beside its wgmma) is
  // not the roof, whichever comes first.
  r.ceilings.insert(r.ceilings.begin(), compute_ceiling("fp32_slow_first", Precision::fp32, 0.4e12));
  r.ceilings.push_back(compute_ceiling("fp32_slow_last", Precision::fp32, 0.5e12));
  const Roofs roofs = select_roofs(r.ceilings);
  ASSERT_EQ(roofs.bandwidth.count(Level::dram), 1u);
  EXPECT_EQ(roofs.bandwidth.at(Level::dram)->name, "dram_update");
  EXPECT_EQ(roofs.compute.at({Precision::fp32, Unit::simd})->name, "fp32_fma");
}

TEST(Model, RidgePointIsPeakOverBandwidth) {
  Results r = sample_results();
  apply_model(r);
  ASSERT_EQ(r.ridge_points.size(), 2u);
  for (const auto& rp : r.ridge_points) {
    if (rp.compute_ceiling == "fp32_fma") EXPECT_DOUBLE_EQ(rp.intensity, 10.0);
    if (rp.compute_ceiling == "fp64_fma") EXPECT_DOUBLE_EQ(rp.intensity, 5.0);
    EXPECT_EQ(rp.bandwidth_ceiling, "dram_update");
  }
}

TEST(Model, MemoryBoundKernelLeftOfTheRidge) {
  // I = 2e9 / 1e9 = 2 FLOP/B; attainable = min(1e12, 2 * 100e9) = 200 GFLOP/s.
  // Achieved 2e9 flops in 20 ms = 100 GFLOP/s = 50% of its roof.
  Results r = sample_results();
  r.benchmarks = {kernel("a", 2e9, 1e9, 0.02)};
  apply_model(r);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_DOUBLE_EQ(*p.intensity, 2.0);
  EXPECT_DOUBLE_EQ(*p.attainable_flop_per_s, 200e9);
  EXPECT_DOUBLE_EQ(p.flop_per_s, 100e9);
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
  EXPECT_EQ(p.bound, "memory");
  EXPECT_EQ(p.bandwidth_ceiling, "dram_update");
  EXPECT_TRUE(r.benchmarks[0].warnings.empty());
}

TEST(Model, ComputeBoundKernelRightOfTheRidge) {
  // I = 4e10 / 1e9 = 40 FLOP/B > 10; attainable = 1 TFLOP/s; 4e10 flops in 0.1 s = 400 GFLOP/s.
  Results r = sample_results();
  r.benchmarks = {kernel("b", 4e10, 1e9, 0.1)};
  apply_model(r);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_EQ(p.bound, "compute");
  EXPECT_EQ(p.compute_ceiling, "fp32_fma");
  EXPECT_DOUBLE_EQ(*p.attainable_flop_per_s, 1e12);
  EXPECT_DOUBLE_EQ(p.roof_pct, 40.0);
}

TEST(Model, EachPrecisionUsesItsOwnComputeRoof) {
  // FP64 at I = 40: attainable is the FP64 roof, 0.5 TFLOP/s; 4e10 / 0.1 s = 80% of it.
  Results r = sample_results();
  r.benchmarks = {kernel("c", 4e10, 1e9, 0.1, Precision::fp64)};
  apply_model(r);
  EXPECT_EQ(r.benchmarks[0].placement->compute_ceiling, "fp64_fma");
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->roof_pct, 80.0);
}

TEST(Model, SixteenBitInputsWithFp32MathUseTheFp32Roof) {
  // FP16 inputs accumulated in FP32 on the FP32 pipe: the FP32 roof (1 TFLOP/s), not an FP16 one
  // (there is none here, so without `math` the kernel could not be placed at all).
  Results r = sample_results();
  BenchmarkResult b = kernel("naive", 4e11, 1e9, 1.0, Precision::fp16);
  b.math = Precision::fp32;
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  EXPECT_EQ(r.benchmarks[0].placement->compute_ceiling, "fp32_fma");
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->roof_pct, 40.0);
  r.benchmarks[0].math.reset();
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
  EXPECT_NE(r.benchmarks[0].warnings.at(0).find("no fp16 simd compute ceiling"), std::string::npos);
}

TEST(WaveModel, MatchesTheH200TableForOneBlockPerSm) {
  // ../shared/reference/kernels.md §6: 128x128 tiles on 132 SMs.
  const WaveModel a = wave_model(128, 128, 1408, 1408, 1, 132);
  EXPECT_EQ(a.tiles, 121);
  EXPECT_NEAR(a.waves, 121.0 / 132, 1e-12);
  EXPECT_NEAR(a.efficiency, 121.0 / 132, 1e-12);
  const WaveModel b = wave_model(128, 128, 1536, 1536, 1, 132);
  EXPECT_EQ(b.tiles, 144);
  EXPECT_NEAR(b.efficiency, 144.0 / 264, 1e-12);  // two waves, the second 12 of 132 full
  const WaveModel c = wave_model(128, 256, 2304, 2304, 1, 132);
  EXPECT_EQ(c.tiles, 162);
  EXPECT_NEAR(c.efficiency, 162.0 / 264, 1e-12);
}

TEST(WaveModel, CountsPartialTilesAndResidentBlocks) {
  // 4097 x 100 with 128x128 tiles: 33 x 1 tiles; two resident blocks per SM on 10 SMs = 20 slots.
  const WaveModel w = wave_model(128, 128, 4097, 100, 2, 10);
  EXPECT_EQ(w.tiles, 33);
  EXPECT_DOUBLE_EQ(w.waves, 33.0 / 20);
  EXPECT_DOUBLE_EQ(w.efficiency, 33.0 / 40);
  EXPECT_THROW(wave_model(0, 128, 1, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(wave_model(128, 128, 1, 1, 0, 132), std::invalid_argument);
}

TEST(Model, ExactlyAtTheRidgeCountsAsComputeBound) {
  Results r = sample_results();
  r.benchmarks = {kernel("d", 1e10, 1e9, 0.1)};  // I = 10 = ridge
  apply_model(r);
  EXPECT_EQ(r.benchmarks[0].placement->bound, "compute");
  EXPECT_DOUBLE_EQ(*r.benchmarks[0].placement->attainable_flop_per_s, 1e12);
}

TEST(Model, DataMovementOnlyKernelIsPlacedAgainstBandwidth) {
  Results r = sample_results();
  r.benchmarks = {kernel("copy", 0, 8e9, 0.1)};  // 80 GB/s of a 100 GB/s roof
  apply_model(r);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_FALSE(p.intensity.has_value());
  EXPECT_EQ(p.bound, "memory");
  EXPECT_DOUBLE_EQ(p.roof_pct, 80.0);
}

// The plausibility gate: above the roof by more than max(3%, the run's own noise) is IMPLAUSIBLE;
// above it by less, a warning. Samples and ceilings with no spread here: the 3% floor decides.
TEST(Model, AKernelAboveItsRoofBeyondTheNoiseIsImplausibleAndWithinItWarned) {
  Results r = sample_results();
  r.benchmarks = {kernel("fast", 2e9, 1e9, 0.0089),    // 112 GB/s on a 100 GB/s roof: 112%
                  kernel("close", 2e9, 1e9, 0.0098),   // 102%: within the 3% floor
                  kernel("over", 2e9, 1e9, 0.00965)};  // 103.6%: past it, not by more than the noise
  r.benchmarks[1].name = "gemm/close/fp32/n:1";
  r.benchmarks[2].measurement->stats.q1 = 0.0092;  // an IQR of 4.8% of the 9.65 ms median: the allowance
  r.benchmarks[2].measurement->stats.q3 = 0.0092 + 0.048 * 0.00965;
  apply_model(r);
  const BenchmarkResult &fast = r.benchmarks[0], &close = r.benchmarks[1], &over = r.benchmarks[2];
  ASSERT_TRUE(fast.implausible());
  ASSERT_EQ(fast.warnings.size(), 1u);
  EXPECT_EQ(fast.warnings[0].rfind(kImplausibleKind, 0), 0u) << fast.warnings[0];
  EXPECT_NE(fast.warnings[0].find("±3.0%"), std::string::npos) << fast.warnings[0];
  EXPECT_FALSE(close.implausible());
  EXPECT_TRUE(close.warnings.empty());
  EXPECT_FALSE(over.implausible());
  EXPECT_NEAR(over.placement->noise, 0.048, 1e-9);
  ASSERT_EQ(over.warnings.size(), 1u);
  EXPECT_NE(over.warnings[0].find("above it by less than the run's own noise"), std::string::npos) << over.warnings[0];
  // The roof it passed is flagged only where the kernel's work is believed: a verified kernel,
  // not ten times over it.
  bool flagged = false;
  for (const auto& c : r.ceilings)
    for (const auto& w : c.warnings)
      flagged |= c.name == "dram_update" && w.find("not an upper bound") != std::string::npos;
  EXPECT_TRUE(flagged);
}

// Timed warm, a kernel's bytes may come from a cache: its DRAM roof is no upper bound, and only the
// fastest roof of the levels inside it may refuse it. Cold, the same time is refused.
TEST(Model, AWarmKernelIsRefusedOnlyAboveTheFastestRoofOfTheCachesItsBytesMayComeFrom) {
  Results r = sample_results();  // DRAM: update 100 GB/s, copy 80 GB/s
  Ceiling l3 = bandwidth_ceiling("l3_read", 60e9);  // a cache slower than DRAM's best (a VM's L3)
  l3.level = Level::l3;
  Ceiling l1 = bandwidth_ceiling("l1_read", 300e9);
  l1.level = Level::l1;
  r.ceilings.push_back(l3);
  r.ceilings.push_back(l1);
  r.benchmarks = {kernel("warm", 2e9, 1e9, 0.005),     // 200 GB/s: 200% of DRAM's roof, 67% of L1's
                  kernel("cold", 2e9, 1e9, 0.005),     // the same time, flushed before each sample
                  kernel("faster", 2e9, 1e9, 0.0025)};  // 400 GB/s warm: above every roof
  r.benchmarks[1].name = "gemm/cold/fp32/n:1";
  r.benchmarks[0].measurement->cold_cache = false;
  r.benchmarks[2].measurement->cold_cache = false;
  apply_model(r);
  const BenchmarkResult &warm = r.benchmarks[0], &cold = r.benchmarks[1], &faster = r.benchmarks[2];
  EXPECT_DOUBLE_EQ(warm.placement->roof_pct, 200.0);  // still read against the level it declares
  EXPECT_EQ(warm.placement->bandwidth_ceiling, "dram_update");
  EXPECT_FALSE(warm.implausible());
  ASSERT_EQ(warm.warnings.size(), 1u);
  EXPECT_NE(warm.warnings[0].find("timed warm"), std::string::npos) << warm.warnings[0];
  EXPECT_NE(warm.warnings[0].find("l1_read, it is at 67%"), std::string::npos) << warm.warnings[0];
  EXPECT_TRUE(cold.implausible());
  EXPECT_TRUE(faster.implausible());
  // A pass's own DRAM ceiling is a cache's too when warm; a link is the link whatever is cached.
  Roofs roofs = select_roofs(r.ceilings);
  const Roofs w = warm_roofs(roofs, Level::dram);
  EXPECT_EQ(w.bandwidth.at(Level::dram)->name, "l1_read");
  EXPECT_EQ(w.bandwidth.at(Level::l3)->name, "l1_read");
  EXPECT_EQ(w.bandwidth_by_name.at("dram_copy")->name, "l1_read");
  r.ceilings.push_back(pcie_ceiling("pcie_h2d", 20e9));
  roofs = select_roofs(r.ceilings);
  EXPECT_EQ(warm_roofs(roofs, Level::dram).bandwidth.at(Level::pcie)->name, "pcie_h2d");
  EXPECT_EQ(warm_roofs(roofs, Level::pcie).bandwidth.at(Level::dram)->name, "dram_update");
  // Declared at L1, a warm kernel has no faster cache to have come from.
  EXPECT_EQ(warm_roofs(roofs, Level::l1).bandwidth.at(Level::dram)->name, "dram_update");
}

// The roofs a run measures once more before it refuses a kernel are those the gate held it to:
// cold, the roof that binds it; warm, also the fastest roof of the caches its bytes may come from
// (a warm kernel above a DRAM roof is refused by that one, and re-measuring DRAM alone would not
// save it).
TEST(Model, TheGateCeilingsAreTheBindingRoofAndTimedWarmTheFastestCachesToo) {
  Results r = sample_results();  // DRAM: update 100 GB/s, copy 80 GB/s
  Ceiling l1 = bandwidth_ceiling("l1_read", 300e9);
  l1.level = Level::l1;
  r.ceilings.push_back(l1);
  BenchmarkResult cold = kernel("cold", 2e9, 1e9, 0.0025), warm = cold;
  warm.measurement->cold_cache = false;
  const Roofs roofs = select_roofs(r.ceilings);
  EXPECT_EQ(gate_ceilings(cold, roofs), std::vector<std::string>{"dram_update"});
  EXPECT_EQ(gate_ceilings(warm, roofs), (std::vector<std::string>{"dram_update", "l1_read"}));
  BenchmarkResult unmeasured = cold;
  unmeasured.measurement.reset();
  EXPECT_TRUE(gate_ceilings(unmeasured, roofs).empty());
}

// A roof measured once more far above its earlier passes says so: those passes ran slow, and the
// roofs measured beside them may be low too. Within the drift tolerance it says nothing.
TEST(Model, ARoofMeasuredOnceMoreFarAboveItsEarlierPassesSaysTheyRanSlow) {
  for (const double again : {1.05, 1.5}) {
    Results r = sample_results();
    Ceiling& update = r.ceilings[0];
    update.measurement_again = update.measurement;
    update.value_again = again * update.value_start;
    update.value = *update.value_again;
    apply_model(r);
    bool said = false;
    for (const auto& w : r.ceilings[0].warnings)
      said |= w.find(fmt::format("at {:.2f}x the best of its earlier passes", again)) != std::string::npos;
    EXPECT_EQ(said, again > 1 + kDriftTolerance) << again;
    apply_model(r);  // derived again when the file is read again: said once
    EXPECT_LE(std::count_if(r.ceilings[0].warnings.begin(), r.ceilings[0].warnings.end(),
                            [](const std::string& w) { return w.find("earlier passes") != std::string::npos; }),
              1);
  }
}

TEST(Model, TheNoiseIsTheKernelsSpreadPlusHowMuchFasterItsRoofsFastestSampleRan) {
  Results r = sample_results();
  Ceiling& update = r.ceilings[0];  // 100 GB/s at its start pass's median of 1 s
  update.measurement = measurement_of({1, 1, 1});
  update.measurement.stats.min = 0.8;  // its fastest sample: 125 GB/s
  update.measurement_end = measurement_of({1, 1, 1});
  update.measurement_end->stats.min = 0.98;
  update.value_end = 1.01 * update.value_start;  // the end pass is the roof: 101 GB/s
  update.value = *update.value_end;
  r.benchmarks = {kernel("fast", 2e9, 1e9, 0.0088)};  // 112% of 101 GB/s
  r.benchmarks[0].measurement->stats.q1 = 0.0084, r.benchmarks[0].measurement->stats.q3 = 0.0093;  // 10.2%
  apply_model(r);
  const double upside = 125.0 / 101.0 - 1;
  EXPECT_NEAR(r.benchmarks[0].placement->noise, 0.0009 / 0.0088 + upside, 1e-9);
  EXPECT_FALSE(r.benchmarks[0].implausible());  // within the 34% the run's noise allows
  // A steady ceiling (its fastest sample at its median) leaves the kernel's own spread alone.
  update.measurement.stats.min = 1, update.measurement_end->stats.min = 1;
  apply_model(r);
  EXPECT_NEAR(r.benchmarks[0].placement->noise, 0.0009 / 0.0088, 1e-9);
  EXPECT_TRUE(r.benchmarks[0].implausible());  // 112% against 10% of noise
}

TEST(Model, TheImplausibleWarningLeadsWithWhatTheRecordShows) {
  auto warning_of = [](BenchmarkResult b, void (*plant)(Results&)) {
    Results r = sample_results();
    r.benchmarks = {std::move(b)};
    if (plant) plant(r);
    apply_model(r);
    EXPECT_TRUE(r.benchmarks[0].implausible());
    return r.benchmarks[0].warnings.empty() ? std::string() : r.benchmarks[0].warnings[0];
  };
  const BenchmarkResult fast = kernel("fast", 2e9, 1e9, 0.0089);  // 112%
  // Counters that counted half the declared bytes: the declaration.
  BenchmarkResult counted = fast;
  counted.counters = counters_of(2e9, 0.5e9, 0.5e9, 0.5e9);
  EXPECT_NE(warning_of(counted, nullptr).find("CUPTI counted 5e+08 bytes at dram against 1e+09 declared"),
            std::string::npos);
  // Nothing checked it.
  BenchmarkResult unchecked = fast;
  unchecked.verification.ok = false;
  unchecked.timing_only = true;
  EXPECT_NE(warning_of(unchecked, nullptr).find("nothing checked its output"), std::string::npos);
  // A pass's ceiling far below the best of its level: the ceiling.
  BenchmarkResult weak = fast;
  weak.phases = {{"y = x", 2e9, 1e9, {}, "dram_copy"}};  // 1e9 B at 80 GB/s in 8.9 ms: 140%
  EXPECT_NE(warning_of(weak, nullptr).find("its roof, dram_copy at 8e+10 B/s, is 20% below the best dram ceiling"),
            std::string::npos);
  // Ten times over: a timer or skipped work.
  EXPECT_NE(warning_of(kernel("instant", 2e9, 1e9, 1e-6), nullptr).find("more than 10x its roof"), std::string::npos);
  // Otherwise: the declaration, the timer or the roof.
  EXPECT_NE(warning_of(fast, nullptr).find("work declared above what the kernel does"), std::string::npos);
}

TEST(Model, MissingRoofLeavesTheKernelUnplacedWithAReason) {
  Results r = sample_results();
  r.benchmarks = {kernel("h", 2e9, 1e9, 0.1, Precision::fp16)};
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
  ASSERT_EQ(r.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("no fp16 simd compute ceiling"), std::string::npos);
}

TEST(Model, FailedKernelIsNeverPlaced) {
  Results r = sample_results();
  BenchmarkResult b = kernel("bad", 2e9, 1e9, 0.1);
  b.verification.ok = false;
  b.error = "verification failed";
  b.measurement.reset();
  r.benchmarks = {b};
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
}

TEST(Model, ApplyingTwiceGivesTheSameWarningsOnce) {
  Results r = sample_results();
  r.benchmarks = {kernel("fast", 2e9, 1e9, 0.0089)};
  apply_model(r);
  apply_model(r);
  EXPECT_EQ(r.benchmarks[0].warnings.size(), 1u);
}

TEST(Model, ACeilingThatDriftedMoreThanTenPercentIsWarned) {
  Results r = sample_results();
  r.ceilings[0].value_end = 0.85 * r.ceilings[0].value_start;  // -15%
  r.ceilings[1].value_end = 1.05 * r.ceilings[1].value_start;  // +5%: steady enough
  apply_model(r);
  apply_model(r);  // idempotent
  ASSERT_EQ(r.ceilings[0].warnings.size(), 1u);
  EXPECT_NE(r.ceilings[0].warnings[0].find("-15% at the end of the run"), std::string::npos)
      << r.ceilings[0].warnings[0];
  EXPECT_TRUE(r.ceilings[1].warnings.empty());
  EXPECT_TRUE(r.ceilings[2].warnings.empty());  // ran once: nothing to compare
}

// The third roof. Roofs: BW 100 GB/s, FP32 1 TFLOP/s, sin 2e9 calls/s, cos 1e9 calls/s.
// A kernel of 5e9 FLOPs, 1e9 bytes, 1e9 sin and 1e9 cos calls: memory 10 ms, FMA 5 ms, math
// 1e9/2e9 + 1e9/1e9 = 1.5 s. Math binds: attainable 5e9 / 1.5 FLOP/s; in 3 s it is at 50%.
TEST(Model, AKernelBoundByItsMathCallsIsPlacedAgainstTheTranscendentalRoof) {
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  r.ceilings.push_back(transcendental_ceiling("cos", 1e9));
  BenchmarkResult b = kernel("sincos", 5e9, 1e9, 3.0);
  b.transcendentals = {{"sin", 1e9}, {"cos", 1e9}};
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_EQ(p.bound, "transcendental");
  EXPECT_EQ(p.transcendental_ceiling, "math_cos, math_sin");
  EXPECT_DOUBLE_EQ(p.model_time_s, 1.5);
  EXPECT_DOUBLE_EQ(*p.transcendental_flop_per_s, 5e9 / 1.5);
  EXPECT_DOUBLE_EQ(*p.attainable_flop_per_s, 5e9 / 1.5);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
  EXPECT_EQ(p.compute_ceiling, "fp32_fma");
  EXPECT_TRUE(r.benchmarks[0].warnings.empty());
  // No ridge point for a math roof: it is a kernel's own, not the machine's.
  EXPECT_EQ(r.ridge_points.size(), 2u);
}

TEST(Model, AMathRoofAboveTheOthersLeavesTheBoundWhereItWas) {
  // The same calls at 1e12/s cost 2 ms: memory (10 ms) binds; the math roof is still reported.
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 1e12));
  BenchmarkResult b = kernel("sin", 5e9, 1e9, 0.02);
  b.transcendentals = {{"sin", 2e9}};
  r.benchmarks = {b};
  apply_model(r);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_EQ(p.bound, "memory");
  EXPECT_DOUBLE_EQ(p.model_time_s, 0.01);
  EXPECT_DOUBLE_EQ(*p.transcendental_flop_per_s, 5e9 / 2e-3);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
}

TEST(Model, AKernelWhoseFunctionHasNoCeilingIsNotPlacedAndSaysWhich) {
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  BenchmarkResult b = kernel("gelu", 5e9, 1e9, 3.0);
  b.transcendentals = {{"sin", 1e9}, {"tanh", 1e9}};
  r.benchmarks = {b};
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
  ASSERT_EQ(r.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("no tanh transcendental ceiling"), std::string::npos)
      << r.benchmarks[0].warnings[0];
}

TEST(Model, TheBestCeilingOfEachFunctionIsItsRoof) {
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  Ceiling better = transcendental_ceiling("sin", 3e9);
  better.name = "mufu_sin_like";
  r.ceilings.push_back(better);
  r.ceilings.push_back(transcendental_ceiling("exp", 5e9));
  const Roofs roofs = select_roofs(r.ceilings);
  ASSERT_EQ(roofs.transcendental.size(), 2u);
  EXPECT_EQ(roofs.transcendental.at("sin")->name, "mufu_sin_like");
  EXPECT_EQ(roofs.transcendental.at("exp")->name, "math_exp");
  EXPECT_EQ(roofs.compute.size(), 2u);  // a transcendental ceiling is no FLOP roof
}

// Passes one after another add up, each against its own binding roof: a math pass of 1e9 sin
// calls (2e9/s: 0.5 s; its bytes 0.2 s) then a memory pass of 30e9 bytes (0.3 s). Model time
// 0.8 s, where one kernel doing the same work would be max(0.5, 0.32) = 0.5 s.
TEST(Model, PassesOneAfterAnotherAddUpTheirOwnBindingRoofs) {
  Results r = sample_results();
  r.ceilings.push_back(transcendental_ceiling("sin", 2e9));
  BenchmarkResult b = kernel("chain", 2e9, 32e9, 1.6);
  b.transcendentals = {{"sin", 1e9}};
  b.phases = {{"s = sin x", 1e9, 2e9, {{"sin", 1e9}}}, {"y = s·s", 1e9, 30e9, {}}};
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_DOUBLE_EQ(p.model_time_s, 0.8);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
  EXPECT_EQ(p.bound, "transcendental");  // 0.5 s of the 0.8
  EXPECT_DOUBLE_EQ(*p.transcendental_flop_per_s, 2e9 / 0.5);
  b.phases.clear();  // the same work as one kernel: the longer roof alone
  r.benchmarks = {b};
  apply_model(r);
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->model_time_s, 0.5);
}

// The overlap lesson's model. Roofs: DRAM 100 GB/s, FP32 1 TFLOP/s, and two PCIe ceilings the
// passes name: H2D 10 GB/s, D2H 5 GB/s. Passes: H2D of 1e9 B (0.1 s), a kernel of 2e11 FLOPs
// (0.2 s, compute) and 8e9 B (0.08 s), D2H of 1e9 B (0.2 s). One after another: 0.5 s. Pipelined
// over 10 chunks: 0.5 / 10 + 9/10 · 0.2 = 0.23 s, the rest hidden behind the slowest pass.
namespace {
BenchmarkResult copy_compute_copy(double measured_s, double chunks) {
  BenchmarkResult b = kernel("overlap", 2e11, 1e9 + 8e9 + 1e9, measured_s);
  b.phases = {{"H2D", 0, 1e9, {}, "pcie_h2d_pinned"}, {"kernel", 2e11, 8e9, {}, ""}, {"D2H", 0, 1e9, {}, "pcie_d2h_pinned"}};
  b.pipeline_chunks = chunks;
  return b;
}
Results with_pcie(const Results& base) {
  Results r = base;
  // pcie_h2d_pageable: the same level, another name, not used.
  r.ceilings.insert(r.ceilings.end(), {pcie_ceiling("pcie_h2d_pinned", 10e9), pcie_ceiling("pcie_d2h_pinned", 5e9),
                                       pcie_ceiling("pcie_h2d_pageable", 4e9)});
  return r;
}
}  // namespace

TEST(Model, PassesOneAfterAnotherPlaceEachPassAgainstTheCeilingItNames) {
  Results r = with_pcie(sample_results());
  r.benchmarks = {copy_compute_copy(1.0, 0)};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_DOUBLE_EQ(p.model_time_s, 0.1 + 0.2 + 0.2);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
  EXPECT_EQ(p.bound, "memory");  // 0.3 s of copies against 0.2 s of FMAs
  EXPECT_EQ(p.bandwidth_ceiling, "pcie_h2d_pinned, pcie_d2h_pinned");  // the kernel's DRAM bytes bind nothing
}

TEST(Model, PipelinedPassesOverlapAtTheSlowestPassPace) {
  Results r = with_pcie(sample_results());
  r.benchmarks = {copy_compute_copy(0.25, 10), copy_compute_copy(0.5, 1)};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_NEAR(p.model_time_s, 0.5 / 10 + 0.9 * 0.2, 1e-12);
  EXPECT_NEAR(p.roof_pct, 100 * 0.23 / 0.25, 1e-9);  // the overlap efficiency
  // The slowest pass is a tie (kernel and D2H, 0.2 s each): the first of them paces the rest.
  EXPECT_EQ(p.bound, "compute");
  // One chunk is the whole vector: nothing to overlap, the sum again.
  EXPECT_DOUBLE_EQ(r.benchmarks[1].placement->model_time_s, 0.5);
}

// Two streams, each running its chunks' three passes in turn, cannot keep three passes busy: the
// pace is a stream's chunk over two, Σ t_k / 2 = 0.25 s against the slowest pass's 0.2 s, so
// 0.5 / 10 + 9/10 · 0.25 = 0.275 s. Four streams: the slowest pass again, 0.23 s.
TEST(Model, APipelineOnTooFewStreamsGoesAtAStreamsPace) {
  Results r = with_pcie(sample_results());
  BenchmarkResult two = copy_compute_copy(0.3, 10), four = copy_compute_copy(0.3, 10);
  two.pipeline_streams = 2;
  four.pipeline_streams = 4;
  r.benchmarks = {two, four};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement && r.benchmarks[1].placement);
  EXPECT_NEAR(r.benchmarks[0].placement->model_time_s, 0.05 + 0.9 * 0.25, 1e-12);
  EXPECT_NEAR(r.benchmarks[1].placement->model_time_s, 0.05 + 0.9 * 0.2, 1e-12);
  EXPECT_EQ(r.benchmarks[0].placement->bound, "memory");  // the copies' 0.3 s of the 0.5 share the pace
}

// Against its passes as measured (Placement::overlap_measured): the serial form of the same work
// took 0.6 s, its copies at their ceilings 0.1 + 0.2 s, so its kernel took 0.3 s (0.2 s at its
// roof). From those passes the pipeline over 10 chunks needs 0.6 / 10 + 9/10 · 0.3 = 0.33 s; at
// 0.35 s its overlap is 0.33 / 0.35 against them, 0.23 / 0.35 against its roofs.
TEST(Model, APipelinedFormIsAlsoJudgedAgainstItsPassesAsTheSerialFormRanThem) {
  auto form = [](const char* variant, double measured_s, double chunks) {
    BenchmarkResult b = copy_compute_copy(measured_s, chunks);
    b.family = "overlap";
    b.variant = variant;
    b.name = std::string("overlap/") + variant + "/fp32/n:1";
    if (chunks > 1) b.compared_with = "overlap/serial/fp32";
    return b;
  };
  Results r = with_pcie(sample_results());
  r.benchmarks = {form("streams4", 0.35, 10), form("serial", 0.6, 0)};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_NEAR(p.roof_pct, 100 * 0.23 / 0.35, 1e-9);
  ASSERT_TRUE(p.overlap_measured);
  EXPECT_NEAR(*p.overlap_measured, 0.33 / 0.35, 1e-12);
  EXPECT_FALSE(r.benchmarks[1].placement->overlap_measured);  // the serial form has no pipeline
  // Written and read back (the Lessons row that gives both: tests/reports/test_reports.cpp).
  EXPECT_NEAR(*parse_results(dump_results(r)).benchmarks[0].placement->overlap_measured, 0.33 / 0.35, 1e-12);
  // On one stream the measured passes go at the stream's pace: Σ = 0.6 s a chunk's worth, above the
  // slowest pass, so 0.06 + 0.9 · 0.6 = 0.6 s.
  r.benchmarks[0].pipeline_streams = 1;
  apply_model(r);
  EXPECT_NEAR(*r.benchmarks[0].placement->overlap_measured, 0.6 / 0.35, 1e-12);
  r.benchmarks[0].pipeline_streams = 0;
  // No figure where the serial form ran no slower than its copies at their ceilings (they were no
  // ceilings for it, or it skipped work), where its work is not the pipeline's, or without it.
  for (auto change : std::vector<std::function<void(Results&)>>{
           [](Results& x) { x.benchmarks[1].measurement = measurement_of({0.3, 0.3, 0.3}); },
           [](Results& x) { x.benchmarks[1].bytes *= 2; },
           [](Results& x) { x.benchmarks[1].params = {{"n", 2}}; },
           [](Results& x) { x.benchmarks.pop_back(); }}) {
    Results changed = r;
    change(changed);
    apply_model(changed);
    ASSERT_TRUE(changed.benchmarks[0].placement);
    EXPECT_FALSE(changed.benchmarks[0].placement->overlap_measured);
  }
}

// The copies share one link both ways (Work::shared_link). H2D 0.1 s and D2H 0.2 s one way each;
// with both directions busy the link moves 8 GB/s in all, so their 2 GB together take 0.25 s a
// vector: the pace is 0.25 s, not the slowest pass's 0.2 s, and the link is named as what binds.
// At 20 GB/s both ways (0.1 s) the link binds nothing and the pace is 0.2 s again; on two streams
// (0.25 s a stream's chunk) a link of the same pace does not take over. Unmeasured: not placed.
TEST(Model, CopiesSharingALinkBothWaysGoNoFasterThanIt) {
  auto with_link = [](double rate) {
    Results r = with_pcie(sample_results());
    r.ceilings.push_back(pcie_ceiling("pcie_duplex_pinned", rate));
    return r;
  };
  BenchmarkResult shared = copy_compute_copy(0.3, 10);
  shared.pipeline_link = "pcie_duplex_pinned";
  Results slow = with_link(8e9), fast = with_link(20e9), two_streams = with_link(8e9);
  slow.benchmarks = fast.benchmarks = {shared};
  two_streams.benchmarks = {shared};
  two_streams.benchmarks[0].pipeline_streams = 2;
  apply_model(slow);
  apply_model(fast);
  apply_model(two_streams);
  ASSERT_TRUE(slow.benchmarks[0].placement) << slow.benchmarks[0].warnings.at(0);
  const Placement& p = *slow.benchmarks[0].placement;
  EXPECT_NEAR(p.model_time_s, 0.05 + 0.9 * 0.25, 1e-12);
  EXPECT_NEAR(p.roof_pct, 100 * 0.275 / 0.3, 1e-9);
  EXPECT_EQ(p.bound, "memory");
  EXPECT_EQ(p.bandwidth_ceiling, "pcie_duplex_pinned, pcie_h2d_pinned, pcie_d2h_pinned");  // the link first
  ASSERT_TRUE(fast.benchmarks[0].placement);
  EXPECT_NEAR(fast.benchmarks[0].placement->model_time_s, 0.05 + 0.9 * 0.2, 1e-12);
  EXPECT_EQ(fast.benchmarks[0].placement->bandwidth_ceiling.find("duplex"), std::string::npos);
  ASSERT_TRUE(two_streams.benchmarks[0].placement);
  EXPECT_NEAR(two_streams.benchmarks[0].placement->model_time_s, 0.05 + 0.9 * 0.25, 1e-12);
  EXPECT_EQ(two_streams.benchmarks[0].placement->bandwidth_ceiling.find("duplex"), std::string::npos);
  // Not measured: placed at the one-way pace, with a warning that says what was left out.
  Results missing = with_pcie(sample_results());
  missing.benchmarks = {shared};
  apply_model(missing);
  ASSERT_TRUE(missing.benchmarks[0].placement);
  EXPECT_NEAR(missing.benchmarks[0].placement->model_time_s, 0.05 + 0.9 * 0.2, 1e-12);
  ASSERT_EQ(missing.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(missing.benchmarks[0].warnings[0].find("roofline: no pcie_duplex_pinned bandwidth ceiling was measured"),
            std::string::npos)
      << missing.benchmarks[0].warnings[0];
  // The link carries the passes of its own level only: a kernel pass placed at dram_copy by name
  // (8 GB at 80 GB/s: 0.1 s, under the copies' pace) adds nothing to the link's 2 GB.
  BenchmarkResult named_dram = shared;
  named_dram.phases[1].ceiling = "dram_copy";
  Results dram = with_link(8e9);
  dram.benchmarks = {named_dram};
  apply_model(dram);
  ASSERT_TRUE(dram.benchmarks[0].placement);
  EXPECT_NEAR(dram.benchmarks[0].placement->model_time_s, 0.05 + 0.9 * 0.25, 1e-12);
}

// A link both ways is a ceiling by name only: though the best PCIe rate of the run, it is not the
// PCIe level's roof (a copy one way is no faster for it), nor a ridge point's.
TEST(Model, ALinkBothWaysIsNeverItsLevelsRoof) {
  Results r = with_pcie(sample_results());
  Ceiling duplex = pcie_ceiling("pcie_duplex_pinned", 19e9);
  duplex.level_roof = false;
  r.ceilings.push_back(duplex);
  const Roofs roofs = select_roofs(r.ceilings);
  ASSERT_TRUE(roofs.bandwidth.count(Level::pcie));
  EXPECT_EQ(roofs.bandwidth.at(Level::pcie)->name, "pcie_h2d_pinned");
  ASSERT_TRUE(roofs.bandwidth_by_name.count("pcie_duplex_pinned"));
  for (const RidgePoint& rp : ridge_points(roofs)) EXPECT_NE(rp.bandwidth_ceiling, "pcie_duplex_pinned");
  r.ceilings.back().level_roof = true;  // the same ceiling, were it a roof: it would be the one
  EXPECT_EQ(select_roofs(r.ceilings).bandwidth.at(Level::pcie)->name, "pcie_duplex_pinned");
}

TEST(Model, APassNamingACeilingThatWasNotMeasuredIsNotPlaced) {
  Results r = sample_results();  // no PCIe ceilings
  r.benchmarks = {copy_compute_copy(1.0, 4)};
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
  ASSERT_EQ(r.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("no pcie_h2d_pinned bandwidth ceiling"), std::string::npos)
      << r.benchmarks[0].warnings[0];
}

// The launch roof. Roofs: BW 100 GB/s, FP32 1 TFLOP/s, 1e6 regions/s. 1000 launches of tiny work
// (1e6 FLOPs, 1e6 bytes: 10 us of memory) need 1 ms: launch binds, and in 2 ms it is at 50%.
TEST(Model, ManyTinyLaunchesArePlacedAgainstTheLaunchRoof) {
  Results r = sample_results();
  r.ceilings.push_back(launch_ceiling("omp_region", 1e6));
  BenchmarkResult b = kernel("per_op", 1e6, 1e6, 2e-3);
  b.launches = {{"omp_region", 1000}};
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement) << r.benchmarks[0].warnings.at(0);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_EQ(p.bound, "launch");
  EXPECT_EQ(p.launch_ceiling, "launch_omp_region");
  EXPECT_DOUBLE_EQ(p.launch_time_s, 1e-3);
  EXPECT_DOUBLE_EQ(p.model_time_s, 1e-3);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
  EXPECT_DOUBLE_EQ(*p.attainable_flop_per_s, 1e6 / 1e-3);
  EXPECT_EQ(r.ridge_points.size(), 2u);  // a launch rate is no FLOP or byte roof: no ridge point
}

TEST(Model, OneLaunchOfMuchWorkStaysBoundByItsWork) {
  // One launch (1 us) of 1e9 bytes (10 ms): memory binds, and the launch time is still reported.
  Results r = sample_results();
  r.ceilings.push_back(launch_ceiling("kernel", 1e6));
  BenchmarkResult b = kernel("fused", 1e6, 1e9, 0.02);
  b.launches = {{"kernel", 1}};
  r.benchmarks = {b};
  apply_model(r);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_EQ(p.bound, "memory");
  EXPECT_DOUBLE_EQ(p.model_time_s, 0.01);
  EXPECT_DOUBLE_EQ(p.launch_time_s, 1e-6);
  EXPECT_EQ(p.launch_ceiling, "launch_kernel");
}

TEST(Model, LaunchesByTwoPathsAddUpAndAMissingPathLeavesTheKernelUnplaced) {
  Results r = sample_results();
  r.ceilings.push_back(launch_ceiling("kernel", 1e5));
  r.ceilings.push_back(launch_ceiling("graph_node", 1e6));
  BenchmarkResult b = kernel("mixed", 1e3, 1e3, 1.0);
  b.launches = {{"kernel", 100}, {"graph_node", 1000}};  // 1 ms + 1 ms
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement);
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->model_time_s, 2e-3);
  EXPECT_EQ(r.benchmarks[0].placement->launch_ceiling, "launch_graph_node, launch_kernel");
  b.launches = {{"omp_region", 10}};
  r.benchmarks = {b};
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
  ASSERT_EQ(r.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("no omp_region launch ceiling"), std::string::npos)
      << r.benchmarks[0].warnings[0];
}

TEST(Model, TheBestCeilingOfEachLaunchPathIsItsRoof) {
  Results r = sample_results();
  r.ceilings.push_back(launch_ceiling("kernel", 2e5));
  Ceiling better = launch_ceiling("kernel", 3e5);
  better.name = "launch_kernel_again";
  r.ceilings.push_back(better);
  const Roofs roofs = select_roofs(r.ceilings);
  ASSERT_EQ(roofs.launch.size(), 1u);
  EXPECT_EQ(roofs.launch.at("kernel")->name, "launch_kernel_again");
  EXPECT_EQ(roofs.compute.size(), 2u);
  EXPECT_EQ(roofs.bandwidth.size(), 1u);
}

// A ceiling from the benchmark that measured it: its rate is the work over the median sample of
// each pass (not the fastest sample: one lucky sample is no roof), the roof is the better pass,
// and the theoretical peak beside it is at the clock read around that better pass.
TEST(Ceilings, TheRoofIsTheMedianRateOfTheBetterPassWithThatPassesClock) {
  Variant v;
  v.family = "ceiling";
  v.variant = "fp32_fma";
  v.precision = Precision::fp32;
  v.backend = Backend::cpu;
  v.unit = Unit::simd;
  v.ceiling = CeilingSpec{"fp32_fma", CeilingKind::compute, Level::dram, "FMA chains"};
  const nlohmann::json device = {{"kind", "cpu"}, {"name", "Test CPU"}};
  auto pass = [](std::vector<double> samples, double hz) {
    BenchmarkResult b = kernel("fp32_fma", 1e9, 0, 1);
    b.measurement = measurement_of(std::move(samples));
    b.measurement->clock_before_hz = b.measurement->clock_after_hz = hz;
    return b;
  };
  const BenchmarkResult slow = pass({0.5, 2.0, 3.0}, 2e9);  // median 2 s: 0.5 GFLOP/s (its fastest: 2)
  const BenchmarkResult fast = pass({0.2, 1.0, 1.5}, 3e9);  // median 1 s: 1 GFLOP/s (its fastest: 5)
  for (const bool fast_last : {true, false}) {
    const BenchmarkResult& start = fast_last ? slow : fast;
    const BenchmarkResult& end = fast_last ? fast : slow;
    const Ceiling c = make_ceiling(v, start, &end, device);
    EXPECT_DOUBLE_EQ(c.value_start, fast_last ? 0.5e9 : 1e9);
    ASSERT_TRUE(c.value_end);
    EXPECT_DOUBLE_EQ(*c.value_end, fast_last ? 1e9 : 0.5e9);
    EXPECT_DOUBLE_EQ(c.value, 1e9) << "the better pass";
    ASSERT_TRUE(c.theoretical);
    EXPECT_DOUBLE_EQ(c.theoretical->value, theoretical_fma_peak(cpu_info(), false, 3e9)) << "the better pass's clock";
  }
  // One pass alone is its own roof.
  const Ceiling once = make_ceiling(v, slow, nullptr, device);
  EXPECT_DOUBLE_EQ(once.value, 0.5e9);
  EXPECT_FALSE(once.value_end);
}

TEST(Model, AKernelThatDeclaresNoWorkIsPlacedByTheWorkItsCountersCounted) {
  // Nothing declared (a Python callable with counters=True): CUPTI's 1e9 bytes at DRAM and 2e9
  // FLOPs place it as kernel("a", 2e9, 1e9, 0.02) is placed by its declaration: 50%.
  Results r = sample_results();
  BenchmarkResult b = kernel("undeclared", 0, 0, 0.02);
  b.counters = counters_of(2e9, 1e9, 3e9, 4e9);
  r.benchmarks = {b};
  apply_model(r);
  ASSERT_TRUE(r.benchmarks[0].placement);
  const Placement& p = *r.benchmarks[0].placement;
  EXPECT_EQ(p.work, "counted");
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(p.flop_per_s, 100e9);
  EXPECT_DOUBLE_EQ(p.roof_pct, 50.0);
  ASSERT_EQ(r.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("placed by the work CUPTI counted (1e+09 bytes at dram, 2e+09 FLOPs)"),
            std::string::npos)
      << r.benchmarks[0].warnings[0];
  // Declared FLOPs stay the declared; only what is missing comes from the counters.
  r.benchmarks[0].flops = 4e9;
  apply_model(r);
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->flop_per_s, 200e9);
  // At the level it declares: counted L2 bytes for a kernel of L2 are its bytes. Not placed
  // where nothing was counted there, with the way out in the reason.
  r.benchmarks[0].flops = 0;
  r.benchmarks[0].counters->bytes.erase(Level::dram);
  EXPECT_FALSE(place(r.benchmarks[0], select_roofs(r.ceilings), nullptr));
  // Without counters: not placed, and told how to be.
  r.benchmarks = {kernel("undeclared", 0, 0, 0.02)};
  apply_model(r);
  EXPECT_FALSE(r.benchmarks[0].placement);
  ASSERT_EQ(r.benchmarks[0].warnings.size(), 1u);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("declares no bytes, and no counters counted any at dram"),
            std::string::npos);
  EXPECT_NE(r.benchmarks[0].warnings[0].find("--counters on a GPU"), std::string::npos);
}

TEST(Model, WorkDeclaredAndCountedThatDifferByMoreThanTenPercentShowBothAndWarn) {
  Results r = sample_results();
  auto warnings_with = [&](double counted_flops, double counted_bytes) {
    BenchmarkResult b = kernel("a", 2e9, 1e9, 0.02);
    b.counters = counters_of(counted_flops, counted_bytes, 1e9, 1e9);
    r.benchmarks = {b};
    apply_model(r);
    EXPECT_EQ(r.benchmarks[0].placement->work, "declared");
    EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->roof_pct, 50.0);  // placed by the declared, always
    return r.benchmarks[0].warnings;
  };
  EXPECT_TRUE(warnings_with(2e9, 1.09e9).empty());  // within 10% both ways
  EXPECT_TRUE(warnings_with(1.9e9, 0.92e9).empty());
  // Counted above (a kernel that re-reads) and below (a declaration too high), bytes and FLOPs.
  auto above = warnings_with(2e9, 1.25e9);
  ASSERT_EQ(above.size(), 1u);
  EXPECT_NE(above[0].find("1e+09 bytes at dram declared, 1.25e+09 counted (+25%)"), std::string::npos) << above[0];
  EXPECT_EQ(above[0].find("FLOPs declared"), std::string::npos);
  auto below = warnings_with(1e9, 0.5e9);
  ASSERT_EQ(below.size(), 1u);
  EXPECT_NE(below[0].find("1e+09 bytes at dram declared, 5e+08 counted (-50%)"), std::string::npos) << below[0];
  EXPECT_NE(below[0].find("2e+09 FLOPs declared, 1e+09 counted (-50%)"), std::string::npos) << below[0];
  // Failed counters are no witness.
  BenchmarkResult failed = kernel("a", 2e9, 1e9, 0.02);
  failed.counters = counters_of(1e9, 0.5e9, 1e9, 1e9);
  failed.counters->error = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  EXPECT_EQ(work_mismatch(failed), "");
}

namespace {
// sample_results() with fp32_fma measured twice: the burst pass at 1e12 FLOP/s with its samples at
// 1.98 GHz, and a sustained one at 0.8e12 at 1.60 GHz (a GPU settled under its power cap).
Results with_sustained_fma(double held_hz = 1.60e9) {
  Results r = sample_results();
  Ceiling& fma = r.ceilings[2];
  fma.measurement.sample_clock_hz = {1.98e9};
  Measurement held = measurement_of({1.25});
  held.sample_clock_hz = {held_hz};
  held.held_s = 10;
  fma.measurement_sustained = held;
  fma.value_sustained = 0.8e12;
  return r;
}
// A compute-bound kernel (40 FLOP/B) whose samples' clock read `hz`: 4e10 FLOPs in 0.05 s is
// 0.8 TFLOP/s.
BenchmarkResult compute_bound_at(double hz, double seconds = 0.05) {
  BenchmarkResult b = kernel("b", 4e10, 1e9, seconds);
  b.measurement->sample_clock_hz = {hz, hz, hz};
  return b;
}
}  // namespace

TEST(Model, AKernelIsPlacedAgainstTheRoofOfTheClockItsSamplesRanAt) {
  Results r = with_sustained_fma();
  r.benchmarks = {compute_bound_at(1.98e9), compute_bound_at(1.62e9)};
  apply_model(r);
  // At the burst clock: the burst roof, 80%.
  const Placement& cool = *r.benchmarks[0].placement;
  EXPECT_EQ(cool.roof_clock, "burst");
  EXPECT_DOUBLE_EQ(cool.roof_pct, 80.0);
  // At the clock the power cap settles at: the sustained roof, 100%, as the GEMM-vs-cuBLAS rows
  // need (both sides at the same clock).
  const Placement& hot = *r.benchmarks[1].placement;
  EXPECT_EQ(hot.roof_clock, "sustained");
  EXPECT_DOUBLE_EQ(hot.roof_pct, 100.0);
  EXPECT_EQ(hot.compute_ceiling, "fp32_fma");
  // A memory-bound kernel's roof has no sustained pass: no clock to say.
  r.benchmarks = {kernel("a", 2e9, 1e9, 0.02)};
  r.benchmarks[0].measurement->sample_clock_hz = {1.6e9};
  apply_model(r);
  EXPECT_EQ(r.benchmarks[0].placement->roof_clock, "");
  // No clock read for the kernel: the burst roof, the upper bound.
  BenchmarkResult unclocked = compute_bound_at(1.6e9);
  unclocked.measurement->sample_clock_hz.clear();
  unclocked.measurement->clock_reference_hz.reset();
  r.benchmarks = {unclocked};
  apply_model(r);
  EXPECT_EQ(r.benchmarks[0].placement->roof_clock, "burst");
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->roof_pct, 80.0);
}

TEST(Model, ASustainedPassAtTheBurstClockIsNoSecondRoof) {
  // Held 10 s and still at 1.96 GHz (within kClockStep): nothing throttled, and the lower value is
  // the pass's noise, not a roof of another clock.
  Results r = with_sustained_fma(1.96e9);
  r.benchmarks = {compute_bound_at(1.96e9)};
  apply_model(r);
  EXPECT_EQ(r.benchmarks[0].placement->roof_clock, "burst");
  EXPECT_DOUBLE_EQ(r.benchmarks[0].placement->roof_pct, 80.0);
}

TEST(Model, TheGateHoldsAKernelToTheBurstRoofWhateverItsClock) {
  Results r = with_sustained_fma();
  // 4e10 FLOPs in 0.0444 s: 0.9 TFLOP/s, 113% of the sustained roof its clock matches and 90% of
  // the burst roof. Above the sustained one it is read there, and warned; refused it is not.
  r.benchmarks = {compute_bound_at(1.62e9, 0.04444444)};
  apply_model(r);
  const BenchmarkResult& b = r.benchmarks[0];
  EXPECT_EQ(b.placement->roof_clock, "sustained");
  EXPECT_NEAR(b.placement->roof_pct, 112.5, 0.01);
  EXPECT_FALSE(b.implausible());
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_NE(b.warnings[0].find("at 113% of the sustained roof of its clock (fp32_fma), but 90% of the burst roof"),
            std::string::npos)
      << b.warnings[0];
  // Above the burst roof too: refused.
  r.benchmarks = {compute_bound_at(1.62e9, 0.035)};
  apply_model(r);
  EXPECT_TRUE(r.benchmarks[0].implausible());
}

TEST(Model, ASustainedRoofIsMeasuredAndOnlyTheBestPassIsTheRoof) {
  Results r = with_sustained_fma();
  const Roofs roofs = select_roofs(r.ceilings);
  ASSERT_EQ(roofs.sustained.size(), 1u);
  const Ceiling& view = *roofs.sustained.begin()->second;
  EXPECT_EQ(view.name, "fp32_fma");
  EXPECT_DOUBLE_EQ(view.value, 0.8e12);
  EXPECT_DOUBLE_EQ(roofs.compute.at({Precision::fp32, Unit::simd})->value, 1e12);
  EXPECT_EQ(samples_clock_hz(view.measurement), 1.6e9);
}
