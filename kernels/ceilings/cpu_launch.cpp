// The CPU's launch ceiling: OpenMP parallel regions per second, each as the launch lesson's per_op
// form opens them (`#pragma omp parallel for schedule(static)`) around nearly nothing: one counter
// per thread. Its fork and join are all it costs; a form cut into many tiny regions can go no
// faster than its regions at this rate (kernels/launch/launch.h). Run only this:
// roofbench ceilings --device cpu --filter launch
#include <fmt/format.h>
#include <omp.h>

#include <memory>
#include <vector>

#include "roofbench/cpu.h"
#include "roofbench/variant.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

class CpuRegions final : public Instance {
 public:
  explicit CpuRegions(const Params& p)
      : threads_(param(p, "threads")), reps_(param(p, "reps")), counts_(static_cast<std::size_t>(threads_ * 16)) {}

  void prepare(std::uint64_t) override { std::fill(counts_.begin(), counts_.end(), 0); }

  void run() override {
    long long* c = counts_.data();
    const std::int64_t threads = threads_;
    for (std::int64_t r = 0; r < reps_; ++r) {
      // One cache line per thread. Counted only where thread t runs iteration t, as it does when the
      // region has all `threads` threads (schedule(static, 1) deals iteration t to thread t): a
      // region that forked fewer (dynamic teams, a nested region run serially) fails the check.
#pragma omp parallel for schedule(static, 1)
      for (std::int64_t t = 0; t < threads; ++t) c[t * 16] += omp_get_thread_num() == t;
    }
  }

  Verification verify() override {
    return check_all(
        tolerance_for(Precision::fp64), "every thread's counter, raised by that thread, vs the regions opened",
        threads_, [&](Checker& chk, std::int64_t t) {
          chk.check(static_cast<double>(counts_[static_cast<std::size_t>(t * 16)]), static_cast<double>(reps_), t);
        });
  }

 private:
  std::int64_t threads_, reps_;
  std::vector<long long> counts_;
};

Variant make() {
  const CpuInfo& cpu = cpu_info();
  auto params = [&](std::int64_t reps) { return Params{{"threads", cpu.threads}, {"reps", reps}}; };
  Variant v;
  v.family = "ceiling";
  v.variant = "launch_omp_region";
  v.precision = Precision::fp64;  // the counters' precision in the check; the ceiling has none
  v.backend = Backend::cpu;
  v.level = Level::l1;
  v.warm = true;  // timed as the launch lesson it is the roof of (Variant::warm)
  v.reference = "each thread's counter equals the regions opened";
  v.summary = fmt::format("OpenMP parallel regions back to back on all {} threads, a counter each", cpu.threads);
  const Count reps = Count::param("reps");
  v.work = Work()
               .write("a counter per thread, once per region", Count::param("threads"), sizeof(long long), reps)
               .launches("omp_region", reps);
  v.sizes = {params(2000)};
  v.quick_sizes = {params(100)};  // beside other work (a shared CI machine) a region can wait a time slice
  v.test_sizes = {params(1), params(7)};
  v.ceiling = CeilingSpec{v.variant, CeilingKind::launch, Level::l1,
                          fmt::format("`#pragma omp parallel for schedule(static)` regions back to back, one counter "
                                      "increment per thread in each ({} threads)",
                                      cpu.threads),
                          "omp_region"};
  v.ceiling->per_process = true;  // the rate of this process's OpenMP pool, as a run's kernels use it
  v.ceiling->repeat_param = "reps";
  v.make = [](const Params& p) { return std::make_unique<CpuRegions>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::ceilings
