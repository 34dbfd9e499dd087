// Planted kernels that would fool a roofline, each run through the whole driver on the CPU: each
// must fail the run (exit 1) with a message of its own, and none may be drawn as a real point.
//
//   planted/overdeclared      copies n floats but declares 4n read and 4n written (it moves a
//                             quarter of the bytes it declares; half is caught on a quiet
//                             machine, but beside other tests on a 2-core VM a copy's samples
//                             spread as wide as that): IMPLAUSIBLE, its work the likely cause
//   planted/cached            computes once, then copies its first output back every run: fails
//                             the check after the timed samples, on fresh inputs
//   planted/work_in_prepare   does its work in prepare() and none in run(): passes both checks,
//                             and its time is nothing: IMPLAUSIBLE, far above its roof
//   planted/nothing           timing only, and does nothing: IMPLAUSIBLE, nothing checked it
//   planted/beats_weak        a copy placed against planted_weak_copy, a ceiling that idles seven
//                             eighths of its time: IMPLAUSIBLE, the ceiling the likely cause, and
//                             the ceiling itself flagged as no upper bound (measured once more
//                             after the kernels came out above it, and still weak)
//
//   planted/overdeclared_brief a claim of 16 times on arrays of 32 MiB, a copy briefer than a DRAM
//                             ceiling's sample: the DRAM roofs it came out above are measured
//                             once more in samples as brief as its own too (from the flushed
//                             cache, arrays no smaller than twice the last-level cache), and it
//                             stays IMPLAUSIBLE: a brief roof lifts what the machine did, not a
//                             claim
//
// And one that must pass: planted/brief_copy, one brief copy placed against
// planted_windowed_copy, a ceiling of many such copies a sample that idles 63 times as long as it
// copied once a sample holds more than one copy (a machine that throttles long samples and not
// brief ones, as a CPU quota of a few milliseconds a period does). The kernel
// comes out far above that roof, which is then measured once more in samples as brief as the
// kernel's (CeilingSpec::repeat_param): the roof rises to what a brief copy does, and the kernel,
// declared at half the bytes it moves, sits below it.
//
// (Declaring fewer bytes than a kernel moves can only make it look slower: a point is above its
// roof when its declared work is above what it does, its time below what it took, or its roof
// below what the machine does. The planted kernels cover each.)
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/cpu_info.h"
#include "bench/registry.h"
#include "bench/results.h"
#include "reports/format.h"
#include "roofbench/host_buffer.h"
#include "roofbench/main.h"
#include "roofbench/random.h"
#include "roofbench/verify.h"
#include "tests/testing.h"

using namespace roofbench;
namespace fs = std::filesystem;

namespace {

// 32 MiB an array: past every L2, and flushed before every sample like any kernel's.
constexpr std::int64_t kN = std::int64_t{1} << 23;
// The overdeclared copy at the DRAM ceilings' own size (512 MiB an array), where the C library's
// memcpy runs as fast as in the memcpy ceiling: smaller copies ran at 60% of it here, with a 25%
// IQR, and a claim of twice the bytes then sat within the run's noise of the roof.
constexpr std::int64_t kCeilingN = std::int64_t{1} << 27;

enum class Trick { overdeclared, cached, work_in_prepare, nothing, beats_weak };

// y = x over n floats, each thread a chunk with memcpy (what the C library does best).
void copy_floats(const float* from, float* to, std::int64_t n) {
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t per = (n + threads - 1) / threads;
    const std::int64_t b = std::min(n, t * per), e = std::min(n, b + per);
    if (e > b) std::memcpy(to + b, from + b, static_cast<std::size_t>(e - b) * sizeof(float));
  }
}

