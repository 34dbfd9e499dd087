#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "bench/counters.h"
#include "bench/cpu_info.h"
#include "bench/gbench_runner.h"
#include "bench/harness.h"
#include "bench/nvml.h"
#include "reports/progress.h"
#include "roofbench/verify.h"
#include "roofline/model.h"
#include "tests/testing.h"

using namespace roofbench;

namespace {

// y = x + 1 over n floats, with a switchable defect.
// knows_seed: right only on the inputs of the run's two checks, whose seeds it knows.
enum class Defect { none, wrong_value, unwritten, throws, stale, knows_seed };

// What the harness asked of an instance, in order: how many runs it made, and how many of them
// came before the first check of the output.
struct Calls {
  int runs = 0;
  int runs_before_verify = -1;
  int verifies = 0;
  std::vector<std::uint64_t> seeds;  // of every prepare
};

class AddOne final : public Instance {
 public:
  AddOne(std::int64_t n, Defect d, Calls* calls = nullptr) : x_(n), y_(n), defect_(d), calls_(calls) {}
  void prepare(std::uint64_t seed) override {
    if (calls_) calls_->seeds.push_back(seed);
    seed_ = seed;
    for (std::size_t i = 0; i < x_.size(); ++i) x_[i] = static_cast<float>((seed + i) % 100);
    for (auto& v : y_) v = poison_f32();
  }
  void run() override {
    if (calls_) ++calls_->runs;
    if (defect_ == Defect::throws) throw std::runtime_error("kernel launch failed");
    if (defect_ == Defect::stale && !stale_.empty()) {  // its first output, whatever x holds now
      y_ = stale_;
      return;
    }
    if (defect_ == Defect::knows_seed && seed_ != MeasureOptions{}.seed && seed_ != recheck_seed(MeasureOptions{}.seed)) {
      std::fill(y_.begin(), y_.end(), 0.0f);  // no work where no check is expected
      return;
    }
    for (std::size_t i = 0; i < x_.size(); ++i) {
      if (defect_ == Defect::unwritten && i == 7) continue;
      y_[i] = x_[i] + 1.0f;
    }
    if (defect_ == Defect::wrong_value) y_[3] += 0.5f;
    if (defect_ == Defect::stale) stale_ = y_;
  }
  Verification verify() override {
    if (calls_ && calls_->runs_before_verify < 0) calls_->runs_before_verify = calls_->runs;
    if (calls_) ++calls_->verifies;
    Checker chk(tolerance_for(Precision::fp32), "every element");
    for (std::size_t i = 0; i < x_.size(); ++i) chk.check(y_[i], x_[i] + 1.0, static_cast<std::int64_t>(i));
    return chk.finish();
  }

 private:
  std::vector<float> x_, y_, stale_;
  std::uint64_t seed_ = 0;
  Defect defect_;
  Calls* calls_;
};

Variant toy(const std::string& name, Defect d, Calls* calls = nullptr) {
  Variant v;
  v.family = "toy";
  v.variant = name;
  v.reference = "x + 1";
  v.sizes = v.quick_sizes = v.test_sizes = {{{"n", 1024}}};
  const Count n = Count::param("n");
  v.work = Work().read<float>("x", n).write<float>("y = x + 1", n).flops(n, "an add");
  v.make = [d, calls](const Params& p) { return std::make_unique<AddOne>(param(p, "n"), d, calls); };
  return v;
}

MeasureOptions fast() {
  MeasureOptions o = MeasureOptions::quick();
  o.min_samples = 4;
  o.min_time_s = 0;
  return o;
}

}  // namespace

// The CPU kernels give each of all the threads its own share; a region with dynamic teams may run
// on fewer, and leave shares unwritten. The harness turns dynamic teams off on whichever thread
// runs a kernel (the setting is per thread), here one that had turned them on.
TEST(Harness, RunsCpuKernelsWithWholeOpenMpTeamsOnAnyThread) {
  const Variant* regions = nullptr;
  for (const auto& v : registry())
    if (v.backend == Backend::cpu && v.base_name() == "ceiling/launch_omp_region/fp64") regions = &v;
  ASSERT_NE(regions, nullptr);
  int dynamic_after_verify = -1, dynamic_after_run = -1;
  bool verified = false;
  std::thread t([&] {
    omp_set_dynamic(1);
    auto dev = make_cpu_device();
    auto inst = regions->make(regions->test_sizes.back());
    verified = prepare_and_verify(*dev, *inst, 1).ok;
    dynamic_after_verify = omp_get_dynamic();
    omp_set_dynamic(1);
    MeasureOptions o = MeasureOptions::quick();
    o.min_samples = 3;
    o.min_time_s = 0;
    run_benchmark(*dev, *regions, regions->test_sizes.back(), o);
    dynamic_after_run = omp_get_dynamic();
  });
  t.join();
  EXPECT_TRUE(verified);
  EXPECT_EQ(dynamic_after_verify, 0);
  EXPECT_EQ(dynamic_after_run, 0);
}

TEST(Registry, AVariantTiedToOneArchitectureSaysWhyItDoesNotRunElsewhere) {
  Variant v;
  v.family = "gemm";
  v.variant = "wgmma";
  v.precision = Precision::bf16;
  v.backend = Backend::cuda;
  EXPECT_EQ(not_here(v, "8.0"), "");  // not tied to one: runs everywhere
  v.only_on = "9.0";
  EXPECT_EQ(not_here(v, "9.0"), "");
  EXPECT_EQ(not_here(v, "8.0"), "built for sm_90a only; this GPU is sm_80");
  EXPECT_EQ(not_here(v, "10.0"), "built for sm_90a only; this GPU is sm_100");
}

// A declaration is checked when the binary starts: a malformed one ends it with what to fix.
// (Death tests: register_variant aborts, as a static initializer would.)
TEST(RegistryDeathTest, AVariantWithoutAReferenceIsRefusedWithHowToAddOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Variant v = toy("unchecked", Defect::none);
  v.reference.clear();
  EXPECT_DEATH(register_variant(v, "mine.cpp"),
               "bad variant declaration toy/unchecked/fp32 \\(mine.cpp\\): no reference: .*v.reference = .*"
               "Instance::verify\\(\\).*v.timing_only = true");
}

TEST(RegistryDeathTest, TimingOnlyIsForAUsersKernelWithNoReference) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Variant both = toy("both", Defect::none);
  both.timing_only = true;  // and still names a reference
  EXPECT_DEATH(register_variant(both, "mine.cpp"), "timing_only means no reference, but it names one");
  Variant builtin = toy("own", Defect::none);
  builtin.reference.clear();
  builtin.timing_only = true;
  EXPECT_DEATH(register_variant(builtin, "kernels/own.cpp", /*builtin=*/true),
               "roofbench's own kernels and the ceilings are always verified");
}

