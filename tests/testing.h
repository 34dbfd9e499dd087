#pragma once
// Builders for results models with known numbers, shared by the host tests.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/registry.h"
#include "bench/results.h"
#include "roofbench/main.h"
#include "roofbench/splitmix.h"
#include "roofline/cupti/metrics.h"

namespace roofbench::testing {

// Where a test keeps the files it writes: a folder of this build tree's own
// (ROOFBENCH_TEST_SCRATCH, set by tests/CMakeLists.txt), so that two builds testing at once (the
// release and sanitized builds, two CI jobs on one machine) never write into each other's folders
// by name, as they did under /tmp.
inline std::filesystem::path scratch_path(const std::string& name) {
  static const std::filesystem::path root = [] {
    const std::filesystem::path r = ROOFBENCH_TEST_SCRATCH;
    std::filesystem::create_directories(r);
    return r;
  }();
  return root / name;
}

// The whole command line in this process (roofbench_main), as a binary of the test's own: the
// variants the test registers run beside roofbench's.
inline int run_main(std::vector<std::string> args) {
  // roofbench_main may restart the process for OpenBLAS (bench/openblas_core.h) with roofbench's
  // arguments, which carry no --gtest_filter: without this, the restarted test binary ran every
  // test in it, and two such processes wrote into each other's scratch folders (a CI failure).
  // So the restarted binary runs this test again, alone, and roofbench's run goes on there.
  if (const auto* t = ::testing::UnitTest::GetInstance()->current_test_info())
    setenv("GTEST_FILTER", (std::string(t->test_suite_name()) + "." + t->name()).c_str(), 1);
  args.insert(args.begin(), "roofbench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);  // execv's argv ends so (roofbench_main may restart for OpenBLAS)
  return roofbench_main(static_cast<int>(args.size()), argv.data());
}

// For runs whose test looks at anything but the ceilings: --skip this, and the CPU measures three
// (DRAM update, L1, FP32 FMA: still a roofline) in a second instead of ten in a quarter of a
// minute. The DRAM roof kept is the in-place update: read-only is no roof for a kernel that reads
// and writes (a 2-core VM writes faster than it reads), and SAXPY above it is implausible.
inline constexpr const char* kFewCeilings = "ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_)";
// Fewer still, no DRAM ceiling: for runs compared by their times, not placed (each DRAM ceiling
// moves 512 MiB arrays on a VM that reports a 260 MiB LLC).
inline constexpr const char* kNoDramCeilings = "ceiling/(dram_|l2|l3|fp64|math_)";

inline Measurement measurement_of(std::vector<double> samples) {
  Measurement m;
  m.samples_s = std::move(samples);
  m.stats = summarize(m.samples_s);
  m.warmup_runs = 1;
  m.stop_reason = "noise_target";
  m.timer = "steady-clock";
  m.clock_before_hz = 2.0e9;
  m.clock_after_hz = 2.0e9;
  return m;
}

inline Ceiling ceiling(const std::string& name, CeilingKind kind, double value, const std::string& unit) {
  Ceiling c;
  c.name = name;
  c.kind = kind;
  c.value = c.value_start = value;
  c.value_unit = unit;
  c.method = "test";
  c.benchmark = "ceiling/" + name;
  c.measurement = measurement_of({1.0});
  return c;
}

inline Ceiling bandwidth_ceiling(const std::string& name, double bytes_per_s) {
  Ceiling c = ceiling(name, CeilingKind::bandwidth, bytes_per_s, "B/s");
  c.level = Level::dram;
  return c;
}

// A host-link ceiling ("pcie_h2d_pinned"), which a copy pass names (Work::phase(name, ceiling)).
inline Ceiling pcie_ceiling(const std::string& name, double bytes_per_s) {
  Ceiling c = bandwidth_ceiling(name, bytes_per_s);
  c.level = Level::pcie;
  return c;
}

inline Ceiling compute_ceiling(const std::string& name, Precision p, double flop_per_s) {
  Ceiling c = ceiling(name, CeilingKind::compute, flop_per_s, "FLOP/s");
  c.precision = p;
  c.unit = Unit::simd;
  return c;
}

inline Ceiling transcendental_ceiling(const std::string& function, double calls_per_s) {
  Ceiling c = ceiling("math_" + function, CeilingKind::transcendental, calls_per_s, "op/s");
  c.precision = Precision::fp32;
  c.unit = Unit::simd;
  c.function = function;
  return c;
}

inline Ceiling launch_ceiling(const std::string& path, double launches_per_s) {
  Ceiling c = ceiling("launch_" + path, CeilingKind::launch, launches_per_s, "launch/s");
  c.unit = Unit::simd;
  c.function = path;
  return c;
}

// A verified kernel with the given work that took `seconds` (every sample).
inline BenchmarkResult kernel(const std::string& variant, double flops, double bytes, double seconds,
                              Precision p = Precision::fp32) {
  BenchmarkResult b;
  b.family = "gemm";
  b.variant = variant;
  b.precision = p;
  b.backend = Backend::cpu;
  b.unit = Unit::simd;
  b.level = Level::dram;
  b.params = {{"n", 1}};
  b.name = "gemm/" + variant + "/" + to_string(p) + "/n:1";
  b.flops = flops;
  b.bytes = bytes;
  b.work = "test";
  b.verification.ok = true;
  b.verification.checked = 1;
  b.measurement = measurement_of({seconds, seconds, seconds});
  return b;
}

// `n` timing samples around `center` seconds with a relative spread of about `rel_sd` (the sum
// of four uniforms: bell-shaped, bounded), from a fixed seed.
inline std::vector<double> noisy_samples(double center, double rel_sd, int n, std::uint64_t seed) {
  std::vector<double> v;
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < n; ++i) {
    double z = 0;
    for (int k = 0; k < 4; ++k) z += static_cast<double>(splitmix64(s) >> 11) * 0x1.0p-53 - 0.5;
    v.push_back(center * (1 + rel_sd * z * std::sqrt(3.0)));  // sd of the sum of 4 U(-.5,.5) is 1/sqrt(3)
  }
  return v;
}

// Roofs: 100 GB/s DRAM (copy 80 GB/s below it), 1 TFLOP/s FP32, 0.5 TFLOP/s FP64.
inline Results sample_results() {
  Results r;
  r.provenance = {{"roofbench_version", "0.1.0"},
                  {"git_commit", "abc"},
                  {"utc_time", "2026-11-21T00:00:00Z"},
                  {"host", "test"},
                  {"command_line", "roofbench run"}};
  r.device = {{"kind", "cpu"}, {"name", "Test CPU"}, {"threads", 2}, {"isa", "avx2+fma"}};
  r.settings = {{"quick", true}};
  r.ceilings = {bandwidth_ceiling("dram_update", 100e9), bandwidth_ceiling("dram_copy", 80e9),
                compute_ceiling("fp32_fma", Precision::fp32, 1e12),
                compute_ceiling("fp64_fma", Precision::fp64, 0.5e12)};
  return r;
}

// Counters as a profiled run of `b` would record them: FP32 FMAs for `flops`, and the bytes
// counted at HBM, L2 (in 32-byte sectors) and L1; derived fields filled.
inline Counters counters_of(double flops, double dram, double l2, double l1, int passes = 2) {
  Counters c;
  c.set = "default";
  c.passes = passes;
  c.values = {{"gpu__time_duration.sum", 1e6},
              {"sm__cycles_elapsed.avg.per_second", 1.98e9},
              {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", flops / 2},
              {"dram__bytes_read.sum", dram * 0.75},
              {"dram__bytes_write.sum", dram * 0.25},
              {"lts__t_sectors_srcunit_tex.sum", l2 / 32},
              {"l1tex__t_bytes.sum", l1}};
  for (const auto& [k, v] : c.values) c.metrics.push_back(k);
  cupti::derive(c);
  return c;
}

// The registry's variants of one backend, and a gtest-safe name for each.
inline std::vector<const Variant*> variants_of(Backend backend) {
  std::vector<const Variant*> v;
  for (const auto& x : registry())
    if (x.backend == backend) v.push_back(&x);
  return v;
}
struct VariantName {
  template <class Info>
  std::string operator()(const Info& info) const {
    std::string n = info.param->family + "_" + info.param->variant + "_" + to_string(info.param->precision);
    for (auto& c : n)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
  }
};

}  // namespace roofbench::testing