// y = x, each thread a chunk with memcpy (what the C library does best), or the trick.
class Planted final : public Instance {
 public:
  Planted(std::int64_t n, Trick t) : n_(n), trick_(t), x_(n), y_(n), cache_(t == Trick::cached ? n : 0) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_, seed);
    y_.poison();
    if (trick_ == Trick::work_in_prepare) copy(x_.data(), y_.data());  // untimed
  }

  void run() override {
    switch (trick_) {
      case Trick::work_in_prepare:
      case Trick::nothing:
        return;
      case Trick::cached:
        if (!have_cache_) {
          copy(x_.data(), cache_.data());
          have_cache_ = true;
        }
        copy(cache_.data(), y_.data());  // the first output, whatever x holds now
        return;
      case Trick::overdeclared:
      case Trick::beats_weak:
        copy(x_.data(), y_.data());
        return;
    }
  }

  Verification verify() override {
    return check_all(tolerance_for(Precision::fp32), "every element vs x", n_,
                     [&](Checker& chk, std::int64_t i) { chk.check(y_[i], static_cast<double>(x_[i]), i); });
  }

 private:
  void copy(const float* from, float* to) const { copy_floats(from, to, n_); }

  std::int64_t n_;
  Trick trick_;
  HostBuffer<float> x_, y_, cache_;
  bool have_cache_ = false;
};

Variant planted(const char* name, Trick t) {
  Variant v;
  v.family = "planted";
  v.variant = name;
  v.reference = "y = x";
  v.backend = Backend::cpu;
  v.sizes = v.quick_sizes = v.test_sizes = vector_sizes({t == Trick::overdeclared ? kCeilingN : kN});
  const Count n = Count::param("n");
  if (t == Trick::overdeclared)
    v.work = Work().read<float>("x, declared four times", 4 * n).write<float>("y, declared four times", 4 * n);
  else if (t == Trick::beats_weak)
    v.work = Work().phase("y = x", "planted_weak_copy").read<float>("x", n).write<float>("y", n);
  else
    v.work = Work().read<float>("x", n).write<float>("y", n);
  if (t == Trick::nothing) {
    v.reference.clear();
    v.timing_only = true;
  }
  v.make = [t](const Params& p) { return std::make_unique<Planted>(param(p, "n"), t); };
  return v;
}
ROOFBENCH_REGISTER(planted("overdeclared", Trick::overdeclared));
// Sixteen times, not four: a copy of 32 MiB arrays ran at a third of the copy roof with a 70% IQR
// beside other tests under a CPU quota, where four times its bytes sat within the noise.
Variant overdeclared_brief() {
  Variant v = planted("overdeclared_brief", Trick::overdeclared);
  v.sizes = v.quick_sizes = v.test_sizes = vector_sizes({kN});
  const Count n = Count::param("n");
  v.work = Work().read<float>("x, declared 16 times", 16 * n).write<float>("y, declared 16 times", 16 * n);
  return v;
}
ROOFBENCH_REGISTER(overdeclared_brief());
ROOFBENCH_REGISTER(planted("cached", Trick::cached));
ROOFBENCH_REGISTER(planted("work_in_prepare", Trick::work_in_prepare));
ROOFBENCH_REGISTER(planted("nothing", Trick::nothing));
ROOFBENCH_REGISTER(planted("beats_weak", Trick::beats_weak));

// A copy ceiling that idles seven times as long as it copies: a roof at an eighth of the
// machine's copy rate (at a quarter, a copy slowed 4x by a loaded CI core once came out at 97% of
// it). The idle is fixed when it is prepared (seven times its fastest of three copies), not taken
// from each run's copy: a sleep that followed each copy multiplied its noise by
// four, and on a loaded 2-core VM the ceiling's fastest sample then ran 2.5x its median, an
// upside that let the planted kernel through at 283% of its roof.
class WeakCopy final : public Instance {
 public:
  explicit WeakCopy(std::int64_t n) : inner_(n, Trick::beats_weak) {}
  void prepare(std::uint64_t seed) override {
    inner_.prepare(seed);
    auto best = std::chrono::steady_clock::duration::max();
    for (int i = 0; i < 3; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      inner_.run();
      best = std::min(best, std::chrono::steady_clock::now() - t0);
    }
    idle_ = 7 * best;
  }
  void run() override {
    inner_.run();
    std::this_thread::sleep_for(idle_);
  }
  Verification verify() override { return inner_.verify(); }

 private:
  Planted inner_;
  std::chrono::steady_clock::duration idle_{};
};