// A name results.json carries (a pass's ceiling, a shared link, a math function, a launch path)
// that its reader would refuse is refused where it is declared, not in the file a run wrote.
TEST(RegistryDeathTest, ANameTheResultsFileCannotCarryIsRefusedAtDeclaration) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto declared = [](Work w) {
    Variant v = toy("named", Defect::none);
    v.work = std::move(w);
    return v;
  };
  const Count n = Count::param("n");
  EXPECT_DEATH(register_variant(declared(Work().phase("in", "PCIe-in").read<float>("x", n).phase("k").read<float>("x", n)),
                                "mine.cpp"),
               "a pass's ceiling 'PCIe-in' is not a name results.json can carry: \\[a-z0-9_.\\], at most 32");
  EXPECT_DEATH(register_variant(declared(Work()
                                             .phase("in", "link_in")
                                             .read<float>("x", n)
                                             .phase("k")
                                             .read<float>("x", n)
                                             .pipelined(2)
                                             .shared_link("Link Both Ways")),
                                "mine.cpp"),
               "the shared link's ceiling 'Link Both Ways' is not a name");
  EXPECT_DEATH(register_variant(declared(Work().read<float>("x", n).transcendentals("Sin", n)), "mine.cpp"),
               "a math function 'Sin' is not a name");
  EXPECT_DEATH(register_variant(declared(Work().read<float>("x", n).launches(std::string(33, 'k'), 1)), "mine.cpp"),
               "a launch path 'k+' is not a name");
  // A vendor routine's ceiling names the suite's own it is the reference for, never itself.
  auto vendor_for = [](const std::string& ours) {
    Variant v = toy("vendor", Defect::none);
    v.ceiling = CeilingSpec{"vendor_copy", CeilingKind::bandwidth, Level::dram, "the vendor's copy"};
    v.ceiling->reference_for = ours;
    return v;
  };
  EXPECT_DEATH(register_variant(vendor_for("DRAM copy"), "mine.cpp"),
               "the ceiling it is the reference for 'DRAM copy' is not a name");
  EXPECT_DEATH(register_variant(vendor_for("vendor_copy"), "mine.cpp"), "a ceiling cannot be the reference for itself");
}

// What the reader would refuse in the file a run writes is refused where it is declared: work
// that is negative, a ceiling at two sizes or two ceilings of one name (each a second value of it).
TEST(RegistryDeathTest, WorkAndCeilingsTheReaderWouldRefuseAreRefusedAtDeclaration) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Variant negative = toy("negative", Defect::none);
  negative.sizes = negative.quick_sizes = negative.test_sizes = {{{"n", -4}}};
  EXPECT_DEATH(register_variant(negative, "mine.cpp"), "the reader refuses work that is negative or not finite");
  auto ceiling = [](const std::string& variant, const std::string& name) {
    Variant v = toy(variant, Defect::none);
    v.ceiling = CeilingSpec{name, CeilingKind::bandwidth, Level::dram, "a copy"};
    return v;
  };
  Variant two_sizes = ceiling("two_sizes", "toy_copy");
  two_sizes.sizes = {{{"n", 1024}}, {{"n", 2048}}};
  EXPECT_DEATH(register_variant(two_sizes, "mine.cpp"), "a ceiling is measured at one size");
  Variant no_repeat = ceiling("no_repeat", "toy_copy");  // a repeat count its sizes do not hold
  no_repeat.ceiling->repeat_param = "passes";
  EXPECT_DEATH(register_variant(no_repeat, "mine.cpp"), "repeat_param 'passes' is not a param of at least 1");
  Variant off_step = ceiling("off_step", "toy_copy");  // a size that is no whole number of its steps
  off_step.ceiling->repeat_param = "n";
  off_step.ceiling->repeat_step = 1000;
  EXPECT_DEATH(register_variant(off_step, "mine.cpp"), "in steps of 1000");
  EXPECT_DEATH(
      {
        register_variant(ceiling("first", "toy_copy"), "mine.cpp");
        register_variant(ceiling("second", "toy_copy"), "mine.cpp");
      },
      "ceiling 'toy_copy' is declared by toy/first/fp32 too");
}

TEST(Harness, CorrectKernelIsVerifiedThenMeasured) {
  auto dev = make_cpu_device();
  Calls calls;
  const Variant v = toy("good", Defect::none, &calls);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  ASSERT_TRUE(r.verified()) << r.error;
  EXPECT_EQ(r.verification.checked, 1024);
  ASSERT_TRUE(r.measurement);
  EXPECT_GE(r.measurement->stats.n, 4);
  EXPECT_EQ(calls.runs_before_verify, 1);  // one run, checked, before any warm-up or sample
  EXPECT_GE(calls.runs, 1 + r.measurement->warmup_runs + r.measurement->stats.n);
  const std::string why = r.measurement->stop_reason;
  EXPECT_TRUE(why == "noise_target" || why == "noise_floor" || why == "time_budget" || why == "max_samples") << why;
  EXPECT_EQ(r.measurement->timer, "steady-clock");
  for (double s : r.measurement->samples_s) EXPECT_GT(s, 0);
  EXPECT_EQ(r.name, "toy/good/fp32/n:1024");
  EXPECT_DOUBLE_EQ(r.flops, 1024);
  EXPECT_DOUBLE_EQ(r.bytes, 8192);
}

TEST(Harness, RecordsTheWallTimeOfEachStep) {
  // Where a run's time outside its timed samples goes (on the H200, 171 s of run for 37.9 s of
  // samples): make, prepare, verify, sample, recheck (the check again, on fresh inputs), and after
  // (the counter pass) when there is one.
  auto dev = make_cpu_device();
  const Variant v = toy("good", Defect::none);
  bool after_ran = false;
  const BenchmarkResult r =
      run_benchmark(*dev, v, v.sizes[0], fast(), [&](Instance&, BenchmarkResult&) { after_ran = true; });
  ASSERT_TRUE(r.verified()) << r.error;
  ASSERT_TRUE(after_ran);
  for (const char* step : {"make", "prepare", "verify", "sample", "recheck", "after"}) {
    ASSERT_TRUE(r.host_s.count(step)) << step;
    EXPECT_GE(r.host_s.at(step), 0) << step;
  }
  EXPECT_EQ(r.host_s.size(), 6u);
  double timed = 0;
  for (double s : r.measurement->samples_s) timed += s;
  EXPECT_GE(r.host_s.at("sample"), timed);  // the samples, and the warm-ups and clock reads around them
  // Where the sampling step went, by part: the runs, the flushes before them (cold cache), the
  // readings around them and the warm-ups; together the whole step but what measure() does
  // before its first lap and after its last (microseconds).
  const auto& parts = r.measurement->sampling_s;
  for (const char* part : {"warmup", "flush", "readings", "runs"}) {
    ASSERT_TRUE(parts.count(part)) << part;
    EXPECT_GE(parts.at(part), 0) << part;
  }
  EXPECT_FALSE(parts.count("checks"));  // no --untrusted: no spot checks, no fresh inputs
  EXPECT_FALSE(parts.count("inputs"));
  EXPECT_GE(parts.at("runs"), timed * 0.5);  // the host's wall around each run holds the run
  double sum = 0;
  for (const auto& [part, t] : parts) sum += t;
  EXPECT_LE(sum, r.host_s.at("sample"));
  EXPECT_GE(sum, 0.9 * r.host_s.at("sample"));
  // A kernel that fails its check was made, prepared and verified, never sampled.
  const Variant bad = toy("wrong", Defect::wrong_value);
  const BenchmarkResult f = run_benchmark(*dev, bad, bad.sizes[0], fast());
  ASSERT_FALSE(f.verified());
  EXPECT_TRUE(f.host_s.count("verify"));
  EXPECT_FALSE(f.host_s.count("sample"));
}

