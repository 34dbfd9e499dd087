// Clock, power and energy around each sample (bench/power.h, bench/nvml.h), on the CPU:
//   - RAPL read from powercap trees laid out here (the real one, where this machine has it, is
//     read by whatever run the machine makes; a VM usually exposes none, and says so);
//   - NVML through its own code (Nvml's calls) with its answers REPLAYED from a trace written
//     here: every record it makes says "replay", so none of it can pass for a real GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "bench/harness.h"
#include "bench/nvml.h"
#include "bench/power.h"
#include "bench/results.h"
#include "reports/report.h"
#include "tests/testing.h"

using namespace roofbench;
using namespace roofbench::testing;

namespace {

void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

// A trace of NVML's answers, one list per query, each answered in turn (the last repeats).
struct NvmlTrace {
  std::vector<unsigned> clock_mhz;
  std::vector<unsigned long long> reasons, energy_mj;
  std::vector<unsigned> power_mw, temperature_c;
  std::size_t clock_i = 0, reasons_i = 0, energy_i = 0, power_i = 0, temperature_i = 0;
  template <class T>
  static T next(const std::vector<T>& v, std::size_t& i) {
    const T x = v.at(std::min(i, v.size() - 1));
    ++i;
    return x;
  }
};

NvmlApi replay(NvmlTrace& t) {
  NvmlApi api;
  api.source = "replay: a trace written in tests/bench/test_power.cpp";
  static int handle;
  api.init = [] { return 0; };
  api.shutdown = [] { return 0; };
  api.by_pci = [](const char*, void** dev) {
    *dev = &handle;
    return 0;
  };
  api.clock = [&t](void*, int, unsigned* mhz) { return *mhz = NvmlTrace::next(t.clock_mhz, t.clock_i), 0; };
  api.reasons = [&t](void*, unsigned long long* m) { return *m = NvmlTrace::next(t.reasons, t.reasons_i), 0; };
  api.energy_mj = [&t](void*, unsigned long long* mj) { return *mj = NvmlTrace::next(t.energy_mj, t.energy_i), 0; };
  api.power_mw = [&t](void*, unsigned* mw) { return *mw = NvmlTrace::next(t.power_mw, t.power_i), 0; };
  api.temperature = [&t](void*, int, unsigned* c) {
    return *c = NvmlTrace::next(t.temperature_c, t.temperature_i), 0;
  };
  api.power_limit_mw = [](void*, unsigned* mw) { return *mw = 700000, 0; };
  api.driver_version = [](char* text, unsigned length) {
    const char v[] = "580.95.05";
    if (length < sizeof v) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
    std::copy(v, v + sizeof v, text);
    return 0;
  };
  return api;
}

// A GPU as the harness sees it, its NVML replayed; each sample takes 1.5 ms.
class ReplayedGpu final : public Device {
 public:
  explicit ReplayedGpu(NvmlTrace& t) : nvml_(replay(t), "0000:00:00.0") {}
  Backend backend() const override { return Backend::cpu; }
  std::string name() const override { return "replayed"; }
  nlohmann::json describe() const override { return {{"kind", "cpu"}, {"name", "replayed"}, {"power", power_source()}}; }
  std::string timer() const override { return "replay"; }
  std::size_t flush_bytes() const override { return 0; }
  void flush_cache() override {}
  double time_run(Instance& inst, Launch) override {
    inst.run();
    std::this_thread::sleep_for(std::chrono::microseconds(1500));  // the window it is read across
    return 1.5e-3;
  }
  void synchronize() override {}
  std::optional<double> clock_hz() override { return 1.98e9; }
  std::optional<double> sample_clock_hz() override { return nvml_.sm_clock_hz(); }
  std::vector<std::string> clock_limits() override { return nvml_.clock_limits(); }
  PowerReading power_reading() override { return nvml_.power(); }
  std::optional<double> energy_j() override { return nvml_.energy_j(); }  // as bench/cuda_device.cu's
  std::string power_source() const override { return nvml_.source(); }
  const Nvml& nvml() const { return nvml_; }

 private:
  Nvml nvml_;
};

class Copy final : public Instance {
 public:
  void prepare(std::uint64_t) override { x_.assign(64, 1.0f); }
  void run() override { y_ = x_; }
  Verification verify() override {
    Checker chk(tolerance_for(Precision::fp32), "every element");
    for (std::size_t i = 0; i < x_.size(); ++i) chk.check(y_.at(i), x_[i], static_cast<std::int64_t>(i));
    return chk.finish();
  }

