// Nsight Compute's CSV beside roofbench's CUPTI counters (reports/crosscheck.h): the table is
// read whatever ncu prints around it and in whatever unit prefixes; one run of the benchmark is
// found among ncu's launches by the kernel names of its trace; both sets of counters go through
// the same derivation.
#include <gtest/gtest.h>

#include "reports/crosscheck.h"
#include "tests/testing.h"

using namespace roofbench;

namespace {

// What `ncu --csv --print-units base --metrics ...` prints for a run of roofbench: its own lines,
// ==PROF== lines, then one row per metric of each profiled launch. The cache flush comes before
// each run of the GEMM.
const char* kNcuOutput = R"NCU(==PROF== Connected to process 4242 (/tmp/roofbench/bin/roofbench)
roofbench 0.1.0 on NVIDIA H100 80GB HBM3 (cuda:0, sm 9.0, 132 SMs, driver 13.0, runtime 13.0)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","roofbench","127.0.0.1","flush_read_kernel","1","7","(256, 1, 1)","(528, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","30,112"
"0","4242","roofbench","127.0.0.1","flush_read_kernel","1","7","(256, 1, 1)","(528, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","100,663,296"
"1","4242","roofbench","127.0.0.1","wgmma_gemm_kernel","1","7","(384, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","30.5"
"1","4242","roofbench","127.0.0.1","wgmma_gemm_kernel","1","7","(384, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","16.8"
"1","4242","roofbench","127.0.0.1","wgmma_gemm_kernel","1","7","(384, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","16,777,216"
"1","4242","roofbench","127.0.0.1","wgmma_gemm_kernel","1","7","(384, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","sm__ops_path_tensor_src_bf16_dst_fp32.sum","","17,179,869,184"
"2","4242","roofbench","127.0.0.1","wgmma_gemm_kernel","1","7","(384, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","29,900"
==PROF== Disconnected from process 4242
)NCU";

Results gemm_run() {
  Results r = roofbench::testing::sample_results();
  BenchmarkResult b = roofbench::testing::kernel("wgmma", 2.0 * 2048 * 2048 * 2048, 3.0 * 2048 * 2048 * 2 + 4.0 * 2048 * 2048, 31e-6,
                                      Precision::bf16);
  b.name = "gemm/wgmma/bf16/M:2048/N:2048/K:2048";
  Counters c;
  c.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
               "sm__ops_path_tensor_src_bf16_dst_fp32.sum"};
  c.values = {{"gpu__time_duration.sum", 30000},
              {"dram__bytes_read.sum", 16.0e6},
              {"dram__bytes_write.sum", 16777216},
              {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 17179869184.0}};
  KernelTrace t;
  t.kernels = {"roofbench::gemm::(anonymous namespace)::wgmma_gemm_kernel<128, 256, __nv_bfloat16>"};
  t.span_s = t.busy_s = {28e-6, 29e-6, 31e-6};
  c.trace = t;
  cupti::derive(c);
  b.counters = c;
  r.benchmarks.push_back(b);
  return r;
}

}  // namespace

TEST(Crosscheck, ReadsNcusTableInCuptisUnitsWhateverSurroundsIt) {
  const auto k = parse_ncu_csv(kNcuOutput);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].name, "flush_read_kernel");
  EXPECT_DOUBLE_EQ(k[0].metrics.at("dram__bytes_read.sum"), 100663296);
  EXPECT_DOUBLE_EQ(k[1].metrics.at("gpu__time_duration.sum"), 30500);  // 30.5 us, in ns as CUPTI gives it
  EXPECT_DOUBLE_EQ(k[1].metrics.at("dram__bytes_read.sum"), 16.8e6);
  EXPECT_DOUBLE_EQ(k[1].metrics.at("sm__ops_path_tensor_src_bf16_dst_fp32.sum"), 17179869184.0);
  EXPECT_THROW(parse_ncu_csv("==PROF== no kernels were profiled\n"), InputError);
}

