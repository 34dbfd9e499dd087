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

#include "roofbench/cpu.h"
#include "roofbench/variant.h"
#include "kernels/elementwise/vmath.h"
#include "roofbench/host_buffer.h"
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
//
// Where the arrays sit matters. A load whose address matches an earlier store's in its low 12
// bits waits for that store (4K aliasing): with x and y a multiple of 4 KiB plus a few bytes
// apart, as two heap arrays of 2048 floats fall, every vector of x waited on the y just stored,
// and SLEEF's sinf ran 5-7% slower here than with the arrays apart (more on other cores). A
// kernel streaming 2^26 elements never meets it, so such a roof sat below the kernels it bounds.
// Each thread's arrays are therefore in a page-aligned slab of its own, kArrayGap bytes past a
// 4 KiB multiple from each other: no load of the next vectors meets a store just made.
class CpuMath final : public Instance {
 public:
  CpuMath(const Params& p, Fn f)
      : f_(f),
        threads_(static_cast<int>(param(p, "threads"))),
        n_(param(p, "n")),
        reps_(param(p, "reps")),
        array_floats_(static_cast<std::size_t>((n_ * 4 + 4095) / 4096 * 4096 + kArrayGap) / sizeof(float)),
        slab_floats_((3 * array_floats_ * sizeof(float) + 4095) / 4096 * 4096 / sizeof(float)),
        slabs_(slab_floats_ * static_cast<std::size_t>(threads_)) {}

  void prepare(std::uint64_t seed) override {
    slabs_.poison();  // y and c: NaN until computed
    for (int t = 0; t < threads_; ++t)
      fill_uniform(x(t), n_, seed + static_cast<std::uint64_t>(t), info(f_).lo, info(f_).hi);
  }

  void run() override {
    const vmath::Ops& vm = vmath::ops();
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num();
      const float* in = x(t);
      float* out = y(t);
      for (std::int64_t r = 0; r < reps_; ++r) switch (f_) {
          case Fn::sin:
            vm.sin(in, out, n_);
            break;
          case Fn::cos:
            vm.cos(in, out, n_);
            break;
          case Fn::sincos:
            vm.sincos(in, out, c(t), n_);
            break;
          case Fn::exp:
            vm.exp(in, out, n_);
            break;
          case Fn::tanh:
            vm.tanh(in, out, n_);
            break;
        }
    }
  }

  Verification verify() override {
    // u10: within 1 ULP of the exact value; the tolerance allows 4 (FP32 roundoff × 4 × growth 1).
    return check_all(tolerance_for(Precision::fp32), std::string("every result vs ") + info(f_).name + " in FP64",
                     threads_ * n_, [&](Checker& chk, std::int64_t k) {
                       const int t = static_cast<int>(k / n_);
                       const std::int64_t i = k % n_;
                       const double xi = x(t)[i];
                       const float yi = y(t)[i];
                       switch (f_) {
                         case Fn::sin:
                           chk.check(yi, std::sin(xi), k);
                           break;
                         case Fn::cos:
                           chk.check(yi, std::cos(xi), k);
                           break;
                         case Fn::sincos:
                           chk.check(yi, std::sin(xi), k);
                           chk.check(c(t)[i], std::cos(xi), k);
                           break;
                         case Fn::exp:
                           chk.check(yi, std::exp(xi), k);
                           break;
                         case Fn::tanh:
                           chk.check(yi, std::tanh(xi), k);
                           break;
                       }
                     });
  }

 private:
  // 1 KiB and a line: loads and stores of the same vector index land 1088 bytes apart (x to y, y
  // to c) or 2176 (x to c) in their low 12 bits, far from one another for 16 vectors either way.
  static constexpr std::size_t kArrayGap = 1024 + 64;
  float* slab(int t) {
    return slabs_.data() + static_cast<std::size_t>(t) * slab_floats_;
  }
  float* x(int t) {
    return slab(t);
  }
  float* y(int t) {
    return slab(t) + array_floats_;
  }
  float* c(int t) {
    return slab(t) + 2 * array_floats_;
  }

  Fn f_;
  int threads_;
  std::int64_t n_, reps_;
  std::size_t array_floats_, slab_floats_;
  HostBuffer<float> slabs_;
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
  v.ceiling->repeat_param = "reps";
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