 private:
  std::vector<float> x_, y_;
};

// A device whose energy counter advances as NVML's and RAPL's do, on its own clock: 1 J every
// 10 ms of wall time (100 W, whatever runs). (10 ms, not less: on a loaded 2-core runner the polls
// are late by a millisecond or more.) Its runs: as each kind below times them.
class TenMsCounterDevice : public Device {
 public:
  using clock = std::chrono::steady_clock;
  Backend backend() const override { return Backend::cpu; }
  nlohmann::json describe() const override { return {{"kind", "cpu"}, {"name", name()}}; }
  std::string timer() const override { return "steady-clock"; }
  std::size_t flush_bytes() const override { return 0; }
  void flush_cache() override {}
  void synchronize() override {}
  std::optional<double> clock_hz() override { return std::nullopt; }
  PowerReading power_reading() override {
    PowerReading r;
    r.energy_j = std::floor(std::chrono::duration<double>(clock::now() - start_).count() / 10e-3);
    return r;
  }

 private:
  clock::time_point start_ = clock::now();
};

// Runs of 0.1 ms of real time.
class CoarseCounterDevice final : public TenMsCounterDevice {
 public:
  std::string name() const override { return "coarse counter"; }
  double time_run(Instance& inst, Launch) override {
    const auto t0 = clock::now();
    inst.run();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    return std::chrono::duration<double>(clock::now() - t0).count();
  }
};

MeasureOptions ten_samples() {
  MeasureOptions o;
  o.warmup_runs = 1;
  o.min_samples = o.max_samples = 10;
  o.min_time_s = 0;
  o.target_rel_iqr = 0;  // never met: the sample cap stops it
  o.stop_at_noise_floor = false;
  return o;
}

}  // namespace

TEST(Rapl, AMachineWithoutPowercapSaysSoAndReadsNothing) {
  const auto root = scratch_path("rapl-none") / "powercap";
  std::filesystem::remove_all(root);
  Rapl rapl(root);
  EXPECT_FALSE(rapl.available());
  EXPECT_FALSE(rapl.energy_j());
  EXPECT_NE(rapl.describe().find("unavailable: no " + root.string()), std::string::npos) << rapl.describe();
  std::filesystem::create_directories(root / "intel-rapl:0:0");  // a subdomain alone is no package
  EXPECT_NE(Rapl(root).why().find("no RAPL package domain"), std::string::npos) << Rapl(root).why();
  std::filesystem::create_directories(root / "intel-rapl:0");  // a package whose counter cannot be read
  write(root / "intel-rapl:0" / "name", "package-0");
  EXPECT_NE(Rapl(root).why().find("energy_uj is not readable"), std::string::npos) << Rapl(root).why();
}

TEST(Rapl, PackagesAreSummedAndACounterThatWrapsIsCorrectedByItsRange) {
  const auto root = scratch_path("rapl-two") / "powercap";
  std::filesystem::remove_all(root);
  write(root / "intel-rapl:0" / "name", "package-0");
  write(root / "intel-rapl:0" / "max_energy_range_uj", "1000000");
  write(root / "intel-rapl:0" / "energy_uj", "999000");
  write(root / "intel-rapl:1" / "name", "package-1");
  write(root / "intel-rapl:1" / "max_energy_range_uj", "1000000");
  write(root / "intel-rapl:1" / "energy_uj", "5000");
  write(root / "intel-rapl:0:0" / "energy_uj", "123");  // a core subdomain: inside package 0, not added
  Rapl rapl(root);
  ASSERT_TRUE(rapl.available()) << rapl.why();
  EXPECT_EQ(rapl.describe(), "RAPL: package-0, package-1");
  EXPECT_DOUBLE_EQ(*rapl.energy_j(), 0.0);
  write(root / "intel-rapl:0" / "energy_uj", "3000");   // wrapped: 1000 + 3000 uJ
  write(root / "intel-rapl:1" / "energy_uj", "25000");  // 20000 uJ
  EXPECT_NEAR(*rapl.energy_j(), 0.024, 1e-12);
  write(root / "intel-rapl:1" / "energy_uj", "garbage");
  EXPECT_FALSE(rapl.energy_j());  // a failed read is no reading, never a made-up one
}

