// CUPTI's Profiler Host API on chip GH100 (H100, H200) without a GPU: every default metric set
// of every CUDA benchmark is valid there and fits the pass budget; wrong names are refused with
// near names; failure codes become reasons a user can act on.
#include <gtest/gtest.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include "bench/harness.h"
#include "roofline/cupti/cupti_check.h"
#include "roofline/cupti/host.h"
#include "roofline/cupti/metrics.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::cupti;

TEST(CuptiHost, KnowsTheHopperChip) {
  const auto chips = supported_chips();
  EXPECT_NE(std::find(chips.begin(), chips.end(), "GH100"), chips.end());
  EXPECT_THROW(MetricHost("GX999"), InputError);
}

TEST(CuptiHost, EveryCudaBenchmarksDefaultSetIsValidOnGH100AndFitsThePassBudget) {
  MetricHost host(kHopperChip);
  const auto variants = roofbench::testing::variants_of(Backend::cuda);
  ASSERT_FALSE(variants.empty());
  std::map<std::vector<std::string>, int> seen;
  for (const Variant* v : variants) {
    const BenchmarkResult b = declare(*v, v->sizes.front());
    const auto metrics = default_metrics(b);
    EXPECT_TRUE(host.unknown(metrics).empty()) << v->base_name();
    auto it = seen.find(metrics);
    if (it == seen.end()) it = seen.emplace(metrics, host.passes(metrics)).first;
    EXPECT_GE(it->second, 1) << v->base_name();
    EXPECT_LE(it->second, kPassBudget) << v->base_name();
  }
  EXPECT_GE(seen.size(), 5u);  // fp32, fp64, half, two tensor types, divergence
}

TEST(CuptiHost, PassCountsGrowWithTheMetricList) {
  MetricHost host(kHopperChip);
  const std::vector<std::string> hw = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                       "lts__t_sectors_srcunit_tex.sum", "l1tex__t_bytes.sum"};
  EXPECT_EQ(host.passes(hw), 1);
  // SASS instruction metrics beside hardware ones cost a pass (roofline_cupti.md §3).
  auto with_sass = hw;
  with_sass.push_back("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  EXPECT_EQ(host.passes(with_sass), 2);
  EXPECT_GE(host.max_hardware_metrics_per_pass(), static_cast<int>(hw.size()));
}

TEST(CuptiHost, NamesCopiedFromOtherChipsAreUnknownOnGH100) {
  MetricHost host(kHopperChip);
  // Ampere/Ada spellings that fail on Hopper.
  const std::vector<std::string> wrong = {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", "dram__bytes_op_read.sum",
                                          "l1tex__lsu_writeback_active_mem_lg.sum"};
  const auto bad = host.unknown(wrong);
  ASSERT_EQ(bad.size(), wrong.size());
  EXPECT_FALSE(bad[0].near.empty());
}