TEST(Harness, AnOutputThatDoesNotFollowFreshInputsAfterTheSamplesGetsNoNumber) {
  auto dev = make_cpu_device();
  const Variant v = toy("stale", Defect::stale);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  EXPECT_TRUE(r.verification.ok);  // its first output was right
  ASSERT_TRUE(r.recheck);
  EXPECT_FALSE(r.recheck->ok);
  EXPECT_FALSE(r.measurement);
  EXPECT_NE(r.error.find("verification after the timed samples failed, on fresh inputs"), std::string::npos) << r.error;
  // A right kernel passes both, on two different inputs.
  const Variant good = toy("good", Defect::none);
  const BenchmarkResult g = run_benchmark(*dev, good, good.sizes[0], fast());
  ASSERT_TRUE(g.recheck);
  EXPECT_TRUE(g.recheck->ok);
  EXPECT_NE(recheck_seed(fast().seed), fast().seed);
}

TEST(Harness, UntrustedGivesEveryRunFreshInputsAndChecksSamplesAtRandom) {
  auto dev = make_cpu_device();
  MeasureOptions o = fast();
  o.untrusted = true;
  Calls calls;
  const Variant v = toy("good", Defect::none, &calls);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], o);
  ASSERT_TRUE(r.verified()) << r.error;
  const Measurement& m = *r.measurement;
  EXPECT_TRUE(m.fresh_inputs);
  // The first check, then one prepare before every warm-up and every sample, then the recheck.
  ASSERT_EQ(calls.seeds.size(), 2u + m.warmup_runs + m.samples_s.size());
  EXPECT_EQ(calls.seeds.front(), o.seed);
  EXPECT_EQ(calls.seeds.back(), recheck_seed(o.seed));
  std::set<std::uint64_t> distinct(calls.seeds.begin(), calls.seeds.end());
  EXPECT_EQ(distinct.size(), calls.seeds.size());  // no inputs seen twice
  for (auto seed : calls.seeds) EXPECT_LE(seed, 0xFFFFFFFFull);  // NumPy's legacy seeding takes 32 bits
  // The first two samples always, then at random; the two checks around them besides.
  EXPECT_GE(m.spot_checks, 2);
  EXPECT_LE(static_cast<std::size_t>(m.spot_checks), m.samples_s.size());
  EXPECT_EQ(calls.verifies, m.spot_checks + 2);
  // Written to results.json and read back.
  Results file = roofbench::testing::sample_results();
  file.benchmarks.push_back(r);
  const nlohmann::json j = nlohmann::json::parse(dump_results(file));
  EXPECT_EQ(j.at("benchmarks").at(0).at("measurement").at("untrusted").at("spot_checks"), m.spot_checks);
  EXPECT_EQ(parse_results(dump_results(file)).benchmarks.at(0).measurement->spot_checks, m.spot_checks);
  // Two untrusted runs do not draw the same seeds: no kernel can learn them from the last.
  Calls again;
  const Variant v2 = toy("good", Defect::none, &again);
  ASSERT_TRUE(run_benchmark(*dev, v2, v2.sizes[0], o).verified());
  EXPECT_NE(again.seeds.at(1), calls.seeds.at(1));
  // Trusted (the default): the same inputs for the warm-ups and samples, two checks only.
  Calls trusted;
  const Variant v3 = toy("good", Defect::none, &trusted);
  const BenchmarkResult t = run_benchmark(*dev, v3, v3.sizes[0], fast());
  ASSERT_TRUE(t.verified()) << t.error;
  EXPECT_EQ(trusted.seeds.size(), 2u);
  EXPECT_EQ(trusted.verifies, 2);
  EXPECT_FALSE(t.measurement->fresh_inputs);
  Results plain = roofbench::testing::sample_results();
  plain.benchmarks.push_back(t);
  EXPECT_FALSE(nlohmann::json::parse(dump_results(plain)).at("benchmarks").at(0).at("measurement").contains("untrusted"));
}

TEST(Harness, AKernelThatSkipsWorkWhenNotCheckedFailsASpotCheck) {
  auto dev = make_cpu_device();
  const Variant v = toy("knows_seed", Defect::knows_seed);
  // Trusted, it passes: its samples run on the first check's inputs, which it knows.
  EXPECT_TRUE(run_benchmark(*dev, v, v.sizes[0], fast()).verified());
  MeasureOptions o = fast();
  o.untrusted = true;
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], o);
  EXPECT_FALSE(r.verified());
  EXPECT_FALSE(r.measurement);
  EXPECT_NE(r.error.find("spot check of timed sample 1 (fresh inputs, checked after it was timed) failed"),
            std::string::npos)
      << r.error;
  // A ceiling, the suite's own loop, is measured as always, untrusted or not.
  Calls calls;
  Variant c = toy("ceiling_like", Defect::none, &calls);
  c.ceiling = CeilingSpec{"toy_roof", CeilingKind::bandwidth, Level::dram, "a copy"};
  const BenchmarkResult cr = run_benchmark(*dev, c, c.sizes[0], o);
  ASSERT_TRUE(cr.verified()) << cr.error;
  EXPECT_EQ(calls.seeds.size(), 2u);
  EXPECT_FALSE(cr.measurement->fresh_inputs);
}

TEST(Harness, WrongOutputGetsAnErrorAndNoNumber) {
  auto dev = make_cpu_device();
  Calls calls;
  const Variant v = toy("wrong", Defect::wrong_value, &calls);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  EXPECT_FALSE(r.verified());
  EXPECT_FALSE(r.measurement);
  EXPECT_EQ(calls.runs, 1);  // the run that was checked: a wrong kernel is never warmed up or timed
  EXPECT_EQ(calls.runs_before_verify, 1);
  EXPECT_EQ(r.verification.mismatches, 1);
  EXPECT_NE(r.error.find("[3]: got"), std::string::npos) << r.error;
}

TEST(Harness, PoisonedOutputCatchesAnUnwrittenElement) {
  auto dev = make_cpu_device();
  const Variant v = toy("lazy", Defect::unwritten);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  EXPECT_FALSE(r.verified());
  EXPECT_NE(r.error.find("[7]: got nan"), std::string::npos) << r.error;
}

TEST(Harness, AThrowingKernelBecomesAnError) {
  auto dev = make_cpu_device();
  const Variant v = toy("throws", Defect::throws);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  EXPECT_FALSE(r.verified());
  EXPECT_EQ(r.error, "kernel launch failed");
}

TEST(Harness, MaxSamplesStopsTheLoop) {
  auto dev = make_cpu_device();
  const Variant v = toy("good", Defect::none);
  MeasureOptions o = fast();
  o.min_time_s = 1e9;
  o.max_time_s = 1e9;
  o.max_samples = 7;
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], o);
  EXPECT_EQ(r.measurement->stats.n, 7);
  EXPECT_EQ(r.measurement->stop_reason, "max_samples");
}