TEST(Energy, TheMeanPowerOverTheSamplesWindowsTimesTheMedianIsTheEnergyOfARun) {
  Measurement m = measurement_of({1e-3, 1e-3, 2e-3, 1e-3});
  std::string why;
  EXPECT_FALSE(energy_summary(m, &why));
  EXPECT_NE(why.find("no energy counter"), std::string::npos);
  m.sample_energy_j = {0, 0, 0, 0};
  m.sample_window_s = {1.1e-3, 1.1e-3, 2.1e-3, 1.1e-3};
  EXPECT_FALSE(energy_summary(m, &why));  // a counter coarser than the samples: said, not guessed
  EXPECT_NE(why.find("did not advance across any of the 4 samples"), std::string::npos) << why;
  m.sample_energy_j = {0, 0.5, 0, 0.04};  // a counter that moves in whole updates
  EXPECT_FALSE(energy_summary(m, &why));  // how often it moves was not measured (an older file)
  EXPECT_NE(why.find("update interval is not known"), std::string::npos) << why;
  m.energy_interval_s = 1e-3;  // an update a millisecond (RAPL): windows of 1.1 ms span one
  EXPECT_FALSE(energy_summary(m, &why));
  EXPECT_NE(why.find("span fewer than 10 updates of the energy counter (one every 1 ms)"), std::string::npos) << why;
  m.energy_interval_s = 1e-4;  // windows of eleven updates: each difference is within one of its energy
  const auto e = energy_summary(m);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->mean_power_w, 0.54 / 5.4e-3, 1e-9);
  EXPECT_NEAR(e->joules_per_run, 100.0 * m.stats.median, 1e-9);
  EXPECT_EQ(e->samples, 4);
  EXPECT_EQ(e->samples_counted, 2);
}

// What the second H200 visit showed: NVML's counter advanced about every 100 ms, and samples of
// 34 us to 4 ms summed to 0.9-13 kW on a 700 W GPU. Samples so much briefer than the counter's
// updates get no energy, with why; samples that span many updates get it.
TEST(Energy, SamplesBrieferThanTheCountersUpdatesGetNoEnergyAndLongOnesDo) {
  Measurement m = measurement_of(std::vector<double>(28, 12.7e-6));
  m.sample_window_s.assign(28, 34e-6);
  m.sample_energy_j.assign(28, 0.0);
  m.sample_energy_j[7] = 12.718;  // one 100 ms update of a GPU idling at 127 W, caught by one sample
  m.energy_interval_s = 0.1;
  std::string why;
  EXPECT_FALSE(energy_summary(m, &why));
  EXPECT_NE(why.find("(0.034 ms, the median) span fewer than 10 updates"), std::string::npos) << why;
  // Five samples of 1.2 s at 500 W, read across a counter of 100 ms updates: 12 updates each, give
  // or take one.
  Measurement slow = measurement_of({1.2, 1.2, 1.2, 1.2, 1.2});
  slow.sample_window_s.assign(5, 1.2);
  slow.sample_energy_j = {600, 550, 650, 600, 600};
  slow.energy_interval_s = 0.1;
  const auto e = energy_summary(slow);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->mean_power_w, 500, 1e-9);
  EXPECT_NEAR(e->joules_per_run, 600, 1e-9);
}