// A planted copy ceiling, a pass's ceiling by name (level_roof false): its planted kernel's, and
// no one else's.
Variant planted_ceiling(const std::string& name, const std::string& method) {
  Variant v;
  v.family = "ceiling";
  v.variant = name;
  v.reference = "y = x";
  v.backend = Backend::cpu;
  CeilingSpec c(name, CeilingKind::bandwidth, Level::dram, method);
  c.level_roof = false;
  v.ceiling = c;
  return v;
}

Variant weak_ceiling() {
  Variant v = planted_ceiling("planted_weak_copy", "a copy that idles 7x as long as it copies");
  v.sizes = v.quick_sizes = v.test_sizes = vector_sizes({kN});
  v.work = Work().read<float>("x", Count::param("n")).write<float>("y", Count::param("n"));
  v.make = [](const Params& p) { return std::make_unique<WeakCopy>(param(p, "n")); };
  return v;
}
ROOFBENCH_REGISTER(weak_ceiling());

// The brief copy's n: 256 KiB an array, a copy of some 10 to 50 us from DRAM after the flush.
constexpr std::int64_t kBriefN = std::int64_t{1} << 16;

// `passes` copies a sample, each of a region of its own (every one cold after the flush, as the
// brief kernel's one copy is), and in a sample of more than one pass an idle 63 times as long as
// it was busy: in samples of its 32 passes a roof at a 64th of what a copy does, in samples of one
// pass all of it. (A machine that throttles past a window of some 0.2 ms busy; the window is
// counted in passes, not timed, so that a stall of the test machine inside a brief sample cannot
// make it idle too and turn the test's verdict.)
class WindowedCopy final : public Instance {
 public:
  WindowedCopy(std::int64_t n, std::int64_t passes) : n_(n), passes_(passes), x_(n * passes), y_(n * passes) {}
  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), n_ * passes_, seed);
    y_.poison();
  }
  void run() override {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < passes_; ++i) copy_floats(x_.data() + i * n_, y_.data() + i * n_, n_);
    const auto busy = std::chrono::steady_clock::now() - t0;
    if (passes_ > 1) std::this_thread::sleep_for(63 * busy);
  }
  Verification verify() override {
    return check_all(tolerance_for(Precision::fp32), "every element vs x", n_ * passes_,
                     [&](Checker& chk, std::int64_t i) { chk.check(y_[i], static_cast<double>(x_[i]), i); });
  }

 private:
  std::int64_t n_, passes_;
  HostBuffer<float> x_, y_;
};

Variant windowed_ceiling() {
  Variant v = planted_ceiling("planted_windowed_copy",
                              "copies of regions of their own, idling 63x as long as busy in a sample of more than one");
  v.sizes = v.quick_sizes = v.test_sizes = {{{"n", kBriefN}, {"passes", 32}}};
  v.work = Work()
               .read<float>("x", Count::param("n"), Count::param("passes"))
               .write<float>("y", Count::param("n"), Count::param("passes"));
  v.ceiling->repeat_param = "passes";
  v.make = [](const Params& p) { return std::make_unique<WindowedCopy>(param(p, "n"), param(p, "passes")); };
  return v;
}
ROOFBENCH_REGISTER(windowed_ceiling());

Variant brief_copy() {
  Variant v = planted("brief_copy", Trick::beats_weak);
  v.sizes = v.quick_sizes = v.test_sizes = vector_sizes({kBriefN});
  // Its reads alone: half the bytes it moves, so that on the brief roof it sits at about half.
  v.work = Work().phase("y = x", "planted_windowed_copy").read<float>("x (y left out)", Count::param("n"));
  return v;
}
ROOFBENCH_REGISTER(brief_copy());

// One run of every planted kernel, shared by the tests below (the ceilings take most of its
// time). The DRAM roofs kept are read and copy (about the C library's memcpy, which the planted
// copies call): the overdeclared copy then claims about four times its roof.
const fs::path kRunDir = roofbench::testing::scratch_path("rb_planted");

struct PlantedRun {
  int code = -1;
  Results results;
};

const PlantedRun& planted_run() {
  static const PlantedRun run = [] {
    fs::remove_all(kRunDir);
    PlantedRun r;
    r.code = roofbench::testing::run_main({"run", "--device", "cpu", "--quick", "--filter", "^planted/", "--skip",
                                           "ceiling/(dram_(write|triad|update|memcpy)|l2|l3|fp64|math_|launch_)", "--out",
                                           kRunDir.string()});
    r.results = load_results((kRunDir / "results.json").string());
    return r;
  }();
  return run;
}