TEST(Harness, PlacementsMeasureFreshInstancesInTurnEachVerified) {
  auto dev = make_cpu_device();
  Variant v = toy("good", Defect::none);
  int made = 0;
  const auto make = v.make;
  v.make = [&made, make](const Params& p) {
    ++made;
    return make(p);
  };
  MeasureOptions o = fast();
  o.min_time_s = 1e9;
  o.max_time_s = 1e9;
  o.min_samples = 18;
  o.max_samples = 18;
  o.placements = 3;
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], o);
  ASSERT_TRUE(r.verified()) << r.error;
  EXPECT_EQ(made, 3);
  EXPECT_EQ(r.verification.checked, 3 * 1024);  // each instance checked before its samples
  ASSERT_TRUE(r.measurement);
  EXPECT_EQ(r.measurement->placement_samples, (std::vector<int>{6, 6, 6}));  // the sample limit split three ways
  EXPECT_EQ(r.measurement->stats.n, 18);
  EXPECT_EQ(r.measurement->warmup_runs, 3 * o.warmup_runs);
  EXPECT_EQ(r.measurement->stop_reason, "max_samples");
}

TEST(Harness, APlacementTakesAtLeastTheMinimumSamplesTheBudgetAllows) {
  auto dev = make_cpu_device();
  const Variant v = toy("good", Defect::none);
  MeasureOptions o = fast();
  o.min_time_s = 1e9;
  o.max_time_s = 1e9;
  o.min_samples = o.max_samples = 12;
  o.placements = 4;  // 3 each would fall below MeasureOptions::kMinSamples
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], o);
  ASSERT_TRUE(r.measurement);
  EXPECT_EQ(r.measurement->placement_samples,
            std::vector<int>(4, MeasureOptions::kMinSamples));
}

TEST(Harness, OnePlacementRecordsNoPlacements) {
  auto dev = make_cpu_device();
  const Variant v = toy("good", Defect::none);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  ASSERT_TRUE(r.measurement);
  EXPECT_TRUE(r.measurement->placement_samples.empty());
}

TEST(Harness, APlacementThatFailsVerificationLeavesTheBenchmarkWithoutANumber) {
  auto dev = make_cpu_device();
  Variant v = toy("second-wrong", Defect::none);
  int made = 0;
  Calls second;  // the wrong placement's calls
  v.make = [&made, &second](const Params& p) {
    const bool wrong = ++made == 2;
    return std::make_unique<AddOne>(param(p, "n"), wrong ? Defect::wrong_value : Defect::none,
                                    wrong ? &second : nullptr);
  };
  MeasureOptions o = fast();
  o.placements = 3;
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], o);
  EXPECT_EQ(made, 2);  // the third is never made
  EXPECT_EQ(second.runs, 1);  // and the wrong one is never timed
  EXPECT_FALSE(r.verified());
  EXPECT_FALSE(r.measurement);
  EXPECT_NE(r.error.find("verification failed on placement 2 of 3"), std::string::npos) << r.error;
}

namespace {

// A device whose sample times and clock readings follow a script, so that the stopping rule and
// the throttle flags can be checked exactly.
class ScriptedDevice final : public Device {
 public:
  std::function<double(int)> time_of = [](int) { return 1e-3; };               // sample i → seconds
  std::function<std::optional<double>(int)> clock_of = [](int) { return 2e9; };  // reading j → Hz
  std::vector<std::string> limits;
  std::vector<Launch> launches;  // how each sample was asked to start
  std::function<void(int)> after_run = [](int) {};  // called after run i, e.g. to request a stop
  int runs = 0, clock_reads = 0, flushes = 0;
  // b: sample_begins, j: energy_j, p: power_reading, r: time_run, e: sample_ends, l: clock_limits
  std::string events;
  bool energy = false;  // power_reading and energy_j answer an energy counter (one joule more each reading)

  Backend backend() const override { return Backend::cpu; }
  std::string name() const override { return "scripted"; }
  nlohmann::json describe() const override { return {{"kind", "cpu"}, {"name", "scripted"}}; }
  std::string timer() const override { return "script"; }
  std::size_t flush_bytes() const override { return 0; }
  void flush_cache() override { ++flushes; }
  double time_run(Instance& inst, Launch launch) override {
    events += 'r';
    launches.push_back(launch);
    inst.run();
    const int i = runs++;
    after_run(i);
    return time_of(i);
  }
  std::string launch_method(Launch launch) const override {
    return launch == Launch::hidden ? "hidden" : launch == Launch::device_wide ? "device_wide" : "synchronous";
  }
  void synchronize() override {}
  std::optional<double> clock_hz() override { return 2e9; }
  std::optional<double> sample_clock_hz() override { return clock_of(clock_reads++); }
  std::vector<std::string> clock_limits() override {
    events += 'l';
    return limits;
  }
  void sample_begins() override { events += 'b'; }
  void sample_ends() override { events += 'e'; }
  PowerReading power_reading() override {
    events += 'p';
    PowerReading r;
    if (energy) r.energy_j = static_cast<double>(events.size());
    return r;
  }
  std::optional<double> energy_j() override {
    events += 'j';
    return energy ? std::optional<double>(static_cast<double>(events.size())) : std::nullopt;
  }
  std::string lost_reason;  // what lost() answers once asked (after a failure)
  std::string lost() override { return lost_reason; }
};

MeasureOptions scripted_options() {
  MeasureOptions o;
  o.warmup_runs = 1;
  o.min_samples = 10;
  o.max_samples = 300;
  o.min_time_s = 0;
  o.max_time_s = 1e9;
  return o;
}

}  // namespace

TEST(Measure, TheLeastSamplingTimeIsWallTimeSoATinyKernelStopsByItsNoiseRuleNotTheSampleCap) {
  // A kernel of a microsecond adds up 0.05 s of its own time only after 50,000 samples: counted
  // in kernel time, the least time made every tiny kernel run to the sample cap (82 of them on
  // the H200). Counted in wall time, the noise rule decides once 0.05 s have passed.
  auto dev = make_cpu_device();
  AddOne inst(64, Defect::none);
  prepare_and_run(*dev, inst, 1);
  MeasureOptions o = MeasureOptions::quick();
  o.cold_cache = false;
  o.min_time_s = 0.05;
  o.max_samples = 100000;
  o.target_rel_iqr = 10;  // met by any samples
  const auto t0 = std::chrono::steady_clock::now();
  const Measurement m = measure(*dev, inst, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(m.stop_reason, "noise_target");
  EXPECT_GE(wall, o.min_time_s);
  // The kernel's own time, each sample held to ten times the median: a stall of the test machine
  // inside a timed sample (a CPU quota's slice, some milliseconds) must not decide this.
  double timed = 0;
  for (double s : m.samples_s) timed += std::min(s, 10 * m.stats.median);
  EXPECT_LT(timed, o.min_time_s) << "stopped only once the kernel's own time added up";
  EXPECT_LT(m.samples_s.size(), 100000u);
}

TEST(Measure, ASustainedPassRunsTheKernelBackToBackForItsHoldBeforeItsWarmUp) {
  ScriptedDevice dev;
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  MeasureOptions o = scripted_options();
  o.hold_s = 0.05;
  const auto t0 = std::chrono::steady_clock::now();
  const Measurement m = measure(dev, *inst, o);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.05);
  EXPECT_GE(m.held_s, 0.05);
  EXPECT_EQ(dev.flushes, m.stats.n + 1);  // none while held: the hold does not let it cool
  EXPECT_GT(dev.runs, m.stats.n + 1);     // held runs, then the warm-up and the samples
  EXPECT_EQ(measure(dev, *inst, scripted_options()).held_s, 0.0);
}

