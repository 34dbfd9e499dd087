// Counters read on a real GPU (label `gpu`): the checks issue 5 asks for, each against the
// kernel's declared work. Skipped, with the reason, without a GPU or without counter access; the
// kernel-trace test needs only the Activity API, which works without counter access.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "bench/counters.h"
#include "bench/harness.h"
#include "bench/stats.h"
#include "tests/gpu_skip.h"

using namespace roofbench;

namespace {

const Variant& variant(const std::string& base) {
  for (const auto& v : registry())
    if (v.backend == Backend::cuda && v.base_name() == base) return v;
  throw std::runtime_error("no CUDA variant " + base);
}

struct Collected {
  BenchmarkResult declared;
  Counters counters;
  std::string skip;        // why there are no counters to check
  std::string trace_skip;  // why there is no kernel trace to check
  std::optional<Measurement> timed;  // with `time_it`: the harness's event timing, after the counters
};

Collected collect(const std::string& base, const Params& p, bool time_it = false) {
  Collected out;
  if (const std::string why = roofbench::testing::no_gpu(); !why.empty()) {
    out.skip = out.trace_skip = why + ": counters are not read on this machine";
    return out;
  }
  auto dev = make_cuda_device(0);
  nlohmann::json status;
  CounterRequest req;
  req.enabled = true;
  auto cc = open_counters(*dev, req, &status);
  if (!cc) {
    out.skip = out.trace_skip =
        "neither counters nor a kernel trace on this GPU: " + status.value("reason", std::string("?"));
    return out;
  }
  if (!status.value("available", false))
    out.skip = "counters unavailable on this GPU (the kernel trace goes on without them): " +
               status.value("reason", std::string("?"));
  if (status.contains("trace_unavailable"))
    out.trace_skip = "no kernel trace on this GPU: " + status["trace_unavailable"].get<std::string>();
  const Variant& v = variant(base);
  out.declared = declare(v, p);
  auto inst = v.make(p);
  const Verification ok = prepare_and_verify(*dev, *inst, 7);
  if (!ok.ok) throw std::runtime_error(v.name(p) + " failed verification: " + ok.detail);
  cc->collect(*dev, *inst, out.declared, 7, /*cold=*/true);
  out.counters = *out.declared.counters;
  if (time_it) {
    MeasureOptions opt;  // as a run times it: cold caches, launches hidden behind a held stream
    opt.max_time_s = 1.0;
    out.timed = measure(*dev, *inst, opt);
  }
  // A profiler refused only when it starts (Enable, SetConfig, Start) turns counters off then:
  // skipped with that reason, not failed.
  const nlohmann::json after = cc->status();
  if (out.skip.empty() && !after.value("available", false))
    out.skip = "counters unavailable on this GPU (refused when collecting): " + after.value("reason", std::string("?"));
  if (out.trace_skip.empty() && after.contains("trace_unavailable"))
    out.trace_skip = "no kernel trace on this GPU: " + after["trace_unavailable"].get<std::string>();
  return out;
}

}  // namespace

TEST(CountersOnGpu, StreamingKernelMovesItsDeclaredBytesThroughHbm) {
  // 2^28 (2 GiB read, 1 GiB written): the L2's dirty lines left unwritten when the range ends (up
  // to its 50-60 MB) stay well under the 5%.
  const Collected c = collect("stream/saxpy/fp32", {{"n", 1 << 28}});
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  ASSERT_TRUE(c.counters.ok()) << c.counters.error;
  EXPECT_GE(c.counters.passes, 1);
  ASSERT_TRUE(c.counters.bytes.count(Level::dram));
  EXPECT_NEAR(c.counters.bytes.at(Level::dram) / c.declared.bytes, 1.0, 0.05);
  ASSERT_TRUE(c.counters.flops);
  EXPECT_NEAR(*c.counters.flops / c.declared.flops, 1.0, 0.01);  // one FFMA per element
  ASSERT_TRUE(c.counters.time_s);
  EXPECT_GT(*c.counters.time_s, 0);
  ASSERT_TRUE(c.counters.sm_clock_hz);
  EXPECT_GT(*c.counters.sm_clock_hz, 1e8);
}

