// The counter model without CUPTI: which metrics a kernel gets, and what recorded values mean
// (FLOPs, bytes per level, intensities, divergence measures).
#include <gtest/gtest.h>

#include "roofline/cupti/metrics.h"

using namespace roofbench;
using namespace roofbench::cupti;

namespace {
BenchmarkResult kernel(const std::string& family, Precision p, Unit unit,
                       std::optional<Precision> math = std::nullopt) {
  BenchmarkResult b;
  b.family = family;
  b.precision = p;
  b.unit = unit;
  b.math = math;
  b.backend = Backend::cuda;
  return b;
}
bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST(DefaultMetrics, EveryKernelGetsTimeClockAndBytesAtEachLevel) {
  const auto m = default_metrics(kernel("stream", Precision::fp32, Unit::simt));
  for (const char* name : {"gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "dram__bytes_read.sum",
                           "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex.sum", "l1tex__t_bytes.sum"})
    EXPECT_TRUE(has(m, name)) << name;
}

TEST(DefaultMetrics, FlopCountersFollowThePrecisionOfTheArithmetic) {
  const auto fp32 = default_metrics(kernel("gemm", Precision::fp32, Unit::simt));
  EXPECT_TRUE(has(fp32, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  EXPECT_FALSE(has(fp32, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"));
  // FP16 inputs widened to FP32 on the CUDA cores run FP32 instructions.
  const auto widened = default_metrics(kernel("gemm", Precision::fp16, Unit::simt, Precision::fp32));
  EXPECT_TRUE(has(widened, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  const auto half2 = default_metrics(kernel("ceiling", Precision::fp16, Unit::simt));
  EXPECT_TRUE(has(half2, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"));
  const auto fp64 = default_metrics(kernel("ceiling", Precision::fp64, Unit::simt));
  EXPECT_TRUE(has(fp64, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"));
}

TEST(DefaultMetrics, TensorKernelsCountTheTensorPathOfTheirInputTypeNotInstructions) {
  const auto bf16 = default_metrics(kernel("gemm", Precision::bf16, Unit::tensor));
  EXPECT_TRUE(has(bf16, "sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
  const auto fp16 = default_metrics(kernel("gemm", Precision::fp16, Unit::tensor));
  EXPECT_TRUE(has(fp16, "sm__ops_path_tensor_src_fp16.sum"));
  for (const auto& m : fp16) EXPECT_EQ(m.find("sm__inst_executed_pipe_tensor"), std::string::npos) << m;
  for (const auto& m : fp16) EXPECT_EQ(m.find("_sass_"), std::string::npos) << m;  // SASS metrics add a pass
  // TMA's bulk copies bypass l1tex__t_bytes: the tensor kernels (fed by TMA) count them too, and
  // their L1 bytes are the sum.
  EXPECT_TRUE(has(bf16, "l1tex__m_xbar2l1tex_read_bytes_pipe_tma.sum"));
  Counters c;
  c.metrics = bf16;
  c.values = {{"l1tex__t_bytes.sum", 1000}, {"l1tex__m_xbar2l1tex_read_bytes_pipe_tma.sum", 64000}};
  derive(c);
  EXPECT_DOUBLE_EQ(c.bytes.at(Level::l1), 65000);
}

TEST(DefaultMetrics, DivergenceKernelsAlsoGetThreadsPerInstructionAndBranchUniformity) {
  const auto m = default_metrics(kernel("divergence", Precision::fp32, Unit::simt));
  for (const char* name : {"smsp__thread_inst_executed.sum", "smsp__inst_executed.sum", "smsp__sass_branch_targets.sum",
                           "smsp__sass_branch_targets_threads_uniform.sum"})
    EXPECT_TRUE(has(m, name)) << name;
  EXPECT_FALSE(has(default_metrics(kernel("stream", Precision::fp32, Unit::simt)), "smsp__inst_executed.sum"));
}

TEST(Derive, Fp32FlopsAreAddPlusMulPlusTwiceFma) {
  Counters c;
  c.values = {{"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 100},
              {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 50},
              {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1000}};
  derive(c);
  ASSERT_TRUE(c.flops);
  EXPECT_DOUBLE_EQ(*c.flops, 100 + 50 + 2 * 1000);
  EXPECT_NE(c.flops_formula.find("2·ffma"), std::string::npos) << c.flops_formula;
}

TEST(Derive, HalfInstructionsCountTwoLanes) {
  Counters c;
  c.values = {{"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 10},
              {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 0},
              {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 100}};
  derive(c);
  EXPECT_DOUBLE_EQ(*c.flops, 2 * 10 + 4 * 100);
}

TEST(Derive, TensorOpsAreFlopsAndSumWithCudaCoreFlops) {
  Counters c;
  // A 4096³ BF16 GEMM: 2·M·N·K tensor ops, plus an FP32 epilogue of one FMUL per output.
  const double n = 4096;
  c.values = {{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 2 * n * n * n},
              {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", n * n}};
  derive(c);
  EXPECT_DOUBLE_EQ(*c.flops, 2 * n * n * n + n * n);
  EXPECT_NE(c.flops_formula.find("tensor ops"), std::string::npos);
}

TEST(Derive, TensorCountersThatHoldOthersAreNotAddedTwice) {
  // A user's list with CUPTI's aggregates and their parts: src_fp16 holds every instruction's
  // FP16 ops (HMMA 60 + HGMMA 40), op_hmma_src_fp16 holds its _dst_fp32 part, and a name holds its
  // _sparsity_off part. Each op is counted once: 100 FP16 + 10 BF16.
  Counters c;
  c.values = {{"sm__ops_path_tensor_src_fp16.sum", 100},
              {"sm__ops_path_tensor_op_hmma_src_fp16.sum", 60},
              {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 40},
              {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", 60},
              {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 10},
              {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", 10},
              {"sm__ops_path_tensor_src_fp16.avg", 1}};  // not a count of ops
  derive(c);
  ASSERT_TRUE(c.flops);
  EXPECT_DOUBLE_EQ(*c.flops, 110);
  EXPECT_EQ(c.flops_formula,
            "sm__ops_path_tensor_src_bf16_dst_fp32.sum (tensor ops) + sm__ops_path_tensor_src_fp16.sum (tensor ops)");
  // Parts alone, siblings that hold nothing of each other: both count. src_int1 does not hold
  // a name that only begins with its letters.
  c.values = {{"sm__ops_path_tensor_op_hmma_src_fp16.sum", 60},
              {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 40},
              {"sm__ops_path_tensor_src_int1.sum", 5},
              {"sm__ops_path_tensor_src_int16.sum", 7}};
  derive(c);
  ASSERT_TRUE(c.flops);
  EXPECT_DOUBLE_EQ(*c.flops, 112);
  // Two that share some ops, neither holding the other (HMMA's FP16 to FP32 is in both): no sum
  // is right, so FLOPs are left underived and the formula says why.
  for (const char* other : {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_src_fp16_sparsity_on.sum"}) {
    c.values = {{"sm__ops_path_tensor_op_hmma_src_fp16.sum", 60},
                {other, 50},
                {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 5}};
    derive(c);
    EXPECT_FALSE(c.flops) << other;
    EXPECT_NE(c.flops_formula.find("not derived: "), std::string::npos) << c.flops_formula;
    EXPECT_NE(c.flops_formula.find(other), std::string::npos) << c.flops_formula;
  }
}

TEST(Derive, BytesPerLevelAndIntensities) {
  // Recorded shape of a SAXPY over 2^26 floats: 12 bytes per element at HBM.
  const double n = 67108864;
  Counters c;
  c.values = {{"gpu__time_duration.sum", 210000},  // ns
              {"sm__cycles_elapsed.avg.per_second", 1.755e9},
              {"dram__bytes_read.sum", 8 * n},
              {"dram__bytes_write.sum", 4 * n},
              {"lts__t_sectors_srcunit_tex.sum", 12 * n / 32},
              {"l1tex__t_bytes.sum", 12 * n},
              {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", n}};
  derive(c);
  EXPECT_DOUBLE_EQ(c.bytes.at(Level::dram), 12 * n);
  EXPECT_DOUBLE_EQ(c.bytes.at(Level::l2), 12 * n);  // 32 bytes per sector
  EXPECT_DOUBLE_EQ(c.bytes.at(Level::l1), 12 * n);
  EXPECT_DOUBLE_EQ(*c.time_s, 210e-6);
  EXPECT_DOUBLE_EQ(*c.sm_clock_hz, 1.755e9);
  const auto ai = c.intensity();
  EXPECT_DOUBLE_EQ(ai.at(Level::dram), 2.0 / 12);
  EXPECT_DOUBLE_EQ(ai.at(Level::l2), 2.0 / 12);
}

TEST(Derive, ZeroBytesOrNoFlopsGiveNoIntensity) {
  Counters c;
  c.values = {{"dram__bytes_read.sum", 0}, {"dram__bytes_write.sum", 0}, {"l1tex__t_bytes.sum", 64}};
  derive(c);
  EXPECT_FALSE(c.flops);
  EXPECT_TRUE(c.intensity().empty());
  c.values["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] = 16;
  derive(c);
  const auto ai = c.intensity();
  EXPECT_EQ(ai.count(Level::dram), 0u);  // no HBM traffic: no HBM point, never a division by zero
  EXPECT_DOUBLE_EQ(ai.at(Level::l1), 0.25);
}

TEST(Derive, DivergenceMeasures) {
  Counters c;
  // A 2-way split: half the lanes idle on every instruction of each side.
  c.values = {{"smsp__thread_inst_executed.sum", 16e6}, {"smsp__inst_executed.sum", 1e6},
              {"smsp__sass_branch_targets.sum", 1000}, {"smsp__sass_branch_targets_threads_uniform.sum", 250}};
  derive(c);
  EXPECT_DOUBLE_EQ(*c.threads_per_instruction, 16);
  EXPECT_DOUBLE_EQ(*c.branch_uniformity, 0.25);
}

TEST(Derive, ClearsWhatItDerivedBefore) {
  Counters c;
  c.values = {{"dram__bytes_read.sum", 10}};
  derive(c);
  c.values.clear();
  derive(c);
  EXPECT_TRUE(c.bytes.empty());
}

// ---- the Activity API's kernel trace against the event timing
namespace {
Measurement events(double median_s) {
  Measurement m;
  m.samples_s = {median_s, median_s, median_s};
  m.stats = summarize(m.samples_s);
  return m;
}
Counters traced(std::vector<double> span_s, std::vector<double> busy_s) {
  Counters c;
  c.trace = KernelTrace{std::move(span_s), std::move(busy_s), {"k"}, ""};
  return c;
}
}  // namespace

// Intervals in ns: a copy in [0, 100), a kernel [50, 150) beside it on another stream, a copy out
// [150, 200) right after (back to back is not at once), and one more kernel [300, 400) after a gap.
TEST(Trace, ConcurrencyIsTheTimeTwoOrMoreRanAtOnce) {
  const Concurrency c = concurrency({{0, 100}, {50, 150}, {150, 200}, {300, 400}});
  EXPECT_DOUBLE_EQ(c.span_s, 400e-9);
  EXPECT_DOUBLE_EQ(c.busy_s, 300e-9);
  EXPECT_DOUBLE_EQ(c.overlap_s, 50e-9);
  const Concurrency nested = concurrency({{0, 1000}, {100, 200}, {150, 300}});  // three at once in [150, 200)
  EXPECT_DOUBLE_EQ(nested.busy_s, 1000e-9);
  EXPECT_DOUBLE_EQ(nested.overlap_s, 200e-9);
  const Concurrency one_stream = concurrency({{10, 20}, {20, 30}, {30, 45}});
  EXPECT_DOUBLE_EQ(one_stream.span_s, 35e-9);
  EXPECT_DOUBLE_EQ(one_stream.overlap_s, 0);
  EXPECT_DOUBLE_EQ(concurrency({}).span_s, 0);
}

TEST(Trace, ChecksMediansOfTheEventsAndTheTrace) {
  const auto t = trace_check(traced({10e-6, 12e-6, 11e-6}, {9e-6, 9e-6, 8e-6}), events(15e-6));
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->events_s, 15e-6);
  EXPECT_DOUBLE_EQ(t->span_s, 11e-6);
  EXPECT_DOUBLE_EQ(t->busy_s, 9e-6);
  EXPECT_NEAR(t->outside_s(), 4e-6, 1e-12);
  EXPECT_NEAR(t->gaps_s(), 2e-6, 1e-12);
  // No trace, a failed one, or no timing: nothing to check.
  EXPECT_FALSE(trace_check(Counters{}, events(1e-3)));
  Counters failed;
  failed.trace = KernelTrace{};
  failed.trace->error = "x";
  EXPECT_FALSE(trace_check(failed, events(1e-3)));
  EXPECT_FALSE(trace_check(traced({1e-3}, {1e-3}), Measurement{}));
}

TEST(Trace, WarnsOnlyWhenEventsAndTraceDisagreeByMoreThanFivePercentAndTwoMicroseconds) {
  auto warning = [](double events_s, double span_s, double busy_s) {
    return trace_warning(*trace_check(traced({span_s}, {busy_s}), events(events_s)));
  };
  EXPECT_EQ(warning(1.04e-3, 1.0e-3, 1.0e-3), "");  // 40 us over, but 3.8% of the events
  EXPECT_EQ(warning(11.5e-6, 10e-6, 10e-6), "");    // 13%, but 1.5 us: event resolution
  const std::string small = warning(8e-6, 4e-6, 4e-6);
  EXPECT_NE(small.find("timing: the CUDA events' median (8.0 us) is 100% above the kernels' own span in CUPTI's "
                       "trace (4.0 us): 4.0 us of each sample is launch overhead outside the kernels"),
            std::string::npos)
      << small;
  EXPECT_EQ(small.find("between its kernels"), std::string::npos) << small;
  const std::string chain = warning(60e-6, 50e-6, 30e-6);  // five kernels with gaps between them
  EXPECT_NE(chain.find("and 20.0 us of the span lies between its kernels"), std::string::npos) << chain;
  const std::string odd = warning(40e-6, 50e-6, 50e-6);
  EXPECT_NE(odd.find("is shorter than the time the kernels ran in CUPTI's trace (50.0 us)"), std::string::npos) << odd;
  // Shorter than the trace's span but not than its kernels' time: the traced runs' launch gaps
  // (they are launched as they come, the timed samples behind a held stream), not a fault.
  EXPECT_EQ(warning(40e-6, 50e-6, 39e-6), "");
}

TEST(MetricList, ParsesTrimsAndDropsRepeats) {
  EXPECT_EQ(parse_metric_list("a.sum, b.sum,a.sum"), (std::vector<std::string>{"a.sum", "b.sum"}));
  EXPECT_THROW(parse_metric_list(""), InputError);
  EXPECT_THROW(parse_metric_list("a.sum,,b.sum"), InputError);
  EXPECT_THROW(parse_metric_list("a.sum,"), InputError);
}

TEST(MetricList, NearNamesPutTheMisspelledOneFirstAndKeepTheRollup) {
  const std::vector<std::string> known = {"dram__bytes_read", "dram__bytes_write", "dram__bytes", "lts__t_bytes",
                                          "sm__cycles_elapsed"};
  const auto near = near_names("dram__bytes_reed.sum", known, 3);
  ASSERT_EQ(near.size(), 3u);
  EXPECT_EQ(near[0], "dram__bytes_read.sum");
  EXPECT_EQ(near_names("x", {}, 3).size(), 0u);
}

TEST(MetricList, RefusesANameNoMetricCouldHaveAndKeepsTheFirstOfEachRepeat) {
  EXPECT_THROW(parse_metric_list("a.sum," + std::string(kMaxMetricName + 1, 'd')), InputError);
  EXPECT_EQ(parse_metric_list(std::string(kMaxMetricName, 'd')).size(), 1u);
  std::string many;
  for (int i = 0; i < 3000; ++i) many += (i ? "," : "") + std::to_string(i % 1000);
  const auto names = parse_metric_list(many);
  ASSERT_EQ(names.size(), 1000u);
  EXPECT_EQ(names.front(), "0");
  EXPECT_EQ(names.back(), "999");
}

TEST(MetricList, NearNamesSuggestsNothingForANameFarFromEveryKnownOne) {
  const std::vector<std::string> known = {"dram__bytes_read", "lts__t_bytes", "sm__cycles_elapsed"};
  EXPECT_TRUE(near_names("zzzzzzzzzzzzzzzz.sum", known).empty());
  EXPECT_TRUE(near_names(std::string(200, 'd'), known).empty());
  EXPECT_EQ(near_names("lts__t_byte.sum", known), (std::vector<std::string>{"lts__t_bytes.sum"}));
}

// The banded distance against the whole table, on every pair of short strings over a small
// alphabet (where edits collide most) and every limit up to past their length.
TEST(MetricList, BoundedEditDistanceIsTheFullOneUpToItsLimit) {
  const auto full = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j)
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    return d[a.size()][b.size()];
  };
  std::vector<std::string> words = {""};
  for (std::size_t len = 1; len <= 5; ++len) {
    std::vector<std::string> next;
    for (const auto& w : words)
      if (w.size() == len - 1)
        for (char c : {'a', 'b', 'c'}) next.push_back(w + c);
    words.insert(words.end(), next.begin(), next.end());
  }
  std::size_t pairs = 0;
  for (std::size_t x = 0; x < words.size(); x += 3)
    for (std::size_t y = 0; y < words.size(); y += 5) {
      const std::size_t d = full(words[x], words[y]);
      for (std::size_t limit = 0; limit <= 6; ++limit) {
        ASSERT_EQ(bounded_edit_distance(words[x], words[y], limit), std::min(d, limit + 1))
            << "'" << words[x] << "' '" << words[y] << "' limit " << limit;
        ++pairs;
      }
    }
  EXPECT_GT(pairs, 10000u);
}

// Real symbols of this build's kernels (nm libroofbench): each lives in an anonymous namespace,
// whose "(" must not end the name, and ncu's list names them in full.
TEST(KernelName, KeepsTheAnonymousNamespaceAndTemplateArgumentsAndDropsTheParameters) {
  EXPECT_EQ(kernel_name("_ZN9roofbench6stream46_GLOBAL__N__3c8e3cb9_8_saxpy_cu_048f99f8_2417712saxpy_kernelEfPKfPfx"),
            "roofbench::stream::(anonymous namespace)::saxpy_kernel");
  EXPECT_EQ(kernel_name("_ZN9roofbench4gemm50_GLOBAL__N__9687ba98_11_06_wgmma_cu_048f99f8_1486412wgmma_kernelI13__nv_"
                        "bfloat16Li128EEEv14CUtensorMap_stS4_Pfiii"),
            "roofbench::gemm::(anonymous namespace)::wgmma_kernel<__nv_bfloat16, 128>");
  EXPECT_EQ(kernel_name("_Z6kernelILi3EEvPf"), "kernel<3>");  // a plain template, its "void " dropped
  EXPECT_EQ(kernel_name("not_mangled"), "not_mangled");
}

// launch/graph on an H200 (2026-11-27): 0 FLOPs counted, 819,200 bytes through L1 and L2 each,
// 102,400 FLOPs declared. The same kernels launched one by one counted the declared FLOPs.
TEST(Counters, NoFlopsCountedForKernelsThatRanIsSaidToBeNoMeasurement) {
  Counters c;
  c.values["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] = 0;
  c.flops = 0;
  c.flops_formula = "fadd + fmul + 2·ffma (SASS, per thread)";
  c.bytes = {{Level::l1, 819200}, {Level::l2, 819200}, {Level::dram, 0}};
  const std::string w = flops_warning(c, 102400);
  EXPECT_NE(w.find("counters: no FLOPs counted where 1.024e+05 are declared, though the kernels moved 1.638e+06 bytes"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("work of another kind (a compare, as relu's) reads 0, and so do kernels launched from a CUDA graph"),
            std::string::npos)
      << w;
  // Not when FLOPs were counted, none declared, no bytes moved, or the counters failed.
  Counters counted = c;
  counted.flops = 102400;
  EXPECT_EQ(flops_warning(counted, 102400), "");
  EXPECT_EQ(flops_warning(c, 0), "");
  Counters idle = c;
  idle.bytes = {{Level::l1, 0}, {Level::l2, 0}};
  EXPECT_EQ(flops_warning(idle, 102400), "");
  Counters failed = c;
  failed.error = "refused";
  EXPECT_EQ(flops_warning(failed, 102400), "");
  Counters unasked = c;
  unasked.flops.reset();
  EXPECT_EQ(flops_warning(unasked, 102400), "");
}
