// Which benchmarks a run takes and how long it may take (bench/plan.h), from the registry alone.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/plan.h"

using namespace roofbench;

namespace {

Variant toy(const std::string& name, double bytes, bool ceiling = false) {
  Variant v;
  v.family = ceiling ? "ceiling" : "toy";
  v.variant = name;
  v.sizes = v.quick_sizes = v.test_sizes = {{{"n", 1}}};
  v.work = Work().read("x", 1, bytes).flops(1, "one");
  if (ceiling) v.ceiling = CeilingSpec{name, CeilingKind::bandwidth, Level::dram, "test"};
  return v;
}

}  // namespace

TEST(Plan, CeilingsFirstThenTheKernelsThenTheCeilingsAgain) {
  const RunPlan p = plan_run(Target{Backend::cpu, ""}, PlanOptions{true, "stream/saxpy", "", true, true});
  ASSERT_GT(p.start_ceilings, 0u);
  for (std::size_t i = 0; i < p.start_ceilings; ++i) {
    EXPECT_TRUE(p.jobs[i].variant->ceiling) << p.jobs[i].name();
    EXPECT_EQ(p.jobs[i].tag, "");
  }
  EXPECT_EQ(p.jobs[p.start_ceilings].variant->base_name(), "stream/saxpy/fp32");
  EXPECT_EQ(p.jobs.size(), 2 * p.start_ceilings + 1);
  EXPECT_EQ(p.jobs.back().tag, kEndPass);
}

TEST(Plan, CeilingsFromAFileLeaveThemOutAndCeilingsAloneLeaveOutTheKernels) {
  // From a file: all but the ceilings of one process (the launch rates), which the run still
  // measures first and last around its kernels.
  const RunPlan parts = plan_run(Target{Backend::cpu, ""}, PlanOptions{true, "stream/saxpy", "", false, true});
  ASSERT_EQ(parts.jobs.size(), 2 * parts.start_ceilings + 1);
  EXPECT_GT(parts.start_ceilings, 0u);
  for (const auto& j : parts.jobs)
    if (j.variant->ceiling) EXPECT_TRUE(j.variant->ceiling->per_process) << j.name();
  EXPECT_EQ(parts.jobs[parts.start_ceilings].variant->base_name(), "stream/saxpy/fp32");
  const RunPlan ceilings = plan_run(Target{Backend::cpu, ""}, PlanOptions{true, "", "", true, false});
  ASSERT_FALSE(ceilings.jobs.empty());
  for (const auto& j : ceilings.jobs) EXPECT_TRUE(j.variant->ceiling && j.tag.empty()) << j.name();
  EXPECT_THROW(plan_run(Target{Backend::cpu, ""}, PlanOptions{true, "no-such-kernel", "", true, true}), InputError);
  EXPECT_THROW(plan_run(Target{Backend::cpu, ""}, PlanOptions{true, "(", "", true, true}), InputError);
}

TEST(Plan, TheEstimateChargesEachBenchmarkItsBudgetWarmUpAndHostWork) {
  const Variant small = toy("small", 1e6), big = toy("big", 3e9);
  Variant cache_small_footprint = toy("cache", 0, true);
  cache_small_footprint.work = Work().read("one small buffer, over and over", 1, 1e6, 1e6);
  RunPlan p;
  p.jobs = {{&small, {{"n", 1}}, ""}, {&big, {{"n", 1}}, ""}, {&cache_small_footprint, {{"n", 1}}, ""}};
  MeasureOptions o;
  o.max_time_s = 2;
  o.warmup_runs = 1;
  const Estimate e = estimate_run(p, o, false, 4);
  EXPECT_EQ(e.jobs, 3u);
  // Each: the budget, one warm-up of at most budget / kMinSamples, the fixed overhead, and an
  // energy pass of 10 of RAPL's 1 ms updates (--energy-pass allows 0.1 s; a GPU's NVML needs 1.1).
  EXPECT_DOUBLE_EQ(e.sampling_s, 3 * (2 + 2.0 / MeasureOptions::kMinSamples + kJobOverheadS + 0.011));
  o.energy_pass_s = 0;
  EXPECT_DOUBLE_EQ(estimate_run(p, o, false, 4).sampling_s, 3 * (2 + 2.0 / MeasureOptions::kMinSamples + kJobOverheadS));
  // A ceiling's later passes (again, brief, end, sustained) get none: one pass a benchmark.
  o.energy_pass_s = 0.1;
  for (auto& j : p.jobs) j.tag = kEndPass;
  EXPECT_DOUBLE_EQ(estimate_run(p, o, false, 4).sampling_s, 3 * (2 + 2.0 / MeasureOptions::kMinSamples + kJobOverheadS));
  // Host work from the bytes the host makes and checks, twice (before the samples and after), on
  // 4 threads; the cache ceiling's one small buffer, not the terabyte it reads over and over.
  EXPECT_DOUBLE_EQ(e.checks_s, 2 * (1e6 + 3e9 + 1e6) / (4 * kHostCheckBytesPerSecondPerThread));
  EXPECT_EQ(e.counters_s, 0);
  EXPECT_DOUBLE_EQ(e.total_s(), e.sampling_s + e.checks_s + e.startup_s);
  EXPECT_NE(e.explain().find("3 benchmarks sampling up to their budget"), std::string::npos) << e.explain();
  // More threads, less host time; the budget is the same.
  EXPECT_LT(estimate_run(p, o, false, 16).checks_s, e.checks_s);
}