TEST(CountersOnGpu, TensorOpsOfABf16GemmAreTwiceMNK) {
  // Nsight Compute plots sm__ops_path_tensor_* as OP/s: this establishes that one
  // multiply-add counts as two ops on this chip (it fails, by half, if it counts as one).
  const Collected c = collect("gemm/cublas/bf16", {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  ASSERT_TRUE(c.counters.ok()) << c.counters.error;
  const double ops = c.counters.values.at("sm__ops_path_tensor_src_bf16_dst_fp32.sum");
  EXPECT_NEAR(ops / (2.0 * 4096 * 4096 * 4096), 1.0, 0.01);
}

TEST(CountersOnGpu, NaiveGemmTrafficAtL1AndL2FarExceedsHbm) {
  const Collected c = collect("gemm/naive/fp32", {{"M", 2048}, {"N", 2048}, {"K", 2048}});
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  ASSERT_TRUE(c.counters.ok()) << c.counters.error;
  const double hbm = c.counters.bytes.at(Level::dram), l2 = c.counters.bytes.at(Level::l2), l1 = c.counters.bytes.at(Level::l1);
  EXPECT_GT(l2, 4 * hbm) << "L2 " << l2 << " B, HBM " << hbm << " B";
  EXPECT_GT(l1, 4 * hbm) << "L1 " << l1 << " B, HBM " << hbm << " B";
}

TEST(CountersOnGpu, DivergentBranchesShowFewerThreadsPerInstruction) {
  const Collected uni = collect("divergence/uniform/fp32", {{"n", 1 << 22}, {"iters", 256}, {"ways", 32}});
  if (!uni.skip.empty()) GTEST_SKIP() << uni.skip;
  const Collected div = collect("divergence/divergent/fp32", {{"n", 1 << 22}, {"iters", 256}, {"ways", 32}});
  ASSERT_TRUE(uni.counters.ok()) << uni.counters.error;
  ASSERT_TRUE(div.counters.ok()) << div.counters.error;
  ASSERT_TRUE(uni.counters.threads_per_instruction && div.counters.threads_per_instruction);
  ASSERT_TRUE(uni.counters.branch_uniformity && div.counters.branch_uniformity);
  EXPECT_GT(*uni.counters.threads_per_instruction, 28);
  EXPECT_LT(*div.counters.threads_per_instruction, 4);
  EXPECT_LT(*div.counters.branch_uniformity, *uni.counters.branch_uniformity);
}

// The five-kernel sin^2 + cos^2 chain, traced: five kernels a run, in launch order, every run
// alike. The traced runs are launched from the host as they come, so their span holds the host's
// launch gaps: on an H200 with the Activity API on, 25 to 55 us before each kernel of about 38 us
// (smoke stage, 2026-11-27), so the span is no measure of the kernels. The time they ran (`busy`,
// the union of their intervals) is: the same chain timed as a run times it, held behind a
// blocking kernel so that the events bracket the GPU's work alone, takes that time plus a few us
// between kernels. Needs only the Activity API.
TEST(CountersOnGpu, TheKernelTraceSeesEachKernelOfAChain) {
  const Collected c = collect("fusion/sincos_unfused/fp32", {{"n", 1 << 24}}, /*time_it=*/true);
  if (!c.trace_skip.empty()) GTEST_SKIP() << c.trace_skip;
  ASSERT_TRUE(c.counters.trace);
  const KernelTrace& t = *c.counters.trace;
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_EQ(t.kernels.size(), 5u);
  // Named in full, as ncu names them (crosscheck matches the two): sin, cos, two squares (maps), the add (a zip).
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    EXPECT_NE(t.kernels[i].find(i == 4 ? "(anonymous namespace)::zip_kernel<" : "(anonymous namespace)::map_kernel<"),
              std::string::npos)
        << t.kernels[i];
  EXPECT_EQ(t.streams, 1u);
  EXPECT_EQ(t.span_s.size(), 5u);  // five traced runs
  ASSERT_EQ(t.busy_s.size(), t.span_s.size());
  ASSERT_EQ(t.overlap_s.size(), t.span_s.size());
  for (std::size_t i = 0; i < t.span_s.size(); ++i) {
    EXPECT_GT(t.busy_s[i], 0) << "run " << i + 1;
    EXPECT_LE(t.busy_s[i], t.span_s[i] * (1 + 1e-9)) << "run " << i + 1;
    EXPECT_LT(t.overlap_s[i], 1e-3 * t.span_s[i]) << "run " << i + 1 << ": one stream, one kernel at a time";
  }
  ASSERT_TRUE(c.timed);
  const double events = c.timed->stats.median, busy = summarize(t.busy_s).median;
  const double span = summarize(t.span_s).median;
  std::printf("chain: events %.1f us (held), trace busy %.1f us, span %.1f us (launched as they come)\n", events * 1e6,
              busy * 1e6, span * 1e6);
  // The events hold every kernel of a run: the kernels ran no longer than they (3% for the
  // difference between the traced and the timed runs).
  EXPECT_LE(busy, 1.03 * events);
  // ...and little else: behind a held stream, the gaps between five kernels are a few us each.
  EXPECT_GT(busy, 0.85 * events);
}

// The overlap lesson, traced (issue 23): the pipelined form's copies and kernels run on four
// streams and partly at once; the serial form's, on one stream, never at once. 16 chunks: 16
// kernels and 32 copies a run. Needs only the Activity API.
TEST(CountersOnGpu, ThePipelinedFormsCopiesAndKernelsRunAtOnceOnSeveralStreams) {
  const Params p = {{"n", 1 << 24}, {"chunks", 16}, {"iters", 2048}};
  const Collected piped = collect("overlap/streams4/fp32", p);
  if (!piped.trace_skip.empty()) GTEST_SKIP() << piped.trace_skip;
  const Collected serial = collect("overlap/serial/fp32", p);
  for (const Collected* c : {&piped, &serial}) {
    ASSERT_TRUE(c->counters.trace);
    ASSERT_TRUE(c->counters.trace->ok()) << c->counters.trace->error;
    EXPECT_EQ(c->counters.trace->kernels.size(), 16u);
    EXPECT_EQ(c->counters.trace->copies, 32u);
  }
  const KernelTrace& t = *piped.counters.trace;
  EXPECT_EQ(t.streams, 4u);
  for (std::size_t i = 0; i < t.span_s.size(); ++i)  // at least a quarter of each run overlaps
    EXPECT_GT(t.overlap_s.at(i), 0.25 * t.span_s[i]) << "run " << i + 1;
  const KernelTrace& s = *serial.counters.trace;
  EXPECT_EQ(s.streams, 1u);
  // On one stream nothing overlaps; copy records are stamped by the copy engines and kernel
  // records by the SMs' front end, so a few ns of skew at each of 47 hand-overs are allowed.
  for (std::size_t i = 0; i < s.overlap_s.size(); ++i)
    EXPECT_LT(s.overlap_s[i], 1e-3 * s.span_s.at(i)) << "run " << i + 1;
}

// The same chain: gpu__time_duration covers the profiled range (the same five kernels, one replay
// pass), so the trace's median span should be within 20% of it. The range also holds the host's
// launch of the first kernel and the synchronize before it closes (a few to tens of µs), so the
// chain is 2^26 elements long (about 3 GB moved, 0.6 to 0.9 ms on HBM3/HBM3e): those µs stay a
// few percent.
TEST(CountersOnGpu, TheKernelTraceAgreesWithTheCounterTime) {
  const Collected c = collect("fusion/sincos_unfused/fp32", {{"n", 1 << 26}});
  if (!c.trace_skip.empty()) GTEST_SKIP() << c.trace_skip;
  if (!c.skip.empty()) GTEST_SKIP() << c.skip;
  ASSERT_TRUE(c.counters.trace && c.counters.trace->ok());
  ASSERT_TRUE(c.counters.time_s) << c.counters.error;
  std::vector<double> spans = c.counters.trace->span_s;
  std::sort(spans.begin(), spans.end());
  EXPECT_NEAR(spans[spans.size() / 2] / *c.counters.time_s, 1.0, 0.2);
}