TEST(Measure, StopsOnceTheNoiseTargetIsMetAfterTheMinimumSamples) {
  ScriptedDevice dev;
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  const Measurement m = measure(dev, *inst, scripted_options());  // identical samples: IQR 0
  EXPECT_EQ(m.stats.n, 10);
  EXPECT_EQ(m.stop_reason, "noise_target");
  EXPECT_EQ(dev.runs, 11);  // one warm-up
}

TEST(Measure, StopsWhenTheNoiseTargetIsSurelyOutOfReach) {
  // IQR 20% of the median, forever: after 2 x min_samples the IQR's lower bound is far above 1%.
  ScriptedDevice dev;
  dev.time_of = [](int i) { return i % 2 ? 1e-3 : 1.2e-3; };
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  const MeasureOptions o = scripted_options();
  const Measurement m = measure(dev, *inst, o);
  EXPECT_EQ(m.stats.n, 2 * o.min_samples);
  EXPECT_EQ(m.stop_reason, "noise_floor");
  const auto w = measurement_warnings(m, o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("above the 1.0% target with 95% confidence"), std::string::npos) << w[0];

  // Mostly steady, with a few slow outliers: the IQR is near 0, the target is met instead.
  ScriptedDevice steady;
  steady.time_of = [](int i) { return i % 9 == 0 ? 2e-3 : 1e-3; };
  const Measurement s = measure(steady, *inst, o);
  EXPECT_EQ(s.stop_reason, "noise_target");
}

TEST(Stats, TheNoiseFloorIsALowerBoundOfTheIqrThatNeedsSamplesToSeparate) {
  std::vector<double> v;
  for (int i = 0; i < 7; ++i) v.push_back(i % 2 ? 1.0 : 2.0);
  EXPECT_EQ(noise_floor_rel_iqr(v), 0.0);  // too few to bound anything
  // 0..99 uniformly: IQR 50 (rel 50/49.5); the bound is a band inside the quartiles.
  std::vector<double> u;
  for (int i = 0; i < 100; ++i) u.push_back(i);
  const double bound = noise_floor_rel_iqr(u);
  EXPECT_GT(bound, 0.0);
  EXPECT_LT(bound, summarize(u).rel_iqr());
  EXPECT_NEAR(bound, (66.0 - 34.0) / 49.5, 1e-12);  // ranks ⌈25 + 8.49⌉ and ⌊75 − 8.49⌋
}

TEST(Measure, NoisySamplesRunOnToTheSampleLimitOrTheBudget) {
  ScriptedDevice dev;
  dev.time_of = [](int i) { return i % 2 ? 1e-3 : 1.2e-3; };  // IQR 20% of the median, forever
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  MeasureOptions o = scripted_options();
  o.stop_at_noise_floor = false;
  const Measurement m = measure(dev, *inst, o);
  EXPECT_EQ(m.stats.n, 300);
  EXPECT_EQ(m.stop_reason, "max_samples");
  const auto w = measurement_warnings(m, o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("noise: stopped at the 300-sample limit with an IQR of"), std::string::npos) << w[0];

  ScriptedDevice dev2;
  dev2.time_of = dev.time_of;
  o.max_time_s = 0;  // the budget is spent at once: stop at the floor of kMinSamples
  const Measurement b = measure(dev2, *inst, o);
  EXPECT_EQ(b.stats.n, MeasureOptions::kMinSamples);
  EXPECT_EQ(b.stop_reason, "time_budget");
  // The budget as it was given: --quick's 0.75 s reads 0.75, not a rounded 0.8.
  o.max_time_s = 0.75;
  const auto wb = measurement_warnings(b, o);
  ASSERT_EQ(wb.size(), 1u);
  EXPECT_NE(wb[0].find("noise: stopped at the 0.75 s budget with an IQR of"), std::string::npos) << wb[0];
}

TEST(Measure, SamplesBelowTheThrottleFractionOfTheWarmClockAreFlagged) {
  ScriptedDevice dev;
  // Reading 0 follows the warm-up (the reference); readings 1.. follow samples 0..
  dev.clock_of = [](int j) { return j == 4 || j == 6 ? 1.5e9 : 1.98e9; };
  dev.limits = {"sw_power_cap"};
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  const MeasureOptions o = scripted_options();
  const Measurement m = measure(dev, *inst, o);
  ASSERT_EQ(m.sample_clock_hz.size(), m.samples_s.size());
  ASSERT_TRUE(m.clock_reference_hz);
  EXPECT_DOUBLE_EQ(*m.clock_reference_hz, 1.98e9);
  EXPECT_EQ(m.throttled, (std::vector<int>{3, 5}));
  EXPECT_EQ(m.clock_limits, (std::vector<std::string>{"sw_power_cap"}));
  const auto w = measurement_warnings(m, o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("clock: 2 of 10 samples (20%) ran below 90% of the clock after warm-up (1.98 GHz; lowest 1.50 GHz); "
                      "limited by sw_power_cap"),
            std::string::npos)
      << w[0];
}

// The CPU device names a sample that waited for its cgroup's CPU quota "cpu_quota" (the clock did
// not drop: no clock warning); the measurement says how many did, whatever other reasons ride along.
TEST(Measure, SamplesThatWaitedForTheCgroupsCpuQuotaAreCountedInAHostWarning) {
  Measurement m = roofbench::testing::measurement_of({1e-3, 9e-3, 9e-3, 1e-3});
  m.sample_clock_limits = {"", "cpu_quota", "sw_power_cap,cpu_quota", ""};
  auto w = measurement_warnings(m, scripted_options());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("host: 2 of 4 samples (50%) waited for the cgroup's CPU quota", 0), 0u) << w[0];
  m.sample_clock_limits = {"", "sw_power_cap", "", ""};
  EXPECT_TRUE(measurement_warnings(m, scripted_options()).empty());
}

// The CPU reads its cgroup's throttle count in sample_begins and sample_ends: around the power
// readings, so outside both the timing and the energy window; the limits are asked after.
TEST(Measure, EachSampleIsBracketedByItsBeginAndEndHooksOutsideItsPowerReadings) {
  ScriptedDevice dev;
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  MeasureOptions o = scripted_options();
  o.min_samples = o.max_samples = 3;
  o.energy_pass_s = 0;  // no energy pass after the samples (Energy.* in test_power.cpp)
  dev.events.clear();
  const Measurement m = measure(dev, *inst, o);
  ASSERT_EQ(m.samples_s.size(), 3u);
  std::size_t first = dev.events.find('b');
  ASSERT_NE(first, std::string::npos) << dev.events;
  // (Without an energy counter the reading before the run is skipped; the one after is taken.)
  EXPECT_EQ(dev.events.substr(first), "brpel" "brpel" "brpel") << dev.events;
  dev.energy = true;
  dev.events.clear();
  const Measurement e = measure(dev, *inst, o);
  ASSERT_EQ(e.sample_energy_j.size(), 3u);  // the energy window was read
  first = dev.events.find('b');
  ASSERT_NE(first, std::string::npos) << dev.events;
  // Before each run the energy counter alone (one query where NVML's power_reading is three),
  // after it the whole reading. (After the last sample, the counter's interval is probed: the
  // counter alone again.)
  EXPECT_EQ(dev.events.substr(first, 18), "bjrpel" "bjrpel" "bjrpel") << dev.events;
  EXPECT_EQ(dev.events.find_first_not_of('j', first + 18), std::string::npos) << dev.events;
}

