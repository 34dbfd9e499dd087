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
  // Each: the budget, one warm-up of at most budget / kMinSamples, the fixed overhead.
  EXPECT_DOUBLE_EQ(e.sampling_s, 3 * (2 + 2.0 / MeasureOptions::kMinSamples + kJobOverheadS));
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
