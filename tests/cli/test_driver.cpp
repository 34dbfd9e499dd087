// The driver in-process, with one extra variant whose output is wrong: the run must still write
// complete results, give the broken kernel an error and no number, and exit 1.
#include <gtest/gtest.h>

#include <filesystem>

#include "roofbench/main.h"
#include "bench/registry.h"
#include "bench/results.h"
#include "roofbench/host_buffer.h"
#include "roofbench/verify.h"
#include "tests/testing.h"

#include <unistd.h>

using namespace roofbench;
namespace fs = std::filesystem;

namespace {

class OffByOne final : public Instance {
 public:
  explicit OffByOne(std::int64_t n) : y_(static_cast<std::size_t>(n)) {}
  void prepare(std::uint64_t) override { std::fill(y_.begin(), y_.end(), poison_f32()); }
  void run() override {
    for (std::size_t i = 0; i < y_.size(); ++i) y_[i] = static_cast<float>(i) + (i == 5 ? 1.0f : 0.0f);
  }
  Verification verify() override {
    Checker chk(tolerance_for(Precision::fp32), "every element");
    for (std::size_t i = 0; i < y_.size(); ++i) chk.check(y_[i], static_cast<double>(i), static_cast<std::int64_t>(i));
    return chk.finish();
  }

 private:
  std::vector<float> y_;
};

Variant broken() {
  Variant v;
  v.family = "toy";
  v.variant = "broken";
  v.reference = "y[i] = i";
  v.backend = Backend::cpu;
  v.sizes = v.quick_sizes = v.test_sizes = vector_sizes({64});
  v.work = Work().write<float>("y[i] = i", Count::param("n")).flops(Count::param("n"), "one per element");
  v.make = [](const Params& p) { return std::make_unique<OffByOne>(param(p, "n")); };
  return v;
}
ROOFBENCH_REGISTER(broken());

// A variant whose buffer is twice the machine's memory: refused before allocating, never an
// OOM kill.
class TooBig final : public Instance {
 public:
  explicit TooBig(std::int64_t n) : y_(static_cast<std::size_t>(n)) {}
  void prepare(std::uint64_t) override {}
  void run() override {}
  Verification verify() override { return Checker(tolerance_for(Precision::fp32), "nothing").finish(); }

 private:
  HostBuffer<float> y_;
};

Variant too_big() {
  Variant v;
  v.family = "toy";
  v.variant = "too_big";
  v.reference = "nothing";
  v.backend = Backend::cpu;
  const std::int64_t twice_memory = 2 * static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  v.sizes = v.quick_sizes = v.test_sizes = vector_sizes({twice_memory / 4});
  v.work = Work().write<float>("y", Count::param("n"));
  v.make = [](const Params& p) { return std::make_unique<TooBig>(param(p, "n")); };
  return v;
}
ROOFBENCH_REGISTER(too_big());

}  // namespace

TEST(Driver, AFailedKernelGetsNoNumberAndTheRunExitsOne) {
  const fs::path d = roofbench::testing::scratch_path("rb_driver_broken");
  fs::remove_all(d);
  // (--warm: what is tested is the failure's path, and a flush of a 260 MiB L3 costs 0.2 s a sample.)
  EXPECT_EQ(roofbench::testing::run_main({"run", "--device", "cpu", "--quick", "--warm", "--filter", "toy/broken|stream/saxpy",
                                          "--skip", roofbench::testing::kFewCeilings, "--out", d.string()}),
            1);
  const Results r = load_results((d / "results.json").string());
  ASSERT_EQ(r.benchmarks.size(), 2u);
  const BenchmarkResult* bad = nullptr;
  const BenchmarkResult* good = nullptr;
  for (const auto& b : r.benchmarks) (b.family == "toy" ? bad : good) = &b;
  ASSERT_TRUE(bad && good);
  EXPECT_FALSE(bad->verified());
  EXPECT_FALSE(bad->measurement);
  EXPECT_FALSE(bad->placement);
  EXPECT_NE(bad->error.find("[5]: got 6, expected 5"), std::string::npos) << bad->error;
  EXPECT_TRUE(good->verified());  // the others still carry their numbers
  EXPECT_TRUE(good->placement);
  for (const char* f : {"gbench.json", "roofline.svg", "report.html", "summary.md"}) EXPECT_TRUE(fs::exists(d / f));
}

TEST(Driver, ABufferLargerThanMemoryIsRefusedBeforeAllocatingAndTheRunGoesOn) {
  const fs::path d = roofbench::testing::scratch_path("rb_driver_too_big");
  fs::remove_all(d);
  // (No ceiling, warm: only that the run goes on past the refusal is tested.)
  EXPECT_EQ(roofbench::testing::run_main({"run", "--device", "cpu", "--quick", "--warm", "--filter", "toy/too_big|stream/saxpy",
                                          "--skip", "^ceiling/", "--out", d.string()}),
            1);
  const Results r = load_results((d / "results.json").string());
  ASSERT_EQ(r.benchmarks.size(), 2u);
  for (const auto& b : r.benchmarks) {
    if (b.family == "toy") {
      EXPECT_FALSE(b.measurement);
      EXPECT_NE(b.error.find("does not fit"), std::string::npos) << b.error;
      EXPECT_NE(b.error.find("refused before allocating"), std::string::npos) << b.error;
    } else {
      EXPECT_TRUE(b.verified());  // the run went on
      EXPECT_TRUE(b.measurement);
    }
  }
}