TEST(Measure, AClockThatCannotBeReadLeavesNoPerSampleSeries) {
  ScriptedDevice dev;
  dev.clock_of = [](int j) { return j < 3 ? std::optional<double>(2e9) : std::nullopt; };
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  const Measurement m = measure(dev, *inst, scripted_options());
  EXPECT_TRUE(m.sample_clock_hz.empty());
  EXPECT_TRUE(m.throttled.empty());
  EXPECT_FALSE(m.clock_reference_hz);
}

TEST(GbenchRunner, RunsUnderGoogleBenchmarkWithRatesAsCounters) {
  auto dev = make_cpu_device();
  const Variant good = toy("good", Defect::none), bad = toy("wrong", Defect::wrong_value);
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(*dev, {{&good, good.sizes[0]}, {&bad, bad.sizes[0]}}, fast(), {}, console);
  ASSERT_EQ(out.results.size(), 2u);
  EXPECT_TRUE(out.results[0].result.verified());
  EXPECT_FALSE(out.results[1].result.verified());
  EXPECT_NE(progress.str().find("[1/2] toy/good/fp32/n:1024 … "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("[2/2] toy/wrong/fp32/n:1024 … FAILED"), std::string::npos) << progress.str();

  const auto j = nlohmann::json::parse(out.gbench_json);
  ASSERT_EQ(j.at("benchmarks").size(), 2u);
  const auto& g = j["benchmarks"][0];
  EXPECT_EQ(g.at("run_name"), "toy/good/fp32/n:1024/iterations:1/manual_time");
  const double real_time_us = g.at("real_time").get<double>();
  EXPECT_NEAR(real_time_us * 1e-6, out.results[0].result.measurement->stats.median, 1e-9);
  EXPECT_NEAR(g.at("FLOP/s").get<double>(), 1024 / (real_time_us * 1e-6), 1e-6 * g.at("FLOP/s").get<double>());
  EXPECT_TRUE(g.contains("bytes/s"));
  EXPECT_TRUE(j["benchmarks"][1].at("error_occurred").get<bool>());
}

// Records which benchmarks it was asked to profile, and how often.
class RecordingCollector final : public CounterCollector {
 public:
  std::vector<std::string> collected;
  std::vector<bool> cold;  // the cache state each was profiled in
  std::vector<std::string> metrics_for(const BenchmarkResult&) override { return {"gpu__time_duration.sum"}; }
  int passes_for(const std::vector<std::string>&) override { return 1; }
  void collect(Device&, Instance&, BenchmarkResult& b, std::uint64_t, bool cold_cache) override {
    collected.push_back(b.name);
    cold.push_back(cold_cache);
    Counters c;
    c.metrics = {"gpu__time_duration.sum"};
    c.values = {{"gpu__time_duration.sum", 1000.0}};
    c.passes = 1;
    b.counters = c;
  }
  nlohmann::json status() const override { return {{"available", true}}; }
};

TEST(GbenchRunner, CountersOnceForEveryUntaggedJobThatLaunchesKernels) {
  auto dev = make_cpu_device();
  Variant kernel = toy("kernel", Defect::none), copy = toy("copy", Defect::none);
  copy.launches_kernels = false;  // like the PCIe ceilings: cudaMemcpy only, nothing to count
  RecordingCollector rec;
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(*dev,
                                  {{&kernel, kernel.sizes[0]},
                                   {&copy, copy.sizes[0]},
                                   {&kernel, kernel.sizes[0], "pass:end"}},  // a ceiling's second pass
                                  fast(), {"--benchmark_repetitions=2"}, console, &rec);
  ASSERT_EQ(out.results.size(), 3u);
  EXPECT_EQ(rec.collected, (std::vector<std::string>{"toy/kernel/fp32/n:1024"}));  // once, not per repetition
  ASSERT_TRUE(out.results[0].result.counters);
  EXPECT_TRUE(out.results[0].result.counters->ok());
  EXPECT_FALSE(out.results[1].result.counters);
  EXPECT_FALSE(out.results[2].result.counters);
}

TEST(GbenchRunner, CountersAreTakenInTheCacheStateTheSamplesWere) {
  auto dev = make_cpu_device();
  Variant cold = toy("cold", Defect::none), warm = toy("warm", Defect::none);
  warm.warm = true;
  RecordingCollector rec;
  std::ostringstream progress;
  ConsoleProgress console(progress);
  MeasureOptions o = fast();
  ASSERT_TRUE(o.cold_cache);
  const JobsOutput out = run_jobs(*dev, {{&cold, cold.sizes[0]}, {&warm, warm.sizes[0]}}, o, {}, console, &rec);
  ASSERT_EQ(out.results.size(), 2u);
  EXPECT_EQ(rec.collected, (std::vector<std::string>{"toy/cold/fp32/n:1024", "toy/warm/fp32/n:1024"}));
  EXPECT_EQ(rec.cold, (std::vector<bool>{true, false}));
  EXPECT_FALSE(out.results[1].result.measurement->cold_cache);
}

TEST(GbenchRunner, AFailureThatLosesTheDeviceStopsTheRestAndNamesTheCulprit) {
  // A CUDA kernel fault poisons the context: later benchmarks would all fail with the same CUDA
  // error. They fail instead with one line naming the benchmark that lost the device.
  const Variant good = toy("good", Defect::none), faulty = toy("faulty", Defect::throws),
                after = toy("after", Defect::none);
  const std::vector<Job> jobs = {{&good, good.sizes[0]}, {&faulty, faulty.sizes[0]}, {&after, after.sizes[0]}};
  ScriptedDevice dev;
  dev.lost_reason = "cudaErrorIllegalAddress (an illegal memory access was encountered)";
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(dev, jobs, fast(), {}, console);
  ASSERT_EQ(out.results.size(), 3u);
  EXPECT_TRUE(out.results[0].result.verified());
  EXPECT_EQ(out.results[1].result.error, "kernel launch failed");
  EXPECT_EQ(out.results[2].result.error,
            "not run: the device was lost when toy/faulty/fp32/n:1024 failed (cudaErrorIllegalAddress (an illegal "
            "memory access was encountered)), and nothing after that can run in this process; run again without it "
            "(--skip)");
  EXPECT_FALSE(out.results[2].result.measurement);
  EXPECT_NE(progress.str().find("[3/3] toy/after/fp32/n:1024 … FAILED: not run: the device was lost"),
            std::string::npos)
      << progress.str();

  // A failure that leaves the device usable (a wrong result, a refused shape) stops nothing.
  ScriptedDevice healthy;
  const JobsOutput ok = run_jobs(healthy, jobs, fast(), {}, console);
  ASSERT_EQ(ok.results.size(), 3u);
  EXPECT_TRUE(ok.results[2].result.verified()) << ok.results[2].result.error;
}

TEST(GbenchRunner, GoogleBenchmarkFilterSelectsJobs) {
  auto dev = make_cpu_device();
  const Variant good = toy("good", Defect::none), other = toy("other", Defect::none);
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(*dev, {{&good, good.sizes[0]}, {&other, other.sizes[0]}}, fast(),
                                  {"--benchmark_filter=other"}, console);
  ASSERT_EQ(out.results.size(), 1u);
  EXPECT_EQ(out.results[0].result.variant, "other");
  EXPECT_NE(progress.str().find("[1/1] toy/other"), std::string::npos);
}

TEST(GbenchRunner, FlagsOfAnEarlierRunDoNotLeakIntoTheNext) {
  auto dev = make_cpu_device();
  const Variant good = toy("good", Defect::none), other = toy("other", Defect::none);
  const std::vector<Job> jobs = {{&good, good.sizes[0]}, {&other, other.sizes[0]}};
  std::ostringstream progress;
  ConsoleProgress console(progress);
  EXPECT_EQ(run_jobs(*dev, jobs, fast(), {"--benchmark_filter=other"}, console).results.size(), 1u);
  EXPECT_EQ(run_jobs(*dev, jobs, fast(), {}, console).results.size(), 2u);
}

TEST(GbenchRunner, RepetitionsAddSamplesToOneResult) {
  auto dev = make_cpu_device();
  const Variant good = toy("good", Defect::none);
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(*dev, {{&good, good.sizes[0]}}, fast(), {"--benchmark_repetitions=3"}, console);
  ASSERT_EQ(out.results.size(), 1u);
  EXPECT_GE(out.results[0].result.measurement->stats.n, 3 * fast().min_samples);
  const auto j = nlohmann::json::parse(out.gbench_json);
  int iterations = 0;
  for (const auto& b : j.at("benchmarks")) iterations += b.at("run_type") == "iteration";
  EXPECT_EQ(iterations, 3);  // plus Google Benchmark's own mean/median/stddev/cv aggregates
  EXPECT_NE(progress.str().find("[1/1] toy/good/fp32/n:1024 (repetition 3) … "), std::string::npos) << progress.str();
}

TEST(GbenchRunner, UnknownGoogleBenchmarkFlagIsAnInputError) {
  auto dev = make_cpu_device();
  std::ostringstream progress;
  ConsoleProgress console(progress);
  EXPECT_THROW(run_jobs(*dev, {}, fast(), {"--benchmark_nonsense=1"}, console), InputError);
}

TEST(Devices, UnknownDeviceSpecsAreInputErrors) {
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "cuda:12345", "cuda:-1", "CPU", " cpu", ""})
    EXPECT_THROW(DeviceSpec::parse(bad), InputError) << bad;
  for (const char* good : {"auto", "cpu", "cuda:0", "cuda:17", "all"}) EXPECT_EQ(DeviceSpec::parse(good).text(), good);
  EXPECT_EQ(DeviceSpec::parse("cuda:0003").index, 3);
  EXPECT_THROW(open_device(DeviceSpec::parse("cuda:99")), InputError);
  EXPECT_THROW(open_device(DeviceSpec::parse("all")), InputError);
  EXPECT_EQ(open_device(DeviceSpec::parse("cpu"))->backend(), Backend::cpu);
}