TEST(Plan, SustainedCeilingsGetASecondPassHeldUnderLoadRightAfterTheStartCeilings) {
  PlanOptions o{true, "stream/saxpy", "", true, true};
  // A quick run, and any run on the CPU, holds none unless --sustain asks; a full GPU run does.
  EXPECT_EQ(o.sustain_for(Backend::cuda), 0.0);
  EXPECT_EQ(PlanOptions{}.sustain_for(Backend::cuda), kDefaultSustainS);
  EXPECT_EQ(PlanOptions{}.sustain_for(Backend::cpu), 0.0);
  const RunPlan none = plan_run(Target{Backend::cpu, ""}, o);
  for (const auto& j : none.jobs) EXPECT_NE(j.tag, kSustainedPass) << j.name();

  o.sustain_s = 0.5;
  const RunPlan held = plan_run(Target{Backend::cpu, ""}, o);
  ASSERT_EQ(held.start_ceilings, none.start_ceilings);
  std::vector<std::string> sustained;
  for (std::size_t i = held.start_ceilings; i < held.jobs.size() && held.jobs[i].tag == kSustainedPass; ++i) {
    EXPECT_TRUE(held.jobs[i].variant->ceiling->sustained) << held.jobs[i].name();
    EXPECT_EQ(held.jobs[i].hold_s, 0.5);
    sustained.push_back(held.jobs[i].variant->ceiling->name);
  }
  // The CPU's FP32 FMA and DRAM read roofs, each once, and then the kernels.
  std::vector<std::string> want;
  for (std::size_t i = 0; i < held.start_ceilings; ++i)
    if (held.jobs[i].variant->ceiling->sustained) want.push_back(held.jobs[i].variant->ceiling->name);
  EXPECT_EQ(want.size(), 2u);
  EXPECT_EQ(sustained, want);
  EXPECT_EQ(held.jobs[held.start_ceilings + sustained.size()].variant->base_name(), "stream/saxpy/fp32");
  EXPECT_EQ(held.jobs.size(), none.jobs.size() + sustained.size());
  // The estimate charges the holds.
  MeasureOptions m;
  EXPECT_GE(estimate_run(held, m, false, 1).sampling_s - estimate_run(none, m, false, 1).sampling_s,
            sustained.size() * (0.5 + m.max_time_s));
}

TEST(Plan, OnAGpuTheFp32FmaTensorAndHbmRoofsAreHeldByDefault) {
#ifndef ROOFBENCH_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA: no GPU ceiling is registered";
#else
  const RunPlan p = plan_run(Target{Backend::cuda, "9.0"}, PlanOptions{false, "", "", true, false});
  std::vector<std::string> held;
  for (const auto& j : p.jobs)
    if (j.tag == kSustainedPass) {
      EXPECT_EQ(j.hold_s, kDefaultSustainS);
      held.push_back(j.variant->ceiling->name);
    }
  std::sort(held.begin(), held.end());
  EXPECT_EQ(held, (std::vector<std::string>{"bf16_mma_sync", "bf16_wgmma", "dram_read", "fp32_fma"}));
#endif
}

