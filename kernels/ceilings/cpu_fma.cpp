// CPU FMA peak, FP32 and FP64: every core runs independent chains of vector fused multiply-adds
// in registers, with no memory traffic. Run only these: roofbench ceilings --device cpu
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <fmt/format.h>
#include <omp.h>

#include "roofbench/cpu.h"
#include "roofbench/variant.h"
#include "kernels/ceilings/fma_chain.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- reference
// Each chain iterates x ← x·a + b with a = 1 + 2^-p, the smallest value above 1 of its type, and
// b = 2^-p: every step moves x by a unit in its last place or more, so the exact check of the
// chains' ends counts every step (kernels/ceilings/fma_chain.h; the old contraction, a < 1, had
// stopped moving in FP32 after 3.1 million of the run's 4.2 million steps). A fused multiply-add
// rounds once, so the vector result equals std::fma's bit for bit.
template <class T>
constexpr FmaChain kChain = cpu_fma_chain(precision_of<T>());

// The chain's end after `iters` steps, and how many of them moved it.
template <class T>
FmaChain::End chain_reference(T x0, std::int64_t iters) {
  return kChain<T>.run(static_cast<double>(x0), iters);
}

// ---------------------------------------------------------------- kernels
// ACC independent vector accumulators per thread cover the FMA latency (4 cycles) times the
// number of FMA pipes (2) with room to spare; ACC is sized to the register file of each ISA.
#if defined(__x86_64__)
#define ROOFBENCH_FMA_KERNEL(NAME, TARGET, T, VEC, ACC, SET1, FMADD, STORE, LANES)            \
  __attribute__((target(TARGET))) void NAME(T* out, std::int64_t iters) {                     \
    VEC acc[ACC];                                                                             \
    for (int r = 0; r < ACC; ++r) acc[r] = SET1(cpu_fma_chain_start<T>(r));                   \
    const VEC va = SET1(static_cast<T>(kChain<T>.a)), vb = SET1(static_cast<T>(kChain<T>.b)); \
    for (std::int64_t i = 0; i < iters; ++i) {                                                \
      _Pragma("GCC unroll 16") for (int r = 0; r < ACC; ++r) acc[r] = FMADD(acc[r], va, vb);  \
    }                                                                                         \
    for (int r = 0; r < ACC; ++r) STORE(out + r * LANES, acc[r]);                             \
  }
ROOFBENCH_FMA_KERNEL(fma_f32_avx512, "avx512f", float, __m512, 12, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps,
                     16)
ROOFBENCH_FMA_KERNEL(fma_f64_avx512, "avx512f", double, __m512d, 12, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd,
                     8)
ROOFBENCH_FMA_KERNEL(fma_f32_avx2, "avx2,fma", float, __m256, 10, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps, 8)
ROOFBENCH_FMA_KERNEL(fma_f64_avx2, "avx2,fma", double, __m256d, 10, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd,
                     4)
#undef ROOFBENCH_FMA_KERNEL
#endif

// Where no vector kernel fits: eight chains side by side in T, not the reference's model run again
// (its check could not fail).
template <class T>
void fma_scalar(T* out, std::int64_t iters) {
  T acc[8];
  for (int r = 0; r < 8; ++r) acc[r] = cpu_fma_chain_start<T>(r);
  const T a = static_cast<T>(kChain<T>.a), b = static_cast<T>(kChain<T>.b);
  for (std::int64_t i = 0; i < iters; ++i)
    for (int r = 0; r < 8; ++r) acc[r] = std::fma(acc[r], a, b);
  for (int r = 0; r < 8; ++r) out[r] = acc[r];
}

// Values (chains x lanes) one thread carries for this CPU's widest FMA kernel.
struct Shape {
  int chains, lanes;
};
template <class T>
Shape shape_for(const std::string& isa) {
  const int bytes = static_cast<int>(sizeof(T));
  if (isa == "avx512f") return {12, 64 / bytes};
  if (isa == "avx2+fma") return {10, 32 / bytes};
  return {8, 1};
}

template <class T>
class CpuFma final : public Instance {
 public:
  explicit CpuFma(const Params& p)
      : threads_(static_cast<int>(param(p, "threads"))),
        values_(static_cast<int>(param(p, "values"))),
        iters_(param(p, "iters")),
        shape_(shape_for<T>(cpu_info().isa)),
        out_(static_cast<std::size_t>(threads_) * values_) {
    if (shape_.chains * shape_.lanes != values_)
      throw InputError(fmt::format("fma ceiling: {} values per thread do not match this CPU's {} kernel ({})", values_,
                                   cpu_info().isa, shape_.chains * shape_.lanes));
  }