const BenchmarkResult& planted_result(const std::string& variant) {
  for (const auto& b : planted_run().results.benchmarks)
    if (b.variant == variant) return b;
  throw std::runtime_error("no planted/" + variant + " in the run");
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string implausible_warning(const BenchmarkResult& b) {
  for (const auto& w : b.warnings)
    if (w.rfind("implausible:", 0) == 0) return w;
  return "";
}

}  // namespace

// One test: the run of the planted kernels takes half a minute (its ceilings), and ctest runs
// each test in a process of its own.
TEST(Plausibility, EachPlantedKernelFailsTheRunWithAMessageOfItsOwn) {
  EXPECT_EQ(planted_run().code, 1);
  EXPECT_EQ(count_implausible(planted_run().results), 5);
  const std::string svg = read_text(kRunDir / "roofline.svg");
  EXPECT_NE(svg.find("IMPLAUSIBLE, not drawn (5)"), std::string::npos);  // listed under the legend,
  EXPECT_EQ(svg.find("data-name=\"planted/"), std::string::npos);        // and drawn as no point
  {
    SCOPED_TRACE("a kernel that moves a quarter of the bytes it declares");
    const BenchmarkResult& b = planted_result("overdeclared");
    ASSERT_TRUE(b.verified()) << b.error;  // its output is right: only its declared work is wrong
    ASSERT_TRUE(b.implausible()) << "placed at " << (b.placement ? b.placement->roof_pct : 0) << "%";
    EXPECT_NE(implausible_warning(b).find("work declared above what the kernel does"), std::string::npos)
        << implausible_warning(b);
    EXPECT_EQ(status_text(b).rfind("IMPLAUSIBLE", 0), 0u) << status_text(b);
  }
  {
    SCOPED_TRACE("the same claim, briefer than a DRAM ceiling's sample: brief DRAM roofs, and still refused");
    const BenchmarkResult& b = planted_result("overdeclared_brief");
    ASSERT_TRUE(b.verified()) << b.error;
    ASSERT_TRUE(b.implausible()) << "placed at " << (b.placement ? b.placement->roof_pct : 0) << "%";
    const std::string marker = "in samples as brief as the kernel's that came out above it (n:";
    int brief = 0;
    for (const auto& c : planted_run().results.ceilings) {
      const auto at = c.method.find(marker);
      if (c.name.rfind("dram_", 0) != 0 || at == std::string::npos) continue;  // the suite's DRAM roofs
      ++brief;
      // Its arrays: whole vectors, no smaller than twice the last-level cache, and smaller than its own.
      const std::int64_t n = std::stoll(c.method.substr(at + marker.size()));
      EXPECT_EQ(n % 16, 0) << c.method;
      const std::int64_t full = std::stoll(c.benchmark.substr(c.benchmark.rfind("/n:") + 3));
      EXPECT_LT(n, full) << c.method;
      EXPECT_GE(n, std::min<std::int64_t>(full, static_cast<std::int64_t>(2 * cpu_info().llc_bytes / sizeof(float))))
          << c.method;
    }
    // Unless the floor, twice all the last-level caches, is the ceilings' own size (a VM that reports
    // its host's 260 MiB L3, where memory keeps the arrays below that).
    bool can = false;
    for (const auto& v : registry())
      if (v.ceiling && v.backend == Backend::cpu && v.ceiling->name == "dram_copy")
        can = v.ceiling->repeat_min < param(v.quick_sizes.front(), "n");
    if (can) EXPECT_GT(brief, 0) << "no DRAM roof it came out above was measured in brief samples";
    else EXPECT_EQ(brief, 0) << "a brief DRAM pass below its floor";
  }
  {
    SCOPED_TRACE("a kernel that returns a cached output");
    const BenchmarkResult& b = planted_result("cached");
    EXPECT_FALSE(b.measurement);  // no number
    EXPECT_NE(b.error.find("verification after the timed samples failed, on fresh inputs"), std::string::npos)
        << b.error;
    ASSERT_TRUE(b.recheck);
    EXPECT_FALSE(b.recheck->ok);
    EXPECT_TRUE(b.verification.ok);  // the first check, on the inputs it had cached, passed
  }
  {
    SCOPED_TRACE("a kernel that works in prepare() and not in run()");
    const BenchmarkResult& b = planted_result("work_in_prepare");
    ASSERT_TRUE(b.verified()) << b.error;  // both checks pass: prepare() made the right output
    ASSERT_TRUE(b.recheck && b.recheck->ok);
    ASSERT_TRUE(b.implausible());
    EXPECT_NE(implausible_warning(b).find("more than 10x its roof"), std::string::npos) << implausible_warning(b);
  }
  {
    SCOPED_TRACE("a timing-only kernel that does nothing");
    const BenchmarkResult& b = planted_result("nothing");
    ASSERT_TRUE(b.implausible());
    EXPECT_NE(implausible_warning(b).find("nothing checked its output"), std::string::npos) << implausible_warning(b);
    EXPECT_FALSE(b.recheck);  // nothing to check it against
  }
  {
    SCOPED_TRACE("a copy placed against a ceiling that idles seven eighths of its time");
    const BenchmarkResult& b = planted_result("beats_weak");
    ASSERT_TRUE(b.implausible()) << "placed at " << (b.placement ? b.placement->roof_pct : 0) << "%";
    EXPECT_NE(implausible_warning(b).find("a ceiling too weak for the kernels of its shape is the likely cause"),
              std::string::npos)
        << implausible_warning(b);
    bool flagged = false;
    for (const auto& c : planted_run().results.ceilings)
      if (c.name == "planted_weak_copy") {
        for (const auto& w : c.warnings) flagged |= w.find("not an upper bound") != std::string::npos;
        EXPECT_TRUE(c.value_again) << "a roof a kernel came out above is measured once more";
      }
    EXPECT_TRUE(flagged) << "the weak ceiling carries no warning";
  }
  {
    SCOPED_TRACE("a brief copy above a roof measured in long throttled samples, below it measured in brief ones");
    const BenchmarkResult& b = planted_result("brief_copy");
    ASSERT_TRUE(b.verified()) << b.error;
    ASSERT_TRUE(b.placement);
    EXPECT_FALSE(b.implausible()) << "placed at " << b.placement->roof_pct << "%: " << implausible_warning(b);
    bool found = false;
    for (const auto& c : planted_run().results.ceilings) {
      if (c.name != "planted_windowed_copy") continue;
      found = true;
      ASSERT_TRUE(c.value_again) << "the kernel came out above it: it is measured once more";
      ASSERT_TRUE(c.value_brief && c.benchmark_brief) << c.method;  // and in samples as brief as its own
      EXPECT_EQ(*c.benchmark_brief, "ceiling/planted_windowed_copy/fp32/n:65536/passes:1");
      EXPECT_GT(*c.value_brief, 8 * std::max({c.value_start, c.value_end.value_or(0), *c.value_again})) << c.method;
      EXPECT_DOUBLE_EQ(c.value, *c.value_brief);
      EXPECT_NE(c.method.find("in samples as brief as the kernel's that came out above it (n:65536/passes:1"),
                std::string::npos)
          << c.method;
      bool said = false;
      for (const auto& w : c.warnings) said |= w.find("measured once more in samples as brief as") != std::string::npos;
      EXPECT_TRUE(said) << "no warning that brief samples ran faster";
    }
    EXPECT_TRUE(found) << "no planted_windowed_copy ceiling in the run";
    // The weak ceiling has no repeat count: measured once more at its own size alone.
    for (const auto& c : planted_run().results.ceilings)
      if (c.name == "planted_weak_copy") EXPECT_FALSE(c.benchmark_brief) << *c.benchmark_brief;
  }
  {
    SCOPED_TRACE("report of the file: the reports are written, and it exits 1");
    const fs::path again = roofbench::testing::scratch_path("rb_planted_report");
    fs::remove_all(again);
    EXPECT_EQ(roofbench::testing::run_main({"report", (kRunDir / "results.json").string(), "--out", again.string()}),
              1);
    EXPECT_TRUE(fs::exists(again / "report.html"));
  }
}