// A roof a kernel came out above is measured once more in samples as brief as the kernel's where
// its repeat count scales (brief_params): the count scaled by the kernel's time over the ceiling's
// fastest sample, rounded down to its step, no lower than its least value.
TEST(Plan, ABriefPassScalesTheRepeatCountToTheKernelsTimeWithinItsStepAndFloor) {
  Variant v = toy("brief", 4, true);
  v.ceiling->repeat_param = "iters";
  const Params own = {{"threads", 2}, {"iters", 1 << 20}};
  // 15.6 ms samples, a 0.24 ms kernel (2^-6 and 2^-12 s, exact in binary): a 64th of the count.
  auto iters = [&](const std::optional<Params>& p) { return p ? param(*p, "iters") : -1; };
  EXPECT_EQ(iters(brief_params(v, own, 0x1p-6, 0x1p-12, true)), (1 << 20) / 64);
  EXPECT_EQ(param(*brief_params(v, own, 0x1p-6, 0x1p-12, true), "threads"), 2);  // the other params as they were
  // Rounded down, and never below 1: a kernel a million times briefer runs 1.
  EXPECT_EQ(iters(brief_params(v, own, 0.016, 0.016 / 3, true)), (1 << 20) / 3);
  EXPECT_EQ(iters(brief_params(v, own, 1.0, 1e-9, true)), 1);
  // A kernel no briefer than the ceiling's fastest sample, or times that are no times: none.
  EXPECT_FALSE(brief_params(v, own, 0.016, 0.016, true));
  EXPECT_FALSE(brief_params(v, own, 0.016, 0.5, true));
  EXPECT_FALSE(brief_params(v, own, 0, 0.001, true));
  EXPECT_FALSE(brief_params(v, own, 0.016, 0, true));
  // Whole steps, and the least value (a DRAM ceiling's arrays: vectors of 16, twice the LLC).
  v.ceiling->repeat_param = "n";
  v.ceiling->repeat_step = 16;
  v.ceiling->repeat_min = 4096;
  const Params arrays = {{"n", 1 << 20}};
  auto n = [&](const std::optional<Params>& p) { return p ? param(*p, "n") : -1; };
  EXPECT_EQ(n(brief_params(v, arrays, 0.016, 0.016 * 1001 / (1 << 20), true)), 4096);  // 1001 -> 992: the floor
  v.ceiling->repeat_min = 1;
  EXPECT_EQ(n(brief_params(v, arrays, 0.016, 0.016 * 1001 / (1 << 20), true)), 992);  // whole steps of 16
  v.ceiling->repeat_min = 256;
  EXPECT_EQ(n(brief_params(v, arrays, 0.016, 0.016 * 1001 / (1 << 20), true)), 992);
  v.ceiling->repeat_min = 4096;
  EXPECT_EQ(n(brief_params(v, arrays, 0.016, 0.016 * 1001 / (1 << 20), true)), 4096);
  // Needing a flushed cache, none in a run without flushes (--warm); none without a repeat count.
  v.ceiling->repeat_needs_flush = true;
  EXPECT_EQ(n(brief_params(v, arrays, 0x1p-6, 0x1p-10, true)), (1 << 20) / 16);
  EXPECT_FALSE(brief_params(v, arrays, 0.016, 0.001, false));
  v.ceiling->repeat_param.clear();
  EXPECT_FALSE(brief_params(v, arrays, 0.016, 0.001, true));
  // A floor at or above its own count: no pass briefer than its own.
  v.ceiling->repeat_param = "n";
  v.ceiling->repeat_min = 1 << 20;
  EXPECT_FALSE(brief_params(v, arrays, 0.016, 0.001, true));
}

// The fastest sample the scaling starts from is one of the ceiling's own size: a brief pass (a
// file's, taken at another size) is left out.
TEST(Plan, TheFastestOwnSampleLeavesOutABriefPass) {
  Ceiling c;
  c.measurement.stats.min = 0.016;
  c.measurement.stats.median = 0.017;
  EXPECT_DOUBLE_EQ(fastest_own_sample(c), 0.016);
  c.measurement_end = Measurement{};
  c.measurement_end->stats.min = 0.012;
  EXPECT_DOUBLE_EQ(fastest_own_sample(c), 0.012);
  c.measurement_brief = Measurement{};
  c.measurement_brief->stats.min = 0.0001;
  EXPECT_DOUBLE_EQ(fastest_own_sample(c), 0.012);  // brief: not of its own size
  c.measurement_again = Measurement{};
  c.measurement_again->stats.min = 0.008;
  EXPECT_DOUBLE_EQ(fastest_own_sample(c), 0.008);  // its own size, measured once more
  c.measurement_sustained = Measurement{};
  c.measurement_sustained->stats.median = 0.00005;  // no minimum: its median
  EXPECT_DOUBLE_EQ(fastest_own_sample(c), 0.00005);
}