  void prepare(std::uint64_t) override {
    for (auto& v : out_) v = std::numeric_limits<T>::quiet_NaN();
  }

  void run() override {
    const std::string& isa = cpu_info().isa;
#pragma omp parallel num_threads(threads_)
    {
      T* out = out_.data() + static_cast<std::size_t>(omp_get_thread_num()) * values_;
#if defined(__x86_64__)
      if constexpr (std::is_same_v<T, float>) {
        if (isa == "avx512f")
          fma_f32_avx512(out, iters_);
        else if (isa == "avx2+fma")
          fma_f32_avx2(out, iters_);
        else
          fma_scalar(out, iters_);
      } else {
        if (isa == "avx512f")
          fma_f64_avx512(out, iters_);
        else if (isa == "avx2+fma")
          fma_f64_avx2(out, iters_);
        else
          fma_scalar(out, iters_);
      }
#else
      fma_scalar(out, iters_);
#endif
    }
  }

  Verification verify() override {
    Checker chk(Tolerance{0, 0}, "every lane of every chain vs scalar std::fma, exact, every step moving");
    std::vector<double> ref(static_cast<std::size_t>(shape_.chains));
    for (int r = 0; r < shape_.chains; ++r) {
      const FmaChain::End e = chain_reference(cpu_fma_chain_start<T>(r), iters_);
      if (e.moved < iters_) {
        Verification v;
        v.detail = fmt::format(
            "{}_fma: chain {} stops moving after {} of its {} steps, so the check could not tell "
            "a kernel that ran them all from one that stopped there; choose fewer iters",
            to_string(precision_of<T>()), r, e.moved, iters_);
        return v;
      }
      ref[static_cast<std::size_t>(r)] = e.x;
    }
    for (int t = 0; t < threads_; ++t)
      for (int r = 0; r < shape_.chains; ++r)
        for (int l = 0; l < shape_.lanes; ++l) {
          const std::size_t i = static_cast<std::size_t>(t) * values_ + static_cast<std::size_t>(r) * shape_.lanes + l;
          chk.check(static_cast<double>(out_[i]), ref[static_cast<std::size_t>(r)], 0,
                    [t, r, l] { return fmt::format("thread {} chain {} lane {}", t, r, l); });
        }
    return chk.finish();
  }

 private:
  int threads_, values_;
  std::int64_t iters_;
  Shape shape_;
  std::vector<T> out_;
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  const CpuInfo& cpu = cpu_info();
  const Shape s = shape_for<T>(cpu.isa);
  auto params = [&](std::int64_t iters) {
    return Params{{"threads", cpu.threads}, {"values", s.chains * s.lanes}, {"iters", iters}};
  };
  Variant v;
  v.family = "ceiling";
  v.precision = std::is_same_v<T, float> ? Precision::fp32 : Precision::fp64;
  v.variant = to_string(v.precision) + "_fma";
  v.reference = "scalar std::fma on every lane of every chain, exact, each step moving every chain";
  v.backend = Backend::cpu;
  v.summary = "independent vector FMA chains in registers on every core (" + cpu.isa + ")";
  // Each value is one chain lane: iters fused multiply-adds; no memory traffic beyond writing
  // the results once.
  const Count values = Count::param("threads") * Count::param("values");
  v.work = Work()
               .write("each chain's value, once", values, v.precision)
               .flops(2 * values * Count::param("iters"), "an FMA is 2");
  v.sizes = {params(1 << 22)};
  v.quick_sizes = {params(1 << 21)};
  v.test_sizes = {params(1), params(1000)};
  v.ceiling = CeilingSpec{v.variant, CeilingKind::compute, Level::dram,
                          "OpenMP on all cores, " + cpu.isa + " FMA intrinsics, " + std::to_string(s.chains) +
                              " independent accumulators per thread"};
  v.ceiling->sustained = std::is_same_v<T, float>;
  v.ceiling->repeat_param = "iters";
  v.make = [](const Params& p) { return std::make_unique<CpuFma<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<float>());
ROOFBENCH_REGISTER(make<double>());

}  // namespace
}  // namespace roofbench::ceilings