TEST(Devices, CpuDeviceDescribesItselfAndReadsItsClock) {
  auto dev = make_cpu_device();
  const auto d = dev->describe();
  EXPECT_EQ(d.at("kind"), "cpu");
  EXPECT_GT(d.at("threads").get<int>(), 0);
  EXPECT_GT(d.at("llc_bytes").get<double>(), 0);
  EXPECT_GE(dev->flush_bytes(), 2 * d.at("llc_bytes").get<std::size_t>());
#if defined(__x86_64__)
  const auto hz = dev->clock_hz();
  ASSERT_TRUE(hz);
  EXPECT_GT(*hz, 1e8);  // any CPU this runs on does over 100 MHz
  EXPECT_LT(*hz, 1e10);
#endif
}

TEST(Nvml, AGpuNvmlDoesNotKnowReadsNothingAndSaysWhy) {
  // Without the driver's library (this machine) or with it (a GPU machine), a bus id that is no
  // GPU's gives no readings and a reason, never an exception.
  const Nvml nvml("ffff:ff:1f.7");
  EXPECT_FALSE(nvml.available());
  EXPECT_FALSE(nvml.why().empty());
  EXPECT_FALSE(nvml.sm_clock_hz());
  EXPECT_TRUE(nvml.clock_limits().empty());
}