// Samples briefer than 10 updates of the counter get an energy pass after them, where 10 updates
// fit in --energy-pass: the kernel back to back, the counter read across it. Without the pass
// they get no energy; a sustained pass's hold gives it too.
TEST(Energy, BriefSamplesGetAnEnergyPassAcrossTenUpdatesOfTheCounter) {
  CoarseCounterDevice dev;
  Copy inst;
  inst.prepare(1);
  MeasureOptions o = ten_samples();
  o.energy_pass_s = 0;
  const Measurement none = measure(dev, inst, o);
  ASSERT_TRUE(none.energy_interval_s);
  EXPECT_GT(*none.energy_interval_s, 5e-3);
  EXPECT_LT(*none.energy_interval_s, 20e-3);
  EXPECT_FALSE(none.energy_run);
  std::string why;
  EXPECT_FALSE(energy_summary(none, &why));  // its windows caught one update or none
  EXPECT_TRUE(why.find("span fewer than 10 updates") != std::string::npos ||
              why.find("did not advance across any of the 10 samples") != std::string::npos)
      << why;

  o.energy_pass_s = 0.3;  // 10 updates of 10 ms fit: the pass may run for 1.1 x 100 ms
  const Measurement m = measure(dev, inst, o);
  ASSERT_TRUE(m.energy_run);
  EXPECT_EQ(m.energy_run->kind, "pass");
  // It read the counter after its batches (at most every 1 ms) and ended once a window between two
  // changes it saw spanned 3 changes, timed within 2%: well before 10 updates.
  ASSERT_TRUE(m.energy_run->window);
  EXPECT_GE(m.energy_run->window->changes, kEnergyWindowChanges);
  EXPECT_LE(m.energy_run->window->gap_s, kEnergyWindowSlack * m.energy_run->window->seconds);
  EXPECT_LT(m.energy_run->seconds, 10 * *m.energy_interval_s);
  EXPECT_GT(m.energy_run->runs, 10);
  const auto e = energy_summary(m, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_EQ(e->from, "pass");
  EXPECT_TRUE(e->window);
  EXPECT_GT(e->mean_power_w, 90);  // 100 W: whole updates, timed within 2%
  EXPECT_LT(e->mean_power_w, 110);
  // A run back to back, warm: the pass's own mean run, not the cold samples' median.
  EXPECT_NEAR(e->joules_per_run, e->mean_power_w * m.energy_run->busy_s / m.energy_run->runs, 1e-12);

  o.energy_pass_s = 0.03;  // 10 updates take 100 ms: more than the pass may, so none
  EXPECT_FALSE(measure(dev, inst, o).energy_run);

  o.energy_pass_s = 0;
  o.hold_s = 0.2;  // a sustained pass: its hold is read across (20 updates), and no pass follows
  const Measurement held = measure(dev, inst, o);
  ASSERT_TRUE(held.energy_run);
  EXPECT_EQ(held.energy_run->kind, "hold");
  EXPECT_DOUBLE_EQ(held.held_s, held.energy_run->seconds);
  const auto h = energy_summary(held, &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->from, "hold");

  // Into a results file and back, and one the reader refuses.
  Results r = sample_results();
  r.benchmarks = {kernel("passed", 2e9, 1e9, 1e-4)};
  r.benchmarks[0].measurement = m;
  const Results back = parse_results(dump_results(r));
  const Measurement& b = *back.benchmarks[0].measurement;
  ASSERT_TRUE(b.energy_run);
  EXPECT_EQ(b.energy_run->runs, m.energy_run->runs);
  EXPECT_EQ(energy_summary(b)->from, "pass");
  ASSERT_TRUE(b.energy_run->window);
  EXPECT_EQ(b.energy_run->window->changes, m.energy_run->window->changes);
  EXPECT_DOUBLE_EQ(b.energy_run->window->gap_s, m.energy_run->window->gap_s);
  EXPECT_TRUE(energy_summary(b)->window);
  nlohmann::json j = nlohmann::json::parse(dump_results(r));
  j["benchmarks"][0]["measurement"]["energy_run"]["kind"] = "guess";
  EXPECT_THROW(parse_results(j.dump()), InputError);
  j["benchmarks"][0]["measurement"]["energy_run"]["kind"] = "hold";  // a hold the measurement never held
  EXPECT_THROW(parse_results(j.dump()), InputError);
  j["benchmarks"][0]["measurement"]["energy_run"]["kind"] = "pass";
  j["benchmarks"][0]["measurement"]["energy_run"]["busy_s"] = 2 * m.energy_run->seconds;  // busier than long
  EXPECT_THROW(parse_results(j.dump()), InputError);
  j["benchmarks"][0]["measurement"]["energy_run"]["busy_s"] = m.energy_run->busy_s;
  EXPECT_NO_THROW(parse_results(j.dump()));
  j["benchmarks"][0]["measurement"]["energy_run"]["window"]["seconds"] = 2 * m.energy_run->seconds;  // past its run
  EXPECT_THROW(parse_results(j.dump()), InputError);
  j["benchmarks"][0]["measurement"]["energy_run"]["window"]["seconds"] = m.energy_run->window->seconds;
  j["benchmarks"][0]["measurement"]["energy_run"]["window"]["changes"] = 0;
  EXPECT_THROW(parse_results(j.dump()), InputError);
}

// A GPU whose runs take 0.2 ms each and whose every sample costs 0.1 ms more of wall time (the
// synchronize, the launch and the NVML reads, which the events do not bracket); its energy counter
// advances 1 J every 10 ms. Counted: the runs each sample made, and how it was launched.
class LaunchBoundGpu final : public TenMsCounterDevice {
 public:
  explicit LaunchBoundGpu(const int& runs) : runs_(runs) {}
  std::string name() const override { return "launch-bound"; }
  double time_run(Instance& inst, Launch launch) override {
    const int before = runs_;
    inst.run();
    const int made = runs_ - before;
    batches.push_back({made, launch});
    std::this_thread::sleep_for(std::chrono::microseconds(200 * made + 100));
    return 0.2e-3 * made;  // the GPU's work alone
  }
  std::vector<std::pair<int, Launch>> batches;

 private:
  const int& runs_;
};

class Counted final : public Instance {
 public:
  void prepare(std::uint64_t) override {}
  void run() override { ++runs; }
  Verification verify() override { return Verification{}; }
  int runs = 0;
};

// One run at a time, with 0.1 ms between runs of 0.2 ms, the pass would keep the GPU busy 67% of
// its time (less with a sleep's lateness), under the 80% an energy figure needs. Batched as the
// samples are launched, 16 runs a batch (3.2 ms, the most; queued behind the hold on a real GPU),
// it keeps it busy 97% (over 80% still with 0.7 ms of oversleep a batch on a loaded runner), and
// gets its energy. The first run goes alone, after a synchronize: its time sizes the batches.
TEST(Energy, TheEnergyPassRunsInBatchesLaunchedAsTheSamplesAreSoThatABriefKernelKeepsTheGpuBusy) {
  Counted inst;
  LaunchBoundGpu dev(inst.runs);
  MeasureOptions o = ten_samples();
  o.energy_pass_s = 0.3;  // 10 updates of 10 ms: a pass of 110 ms
  const Measurement m = measure(dev, inst, o, Launch::hidden);
  ASSERT_TRUE(m.energy_run);
  EXPECT_EQ(m.energy_run->kind, "pass");
  std::string why;
  const auto e = energy_summary(m, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_EQ(e->from, "pass");
  EXPECT_GE(m.energy_run->busy_s, kEnergyBusyShare * m.energy_run->seconds);
  EXPECT_NEAR(e->joules_per_run, e->mean_power_w * 0.2e-3, 1e-9);  // its power times its own 0.2 ms
  // The pass's batches: after the warm-up (1) and the 10 samples (1 each), one run alone after a
  // synchronize, then batches of 16 (4 ms / 0.2 ms, at most 16), launched as the samples.
  ASSERT_GT(dev.batches.size(), 12u);
  const auto pass = std::vector<std::pair<int, Launch>>(dev.batches.begin() + 11, dev.batches.end());
  EXPECT_EQ(pass[0], std::make_pair(1, Launch::synchronous));
  for (std::size_t i = 1; i < pass.size(); ++i) EXPECT_EQ(pass[i], std::make_pair(16, Launch::hidden)) << i;
  EXPECT_EQ(m.energy_run->runs, 1 + 16 * static_cast<int>(pass.size() - 1));

  // A kernel that declares 8 launches a run gets batches of 2 (16 launches at most).
  dev.batches.clear();
  o.launches_per_run = 8;
  const Measurement few = measure(dev, inst, o, Launch::hidden);
  ASSERT_TRUE(few.energy_run);
  EXPECT_EQ(dev.batches.back(), std::make_pair(2, Launch::hidden));
}

// A sustained ceiling's hold gives the ceiling's energy where its brief samples cannot: the
// report's energy table has a row for it, marked, and its work per joule is the ceiling's best.
TEST(Energy, ASustainedCeilingsHoldIsItsOwnRowInTheEnergyTable) {
  Results r = sample_results();
  r.device["power"] = "NVML";
  Ceiling& fma = r.ceilings[2];
  ASSERT_EQ(fma.name, "fp32_fma");
  Measurement held = measurement_of(std::vector<double>(10, 1e-3));
  held.sample_window_s.assign(10, 1.1e-3);
  held.sample_energy_j.assign(10, 0.0);
  held.energy_interval_s = 0.1;
  held.held_s = 10;
  held.energy_run = Measurement::EnergyRun{"hold", 10.0, 5000.0, 9.5, 9000};
  fma.measurement_sustained = held;
  fma.value_sustained = 0.9e12;
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("| `fp32_fma (sustained)` | 0.53 J (hold) | 500 W |"), std::string::npos) << md;
  EXPECT_NE(md.find("1.80 GFLOP/J by `fp32_fma (sustained)`"), std::string::npos) << md;
}

// A back-to-back run that left the device idle between its runs says so, and gives no energy.
TEST(Energy, ARunThatKeptTheDeviceBusyUnder80PercentGivesNone) {
  Measurement m = measurement_of(std::vector<double>(10, 5e-6));
  m.sample_window_s.assign(10, 20e-6);
  m.sample_energy_j.assign(10, 0.0);
  m.energy_interval_s = 0.1;
  m.energy_run = Measurement::EnergyRun{"pass", 1.1, 140.0, 0.3, 100000};
  std::string why;
  EXPECT_FALSE(energy_summary(m, &why));
  EXPECT_NE(why.find("the energy pass's 100000 runs kept the device busy 27% of its 1.1 s"), std::string::npos) << why;
  m.energy_run->busy_s = 1.0;
  const auto e = energy_summary(m, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_NEAR(e->mean_power_w, 140.0 / 1.1, 1e-9);
  m.energy_run->seconds = 0.5;  // fewer than 10 updates of 100 ms
  EXPECT_FALSE(energy_summary(m, &why));
  EXPECT_NE(why.find("the energy pass (0.5 s) spans fewer than 10 updates"), std::string::npos) << why;
}

// A pass's window between two changes of the counter gives the power where it spans 3 changes and
// its time is known within 2%; else the whole run's 10 updates are needed, and the reason names both.
TEST(Energy, ARunsWindowBetweenTwoChangesOfTheCounterGivesThePowerWhereItIsSharp) {
  Measurement m;
  m.stats.median = 1e-3;
  m.energy_interval_s = 0.1;
  m.energy_run = Measurement::EnergyRun{"pass", 0.45, 200.0, 0.44, 440};
  m.energy_run->window = Measurement::EnergyRun::Window{0.3, 150.0, 0.004, 3};  // 500 W, seen within 4 ms
  std::string why;
  auto e = energy_summary(m, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_TRUE(e->window);
  EXPECT_DOUBLE_EQ(e->mean_power_w, 500.0);  // the window's, not the run's 444 W (cut updates at its ends)
  EXPECT_DOUBLE_EQ(e->joules_per_run, 500.0 * 0.44 / 440);
  m.energy_run->window->gap_s = 0.02;  // seen up to 20 ms late: 7% of 0.3 s, too coarse; 0.45 s < 10 updates
  EXPECT_FALSE(energy_summary(m, &why));
  EXPECT_NE(why.find("spans fewer than 10 updates of the counter, and its window between two of its changes (3 "
                     "changes in 0.3 s, seen up to 20 ms late) is too short or too coarse"),
            std::string::npos)
      << why;
  m.energy_run->window->gap_s = 0.004;
  m.energy_run->window->changes = 2;  // too few changes
  EXPECT_FALSE(energy_summary(m));
  m.energy_run->seconds = 1.1;  // the whole run spans 10 updates (and kept the device busy): its own mean power
  m.energy_run->busy_s = 1.05;
  e = energy_summary(m, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_FALSE(e->window);
  EXPECT_DOUBLE_EQ(e->mean_power_w, 200.0 / 1.1);
}

TEST(Energy, TheCountersUpdateIntervalIsTheMedianGapBetweenItsChanges) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // A counter that advances every 10 ms of wall time, as RAPL's or NVML's do on their own.
  auto every_10ms = [start]() -> std::optional<double> {
    return std::floor(std::chrono::duration<double>(clock::now() - start).count() / 10e-3);
  };
  const auto interval = counter_update_interval(every_10ms, 1.0);
  ASSERT_TRUE(interval);
  EXPECT_GT(*interval, 5e-3);
  EXPECT_LT(*interval, 20e-3);
  std::string why;
  EXPECT_FALSE(counter_update_interval([] { return std::optional<double>(5.0); }, 0.05, &why));  // never moves
  EXPECT_EQ(why, "the counter advanced 0 time(s) in 0.05 s");
  EXPECT_FALSE(counter_update_interval([] { return std::optional<double>(); }, 0.05, &why));  // no reading
  EXPECT_EQ(why, "the counter could not be read");
}

// REPLAYED: the clock read while a power-capped GEMM ran, the limits NVML gave with it, its power,
// temperature and energy counter, per sample, through the harness and into the results file.
TEST(NvmlReplayed, EachSampleGetsTheClockItRanAtItsLimitsPowerTemperatureAndEnergy) {
  NvmlTrace t;
  // The reference after the warm-up, then ten samples: three at a power-capped 1.52 GHz.
  t.clock_mhz = {1980, 1980, 1980, 1980, 1980, 1520, 1520, 1520, 1980, 1980, 1980};
  t.reasons = {0, 0, 0, 0, 0x4, 0x4, 0x4, 0, 0, 0};
  t.energy_mj = {};
  for (unsigned long long k = 0; k < 40; ++k) t.energy_mj.push_back(100000 + 1000 * k);  // 1 J a reading
  t.power_mw = {650000, 690000};
  t.temperature_c = {55, 61};
  ReplayedGpu dev(t);
  ASSERT_TRUE(dev.nvml().available()) << dev.nvml().why();
  EXPECT_EQ(dev.nvml().power_limit_w(), 700.0);
  EXPECT_EQ(dev.nvml().driver_version(), "580.95.05");
  Copy inst;
  inst.prepare(1);
  const MeasureOptions o = ten_samples();
  const Measurement m = measure(dev, inst, o);
  ASSERT_EQ(m.samples_s.size(), 10u);
  EXPECT_EQ(m.throttled, (std::vector<int>{4, 5, 6}));
  ASSERT_EQ(m.sample_clock_limits.size(), 10u);
  EXPECT_EQ(m.sample_clock_limits[3], "");
  EXPECT_EQ(m.sample_clock_limits[4], "sw_power_cap");
  ASSERT_EQ(m.sample_energy_j.size(), 10u);
  for (double j : m.sample_energy_j) EXPECT_DOUBLE_EQ(j, 1.0);
  EXPECT_EQ(m.sample_power_w.size(), 10u);
  EXPECT_DOUBLE_EQ(m.sample_power_w.back(), 690.0);
  EXPECT_DOUBLE_EQ(m.sample_temperature_c.back(), 61.0);
  // Power and temperature once a sample, after its run; before it, the energy counter alone.
  EXPECT_EQ(t.power_i, 10u);
  EXPECT_EQ(t.temperature_i, 10u);
  const auto w = measurement_warnings(m, o);
  ASSERT_FALSE(w.empty());
  EXPECT_NE(w[0].find("3 of 10 samples (30%) ran below 90%"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("limited by sw_power_cap"), std::string::npos) << w[0];

  // Into a results file and back: the series, and the energy derived from them again.
  Results r = sample_results();
  r.device = dev.describe();
  r.benchmarks = {kernel("replayed", 2e9, 1e9, 1.5e-3)};
  r.benchmarks[0].measurement = m;
  const Results back = parse_results(dump_results(r));
  const Measurement& b = *back.benchmarks[0].measurement;
  EXPECT_EQ(b.sample_clock_limits, m.sample_clock_limits);
  EXPECT_EQ(b.sample_energy_j, m.sample_energy_j);
  EXPECT_EQ(b.sample_temperature_c, m.sample_temperature_c);
  ASSERT_TRUE(m.energy_interval_s);  // probed through the same replayed counter, once
  EXPECT_EQ(b.energy_interval_s, m.energy_interval_s);
  const auto e = energy_summary(b);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->joules_per_run, e->mean_power_w * 1.5e-3, 1e-12);
  // The report says where the figures come from: a replay, never a GPU.
  const std::string md = render_markdown(back);
  EXPECT_NE(md.find("**Energy** (replay: a trace written"), std::string::npos) << md;
  EXPECT_NE(md.find("| 61 °C |"), std::string::npos);
  EXPECT_NE(md.find("FLOP/J"), std::string::npos);
}

// The NVIDIA driver's version (what nvidia-smi prints), where NVML gives it; nothing made up where
// the entry point is absent (an old driver) or fails.
TEST(NvmlReplayed, TheDriverVersionIsNvmlsOrNone) {
  NvmlTrace t;
  t.clock_mhz = {1980};
  EXPECT_EQ(Nvml(replay(t), "0000:00:00.0").driver_version(), "580.95.05");
  NvmlApi absent = replay(t);
  absent.driver_version = nullptr;
  EXPECT_EQ(Nvml(std::move(absent), "0000:00:00.0").driver_version(), std::nullopt);
  NvmlApi failing = replay(t);
  failing.driver_version = [](char*, unsigned) { return 999; };  // NVML_ERROR_UNKNOWN
  EXPECT_EQ(Nvml(std::move(failing), "0000:00:00.0").driver_version(), std::nullopt);
}

// The energy counter alone (an energy pass reads it after its batches): one query, the energy
// query's answer in joules, and none where that query fails or is absent.
TEST(NvmlReplayed, TheEnergyCounterAloneIsOneQuery) {
  NvmlTrace t;
  t.clock_mhz = {1980};
  t.energy_mj = {5000, 7500};
  t.power_mw = {300000};
  t.temperature_c = {50};
  Nvml nvml(replay(t), "0000:00:00.0");
  EXPECT_EQ(nvml.energy_j(), 5.0);
  EXPECT_EQ(nvml.energy_j(), 7.5);
  EXPECT_EQ(t.power_i, 0u);  // neither power nor temperature was asked
  EXPECT_EQ(t.temperature_i, 0u);
  NvmlApi failing = replay(t);
  failing.energy_mj = [](void*, unsigned long long*) { return 999; };
  EXPECT_EQ(Nvml(std::move(failing), "0000:00:00.0").energy_j(), std::nullopt);
  NvmlApi absent = replay(t);
  absent.energy_mj = nullptr;
  EXPECT_EQ(Nvml(std::move(absent), "0000:00:00.0").energy_j(), std::nullopt);
}

TEST(NvmlReplayed, CooldownWaitsForTheClockToComeBackBeforeTheNextSample) {
  NvmlTrace t;
  // Reference, sample 0 throttled; the cool-down polls 1.50, 1.50, then 1.98 GHz; sample 1.
  t.clock_mhz = {1980, 1500, 1500, 1500, 1980, 1980};
  t.reasons = {0x4};
  t.energy_mj = {1};
  t.power_mw = {1};
  t.temperature_c = {1};
  ReplayedGpu dev(t);
  Copy inst;
  inst.prepare(1);
  MeasureOptions o = ten_samples();
  o.min_samples = o.max_samples = 2;
  o.cooldown_s = 5;
  const Measurement m = measure(dev, inst, o);
  EXPECT_EQ(m.throttled, std::vector<int>{0});
  EXPECT_EQ(t.clock_i, 6u);  // every poll of the cool-down read the clock, and it stopped at 1.98
  EXPECT_GE(m.cooldown_s, 0.03);
  EXPECT_LT(m.cooldown_s, 5.0);  // it stopped once the clock came back, not at its limit
  EXPECT_NE(measurement_warnings(m, o)[0].find("waited for the clock to recover"), std::string::npos);
}

TEST(Energy, WithoutAnyReadingTheReportSaysUnavailableAndWhy) {
  Results r = sample_results();
  r.device["power"] = "unavailable: no /sys/class/powercap: this kernel exposes no RAPL energy counters";
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("**Energy**: unavailable: no /sys/class/powercap"), std::string::npos) << md;
  EXPECT_EQ(md.find("J a run"), std::string::npos);
}

TEST(Energy, AResultsFileWithPerSampleSeriesOfTheWrongLengthOrSignIsRefused) {
  Results r = sample_results();
  r.benchmarks = {kernel("a", 2e9, 1e9, 1e-3)};
  nlohmann::json j = r;
  auto& m = j["benchmarks"][0]["measurement"];
  m["sample_energy_j"] = {1.0, 1.0};
  m["sample_window_s"] = {1.0, 1.0};
  EXPECT_THROW(parse_results(j.dump()), InputError);  // 3 samples, 2 values
  m["sample_energy_j"] = {1.0, -1.0, 1.0};
  m["sample_window_s"] = {1.0, 1.0, 1.0};
  EXPECT_THROW(parse_results(j.dump()), InputError);
  m["sample_energy_j"] = {1.0, 1.0, 1.0};
  m.erase("sample_window_s");
  EXPECT_THROW(parse_results(j.dump()), InputError);
  m["sample_window_s"] = {1.0, 1.0, 1.0};
  EXPECT_NO_THROW(parse_results(j.dump()));
}