TEST(CuptiHost, UnknownNamesAreRefusedWithTheirNearNames) {
  MetricHost host(kHopperChip);
  try {
    host.require_known({"gpu__time_duration.sum", "dram__bytes_reed.sum"}, "--metrics");
    FAIL() << "a misspelled metric was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'dram__bytes_reed.sum'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dram__bytes_read.sum"), std::string::npos) << msg;  // the near name, with its rollup
    EXPECT_EQ(msg.find("'gpu__time_duration.sum'"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
  }
  EXPECT_THROW(host.configure({"no_such__metric.sum"}), InputError);
  // A known base name without its rollup: refused up front, its rollups suggested (CUPTI knows
  // the name but will not add it to a configuration).
  try {
    host.require_known({"dram__bytes_read"}, "--metrics");
    FAIL() << "a metric without its rollup was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'dram__bytes_read' (near: dram__bytes_read.sum"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(host.configure({"gpu__time_duration"}), InputError);
  // A refused list leaves the host usable.
  EXPECT_EQ(host.passes({"dram__bytes_read.sum"}), 1);
}

TEST(CuptiHost, DeviceLevelMetricsMixedWithPerSmOnesAreRefusedAsInput) {
  MetricHost host(kHopperChip);
  // Each list alone is fine; together CUPTI refuses them (reference §7.1: NVLink, C2C and PCIe
  // metrics are device-level).
  EXPECT_GE(host.passes({"nvlrx__bytes.sum"}), 1);
  EXPECT_GE(host.passes({"dram__bytes_read.sum"}), 1);
  try {
    host.configure({"nvlrx__bytes.sum", "dram__bytes_read.sum"});
    FAIL() << "a list CUPTI cannot schedule was configured";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("will not schedule nvlrx__bytes.sum,dram__bytes_read.sum together on GH100"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("from cuptiProfilerHostConfigAddMetrics"), std::string::npos) << msg;
    EXPECT_NE(msg.find("device-level"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
  }
  EXPECT_EQ(host.passes({"dram__bytes_read.sum"}), 1);  // the host is still usable
}

TEST(CuptiHost, EveryBaseMetricIsListedOnce) {
  MetricHost host(kHopperChip);
  const auto& all = host.base_metrics();
  EXPECT_GT(all.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_NE(std::find(all.begin(), all.end(), "dram__bytes_read"), all.end());
}

TEST(CuptiFailure, EachFailureModeIsOneLineWithAFixWhereThereIsOne) {
  const Failure perm = explain_failure(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiProfilerGetCounterAvailability");
  EXPECT_NE(perm.reason.find("no permission"), std::string::npos);
  EXPECT_NE(perm.reason.find("cuptiProfilerGetCounterAvailability"), std::string::npos);
  EXPECT_NE(perm.hint.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(explain_failure(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiProfilerInitialize").reason.find("ncu"),
            std::string::npos);
  EXPECT_NE(explain_failure(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, "x").reason.find("virtualized"),
            std::string::npos);
  EXPECT_NE(explain_failure(CUPTI_ERROR_INVALID_METRIC_NAME, "x").reason.find("not available on this chip"),
            std::string::npos);
  EXPECT_NE(explain_failure(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "x").reason.find("MIG"), std::string::npos);
  for (int code : {1, 7, 27, 33, 35, 39, 40, 41, 42, 43, 45, 46, 999}) {
    const Failure f = explain_failure(code, "cuptiRangeProfilerStart");
    EXPECT_FALSE(f.reason.empty()) << code;
    EXPECT_EQ(f.reason.find('\n'), std::string::npos) << code;
  }
}

// A device-wide failure stops collection for the run; NOT_SUPPORTED met while profiling one
// benchmark (the device already passed cuptiProfilerDeviceSupported) costs only that benchmark.
TEST(CuptiFailure, OnlyDeviceWideFailuresEndTheSession) {
  for (int code : {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
                   CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                   CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED, CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED,
                   CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED, CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED,
                   CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED})
    EXPECT_TRUE(ends_session(code)) << code;
  for (int code : {CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_INVALID_DEVICE, CUPTI_ERROR_HARDWARE_BUSY,
                   CUPTI_ERROR_INVALID_METRIC_NAME, CUPTI_ERROR_UNKNOWN, static_cast<CUptiResult>(999)})
    EXPECT_FALSE(ends_session(code)) << code;
  const Failure one = explain_benchmark_failure(CUPTI_ERROR_NOT_SUPPORTED, "cuptiRangeProfilerSetConfig");
  EXPECT_NE(one.reason.find("this benchmark"), std::string::npos) << one.reason;
  EXPECT_NE(one.reason.find("CUPTI_ERROR_NOT_SUPPORTED from cuptiRangeProfilerSetConfig"), std::string::npos) << one.reason;
  EXPECT_EQ(one.reason.find("device does not support"), std::string::npos) << one.reason;
  // Every other result reads as it does when counters are opened.
  for (int code : {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, static_cast<CUptiResult>(999)})
    EXPECT_EQ(explain_benchmark_failure(code, "x").reason, explain_failure(code, "x").reason) << code;
}

TEST(CuptiFailure, UnsupportedDevicesSayWhy) {
  DeviceSupport ok;
  EXPECT_EQ(unsupported_reason(ok), "");
  DeviceSupport vgpu;
  vgpu.overall = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  vgpu.vgpu = CUPTI_PROFILER_CONFIGURATION_DISABLED;
  EXPECT_NE(unsupported_reason(vgpu).find("virtual GPU: profiling disabled"), std::string::npos);
  DeviceSupport old;
  old.overall = old.architecture = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  EXPECT_NE(unsupported_reason(old).find("compute capability 7.0"), std::string::npos);
}

TEST(CuptiHost, AConfigurationKeepsTheHostObjectItsMetricsWereAddedTo) {
  // Counter data is evaluated with the object that built its configuration (NVIDIA's
  // range_profiling sample, nvbench): the configuration owns it, and outlives the MetricHost.
  const std::vector<std::string> metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  std::shared_ptr<const MetricConfig> cfg;
  {
    MetricHost host(kHopperChip);
    cfg = host.configure(metrics);
  }
  EXPECT_EQ(cfg->metrics(), metrics);
  EXPECT_FALSE(cfg->image().empty());
  EXPECT_EQ(cfg->passes(), 1);
  // Bytes that are no counter-data image: CUPTI refuses them on that live object (a GPU test,
  // CountersOnGpu.*, evaluates real counter data).
  EXPECT_THROW(cfg->evaluate(std::vector<std::uint8_t>(256, 0), 0), CuptiError);
}