TEST(Crosscheck, KernelNamesAreComparedByTheirFunctionName) {
  EXPECT_EQ(kernel_base_name("void roofbench::(anonymous namespace)::map_kernel<Sin>(float const*, float*, long long, Sin)"),
            "map_kernel");
  EXPECT_EQ(kernel_base_name("roofbench::gemm::(anonymous namespace)::wgmma_gemm_kernel<128, 256, __nv_bfloat16>"),
            "wgmma_gemm_kernel");
  EXPECT_EQ(kernel_base_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64"),
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64");
}

TEST(Crosscheck, OneRunOfTheBenchmarkBesideItsCuptiCountersAndDeclaredWork) {
  const Results r = gemm_run();
  const Crosscheck c = crosscheck(r, "gemm/wgmma/bf16/M:2048/N:2048/K:2048", parse_ncu_csv(kNcuOutput));
  ASSERT_EQ(c.kernels, std::vector<std::string>{"wgmma_gemm_kernel"});  // the first run, not the flush
  ASSERT_GE(c.rows.size(), 4u);
  // ncu's kernel duration beside the traced kernels' median own time (29 µs here) and the CUDA-event median,
  // then beside CUPTI's range time (30 µs: the range holds more than the kernel).
  EXPECT_NE(c.rows[0].quantity.find("kernel time"), std::string::npos);
  EXPECT_DOUBLE_EQ(*c.rows[0].ncu, 30.5e-6);
  EXPECT_DOUBLE_EQ(*c.rows[0].cupti, 29e-6);
  EXPECT_DOUBLE_EQ(*c.rows[0].declared, 31e-6);
  EXPECT_NE(c.rows[1].quantity.find("range time"), std::string::npos);
  EXPECT_DOUBLE_EQ(*c.rows[1].ncu, 30.5e-6);
  EXPECT_DOUBLE_EQ(*c.rows[1].cupti, 30e-6);
  EXPECT_DOUBLE_EQ(*c.rows[1].declared, 31e-6);
  EXPECT_DOUBLE_EQ(*c.rows[2].ncu, 16.8e6 + 16777216);
  EXPECT_DOUBLE_EQ(*c.rows[2].declared, r.benchmarks[0].bytes);
  EXPECT_DOUBLE_EQ(*c.rows[3].ncu, 17179869184.0);  // tensor ops
  EXPECT_DOUBLE_EQ(*c.rows[3].declared, 2.0 * 2048 * 2048 * 2048);
  const std::string md = render_crosscheck_markdown(c);
  EXPECT_NE(md.find("| FLOPs (sm__ops_path_tensor_src_bf16_dst_fp32.sum (tensor ops)) | 17.2 GFLOP |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1.000 |"), std::string::npos) << md;  // tensor ops: ncu / declared
}

TEST(Crosscheck, TheJsonHoldsTheSameRowsWithNullWhereASideHasNone) {
  const Results r = gemm_run();
  const Crosscheck c = crosscheck(r, "gemm/wgmma/bf16/M:2048/N:2048/K:2048", parse_ncu_csv(kNcuOutput));
  const nlohmann::json j = crosscheck_json(c);
  EXPECT_EQ(j.at("benchmark"), c.benchmark);
  EXPECT_EQ(j.at("kernels"), nlohmann::json(c.kernels));
  ASSERT_EQ(j.at("rows").size(), c.rows.size());
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const auto& row = j.at("rows")[i];
    EXPECT_EQ(row.at("quantity"), c.rows[i].quantity);
    EXPECT_EQ(row.at("unit"), c.rows[i].unit);
    for (const auto& [key, v] : {std::pair{"ncu", c.rows[i].ncu}, {"cupti", c.rows[i].cupti}, {"declared", c.rows[i].declared}})
      if (v)
        EXPECT_DOUBLE_EQ(row.at(key).get<double>(), *v) << key << " of " << c.rows[i].quantity;
      else
        EXPECT_TRUE(row.at(key).is_null()) << key << " of " << c.rows[i].quantity;
  }
  EXPECT_DOUBLE_EQ(j["rows"][0]["ncu"].get<double>(), 30.5e-6);
  EXPECT_TRUE(j["rows"].back()["declared"].is_null());  // L2 bytes: nothing declared
}

TEST(Crosscheck, NcusKernelTimeStandsBesideTheTracedKernelsOwnTimeNotTheirSpan) {
  // Kernels traced as the host launched them: their span holds the launch gaps (25-55 us a kernel
  // under the Activity API on an H200), which ncu's per-kernel durations do not.
  Results r = gemm_run();
  r.benchmarks[0].counters->trace->span_s = {60e-6, 61e-6, 62e-6};
  const Crosscheck c = crosscheck(r, "gemm/wgmma/bf16/M:2048/N:2048/K:2048", parse_ncu_csv(kNcuOutput));
  ASSERT_FALSE(c.rows.empty());
  EXPECT_NE(c.rows[0].quantity.find("own time"), std::string::npos) << c.rows[0].quantity;
  EXPECT_DOUBLE_EQ(*c.rows[0].cupti, 29e-6);  // the busy time's median, not the span's 61 us
}

TEST(Crosscheck, SaysWhatIsMissing) {
  const Results r = gemm_run();
  const auto ncu = parse_ncu_csv(kNcuOutput);
  EXPECT_THROW(crosscheck(r, "gemm/none/bf16/M:1", ncu), InputError);
  Results no_trace = r;
  no_trace.benchmarks[0].counters->trace.reset();
  try {
    crosscheck(no_trace, r.benchmarks[0].name, ncu);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run it with --counters"), std::string::npos) << e.what();
  }
  Results other = r;
  other.benchmarks[0].counters->trace->kernels = {"saxpy_kernel"};
  EXPECT_THROW(crosscheck(other, r.benchmarks[0].name, ncu), InputError);
}
