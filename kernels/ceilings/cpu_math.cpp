// CPU transcendental ceilings: calls per second of each math function the CPU elementwise
// families call (sin, cos, sincos, exp, tanh: SLEEF u10 at this CPU's widest ISA, the very loops
// of kernels/elementwise/vmath.h), on every core, over a buffer each thread keeps in L1, so that
// no byte limits them. The model's third roof (roofline/model.h): a kernel that declares n sin
// calls cannot take less than n / this rate. Run only these: roofbench ceilings --device cpu
#include <fmt/format.h>
#include <omp.h>

#include <cmath>
#include <memory>
#include <vector>

#include "bench/cpu_info.h"
#include "bench/registry.h"
#include "kernels/elementwise/vmath.h"
#include "roofbench/random.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

enum class Fn { sin, cos, sincos, exp, tanh };

struct FnInfo {
  const char* name;
  double lo, hi;  // the inputs: the range the elementwise families give this function
};
FnInfo info(Fn f) {
  switch (f) {
    case Fn::sin: return {"sin", -4, 4};
    case Fn::cos: return {"cos", -4, 4};
    case Fn::sincos: return {"sincos", -4, 4};
    case Fn::exp: return {"exp", -4, 4};
    case Fn::tanh: return {"tanh", -3, 3};
  }
  return {"?", 0, 0};
}

// Per thread: n inputs and their results (two for sincos), reps passes over them per run.
class CpuMath final : public Instance {
 public:
  CpuMath(const Params& p, Fn f)
      : f_(f),
        threads_(static_cast<int>(param(p, "threads"))),
        n_(param(p, "n")),
        reps_(param(p, "reps")),
        x_(static_cast<std::size_t>(threads_ * n_)),
        y_(x_.size()),
        c_(f == Fn::sincos ? x_.size() : 0) {}

  void prepare(std::uint64_t seed) override {
    fill_uniform(x_.data(), static_cast<std::int64_t>(x_.size()), seed, info(f_).lo, info(f_).hi);
    std::fill(y_.begin(), y_.end(), poison_f32());
    std::fill(c_.begin(), c_.end(), poison_f32());
  }

  void run() override {
    const vmath::Ops& vm = vmath::ops();
#pragma omp parallel num_threads(threads_)
    {
      const std::size_t at = static_cast<std::size_t>(omp_get_thread_num() * n_);
      const float* x = x_.data() + at;
      float* y = y_.data() + at;
      for (std::int64_t r = 0; r < reps_; ++r) switch (f_) {
          case Fn::sin: vm.sin(x, y, n_); break;
          case Fn::cos: vm.cos(x, y, n_); break;
          case Fn::sincos: vm.sincos(x, y, c_.data() + at, n_); break;
          case Fn::exp: vm.exp(x, y, n_); break;
          case Fn::tanh: vm.tanh(x, y, n_); break;
        }
    }
  }

  Verification verify() override {
    // u10: within 1 ULP of the exact value; the tolerance allows 4 (FP32 roundoff × 4 × growth 1).
    return check_all(tolerance_for(Precision::fp32), std::string("every result vs ") + info(f_).name + " in FP64",
                     static_cast<std::int64_t>(x_.size()), [&](Checker& chk, std::int64_t i) {
                       const double x = x_[static_cast<std::size_t>(i)];
                       const float y = y_[static_cast<std::size_t>(i)];
                       switch (f_) {
                         case Fn::sin: chk.check(y, std::sin(x), i); break;
                         case Fn::cos: chk.check(y, std::cos(x), i); break;
                         case Fn::sincos:
                           chk.check(y, std::sin(x), i);
                           chk.check(c_[static_cast<std::size_t>(i)], std::cos(x), i);
                           break;
                         case Fn::exp: chk.check(y, std::exp(x), i); break;
                         case Fn::tanh: chk.check(y, std::tanh(x), i); break;
                       }
                     });
  }

 private:
  Fn f_;
  int threads_;
  std::int64_t n_, reps_;
  std::vector<float> x_, y_, c_;
};

// 2048 floats in and out per thread (24 KiB with sincos's second output): inside every L1 this
// suite has met (32-48 KiB), so the loop reads and writes only L1.
constexpr std::int64_t kPerThread = 2048;

Variant make(Fn f) {
  const CpuInfo& cpu = cpu_info();
  const char* name = info(f).name;
  auto params = [&](std::int64_t n, std::int64_t reps) {
    return Params{{"threads", cpu.threads}, {"n", n}, {"reps", reps}};
  };
  Variant v;
  v.family = "ceiling";
  v.variant = fmt::format("math_{}", name);
  v.precision = Precision::fp32;
  v.backend = Backend::cpu;
  v.level = Level::l1;
  v.reference = fmt::format("{} in FP64 (std::{}) on every result", name, f == Fn::sincos ? "sin and std::cos" : name);
  v.summary = fmt::format("SLEEF u10 {}f on every core ({}), over a buffer each thread keeps in L1", name,
                          vmath::ops().isa);
  const Count calls = Count::param("threads") * Count::param("n") * Count::param("reps");
  const Count elems = Count::param("threads") * Count::param("n");
  Work w;
  w.read<float>("x", elems, Count::param("reps"))
      .write<float>(f == Fn::sincos ? "sin x and cos x" : "y", f == Fn::sincos ? 2 * elems : elems,
                    Count::param("reps"))
      .transcendentals(name, calls);
  v.work = w;
  // About 10 ms a run at 1 ns a call per core (SLEEF u10 sinf, AVX-512): reps × 2048 calls per thread.
  v.sizes = {params(kPerThread, 4000)};
  v.quick_sizes = {params(kPerThread, 1000)};
  v.test_sizes = {params(1, 1), params(kPerThread + 5, 2)};  // a lone tail, and whole vectors with a tail
  v.ceiling = CeilingSpec{v.variant, CeilingKind::transcendental, Level::l1,
                          fmt::format("OpenMP on all cores, SLEEF u10 {}f ({}) as the elementwise families call it, "
                                      "{} floats per thread in L1",
                                      name, vmath::ops().isa, kPerThread),
                          name};
  v.make = [f](const Params& p) { return std::make_unique<CpuMath>(p, f); };
  return v;
}
ROOFBENCH_REGISTER(make(Fn::sin));
ROOFBENCH_REGISTER(make(Fn::cos));
ROOFBENCH_REGISTER(make(Fn::sincos));
ROOFBENCH_REGISTER(make(Fn::exp));
ROOFBENCH_REGISTER(make(Fn::tanh));

}  // namespace
}  // namespace roofbench::ceilings