TEST(Nvml, ClockLimitBitsAreNamedAndIdleIsNotALimit) {
  EXPECT_EQ(clock_limit_names(0x1 | 0x2 | 0x100), std::vector<std::string>{});  // idle, app and display clocks
  EXPECT_EQ(clock_limit_names(0x4 | 0x40), (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(clock_limit_names(0x8 | 0x80).size(), 2u);
}

namespace {

// The toy kernel with a wave model, as a fixed-tile GPU GEMM reports one.
class TiledAddOne final : public Instance {
 public:
  explicit TiledAddOne(std::int64_t n) : inner_(n, Defect::none) {}
  void prepare(std::uint64_t seed) override { inner_.prepare(seed); }
  void run() override { inner_.run(); }
  Verification verify() override { return inner_.verify(); }
  std::optional<WaveModel> waves() const override { return wave_model(128, 128, 1536, 1536, 1, 132); }

 private:
  AddOne inner_;
};

// Requests a stop from inside a sample, as a signal arriving mid-measurement would.
struct StopAfter {
  int run;
  void operator()(int i) const {
    if (i == run) request_stop(SIGTERM);
  }
};

}  // namespace

TEST(GbenchRunner, ARealRunKeepsTheWaveModelAsTheTestedSequenceDoes) {
  // Runs and tests take the same sequence (run_benchmark): a run that dropped the wave model
  // while the harness tests passed was the bug this guards.
  Variant tiled = toy("tiled", Defect::none);
  tiled.make = [](const Params& p) { return std::make_unique<TiledAddOne>(param(p, "n")); };
  auto dev = make_cpu_device();
  const BenchmarkResult direct = run_benchmark(*dev, tiled, tiled.sizes[0], fast());
  ASSERT_TRUE(direct.waves);
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(*dev, {{&tiled, tiled.sizes[0]}}, fast(), {}, console);
  ASSERT_EQ(out.results.size(), 1u);
  ASSERT_TRUE(out.results[0].result.waves) << "a run through Google Benchmark lost the wave model";
  EXPECT_EQ(out.results[0].result.waves->tiles, 144);
  EXPECT_NEAR(out.results[0].result.waves->efficiency, 144.0 / 264, 1e-12);
}

TEST(Measure, EachSampleStartsTheWayItsVariantDeclares) {
  ScriptedDevice dev;
  Variant queued = toy("queued", Defect::none), synchronous = toy("sync", Defect::none);
  synchronous.launch_synchronizes = true;  // like the PCIe ceilings' cudaMemcpy
  const BenchmarkResult a = run_benchmark(dev, queued, queued.sizes[0], scripted_options());
  ASSERT_TRUE(a.verified()) << a.error;
  EXPECT_EQ(a.measurement->launch, "hidden");
  // The first warm-up is never held (a lazily loaded kernel may wait for the GPU at its first
  // launch); every other run is.
  ASSERT_GE(dev.launches.size(), 2u);
  EXPECT_EQ(dev.launches.front(), Launch::synchronous);
  for (std::size_t i = 1; i < dev.launches.size(); ++i) EXPECT_EQ(dev.launches[i], Launch::hidden) << i;
  dev.launches.clear();
  const BenchmarkResult b = run_benchmark(dev, synchronous, synchronous.sizes[0], scripted_options());
  ASSERT_TRUE(b.verified()) << b.error;
  EXPECT_EQ(b.measurement->launch, "synchronous");
  ASSERT_FALSE(dev.launches.empty());
  for (Launch l : dev.launches) EXPECT_EQ(l, Launch::synchronous);
  // --untrusted: every warm-up and sample waits for the whole device before its stop event.
  dev.launches.clear();
  MeasureOptions untrusted = scripted_options();
  untrusted.untrusted = true;
  const BenchmarkResult c = run_benchmark(dev, queued, queued.sizes[0], untrusted);
  ASSERT_TRUE(c.verified()) << c.error;
  EXPECT_EQ(c.measurement->launch, "device_wide");
  ASSERT_FALSE(dev.launches.empty());
  for (Launch l : dev.launches) EXPECT_EQ(l, Launch::device_wide);
}

TEST(Measure, AWarmVariantIsNeverFlushedAndItsMeasurementSaysSo) {
  // A run that asks for cold caches: every run of an ordinary variant (warm-ups and samples)
  // follows a flush; a variant declared warm (the launch lesson) gets none, and says so.
  ScriptedDevice dev;
  MeasureOptions o = scripted_options();
  ASSERT_TRUE(o.cold_cache);
  Variant cold = toy("cold", Defect::none), warm = toy("warm", Defect::none);
  warm.warm = true;
  const BenchmarkResult a = run_benchmark(dev, cold, cold.sizes[0], o);
  ASSERT_TRUE(a.verified()) << a.error;
  EXPECT_TRUE(a.measurement->cold_cache);
  EXPECT_EQ(dev.flushes, static_cast<int>(a.measurement->samples_s.size()) + o.warmup_runs);
  dev.flushes = 0;
  const BenchmarkResult b = run_benchmark(dev, warm, warm.sizes[0], o);
  ASSERT_TRUE(b.verified()) << b.error;
  EXPECT_FALSE(b.measurement->cold_cache);
  EXPECT_EQ(dev.flushes, 0);
  EXPECT_GE(b.measurement->samples_s.size(), static_cast<std::size_t>(o.min_samples));
}

TEST(Measure, AStopRequestEndsTheMeasurementAtTheNextSample) {
  ScriptedDevice dev;
  dev.after_run = StopAfter{4};
  auto inst = toy("good", Defect::none).make({{"n", 16}});
  MeasureOptions o = scripted_options();
  o.min_samples = 1000;
  o.max_samples = 1000;
  EXPECT_THROW(
      {
        try {
          measure(dev, *inst, o);
        } catch (const Interrupted& e) {
          EXPECT_STREQ(e.what(), "stopped by SIGTERM");
          throw;
        }
      },
      Interrupted);
  EXPECT_EQ(dev.runs, 5);  // it stopped right after the sample during which the stop came
  clear_stop();
}

TEST(GbenchRunner, AStopLeavesTheInterruptedBenchmarkAndEveryLaterOneOut) {
  const Variant first = toy("first", Defect::none), second = toy("second", Defect::none),
                third = toy("third", Defect::none);
  ScriptedDevice dev;
  MeasureOptions o = scripted_options();
  o.min_samples = 20;
  dev.after_run = StopAfter{30};  // the first takes 21 runs (one warm-up): the stop comes in the second
  std::vector<std::string> finished;
  std::ostringstream progress;
  ConsoleProgress console(progress);
  const JobsOutput out = run_jobs(dev, {{&first, first.sizes[0]}, {&second, second.sizes[0]}, {&third, third.sizes[0]}},
                                  o, {}, console, nullptr,
                                  [&](std::size_t i, const JobResult& jr) { finished.push_back(jr.result.name); });
  clear_stop();
  ASSERT_EQ(out.results.size(), 1u);
  EXPECT_EQ(out.results[0].result.name, "toy/first/fp32/n:1024");
  EXPECT_TRUE(out.results[0].result.verified());
  EXPECT_EQ(finished, std::vector<std::string>{"toy/first/fp32/n:1024"});
  EXPECT_NE(progress.str().find("[2/3] toy/second/fp32/n:1024 … stopped by SIGTERM"), std::string::npos)
      << progress.str();
  EXPECT_EQ(progress.str().find("toy/third"), std::string::npos) << progress.str();
}

TEST(GbenchRunner, EveryFinishedBenchmarkIsReportedPassedOrFailed) {
  auto dev = make_cpu_device();
  const Variant good = toy("good", Defect::none), bad = toy("wrong", Defect::wrong_value);
  std::vector<std::pair<std::size_t, bool>> finished;
  std::ostringstream progress;
  ConsoleProgress console(progress);
  run_jobs(*dev, {{&good, good.sizes[0]}, {&bad, bad.sizes[0]}}, fast(), {}, console, nullptr,
           [&](std::size_t i, const JobResult& jr) { finished.emplace_back(i, jr.result.verified()); });
  EXPECT_EQ(finished, (std::vector<std::pair<std::size_t, bool>>{{0, true}, {1, false}}));
}

namespace {
// A user's kernel whose author wrote no check: Instance::verify() is left as the base class's.
class Unchecked final : public Instance {
 public:
  explicit Unchecked(std::int64_t n) : y_(n) {}
  void prepare(std::uint64_t) override {}
  void run() override {
    for (auto& v : y_) v = 2.0f;
  }

 private:
  std::vector<float> y_;
};

Variant unchecked(bool timing_only) {
  Variant v = toy("unchecked", Defect::none);
  v.timing_only = timing_only;
  if (timing_only) v.reference.clear();
  v.make = [](const Params& p) { return std::make_unique<Unchecked>(param(p, "n")); };
  return v;
}
}  // namespace

TEST(Harness, AReferenceWithNoCheckInVerifyGetsNoNumber) {
  auto dev = make_cpu_device();
  const Variant v = unchecked(false);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  EXPECT_FALSE(r.measured());
  EXPECT_FALSE(r.measurement);
  EXPECT_NE(r.error.find("Instance::verify() is not implemented"), std::string::npos) << r.error;
}

TEST(Harness, ATimingOnlyKernelIsMeasuredButMarkedUnverified) {
  auto dev = make_cpu_device();
  const Variant v = unchecked(true);
  const BenchmarkResult r = run_benchmark(*dev, v, v.sizes[0], fast());
  EXPECT_TRUE(r.measured()) << r.error;
  EXPECT_FALSE(r.verified());
  EXPECT_TRUE(r.timing_only);
  ASSERT_TRUE(r.measurement);
  EXPECT_GE(r.measurement->stats.n, 4);
  EXPECT_EQ(r.verification.checked, 0);
  EXPECT_NE(r.verification.method.find("timing only"), std::string::npos) << r.verification.method;
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings.front().rfind("unverified: ", 0), 0u) << r.warnings.front();
}
