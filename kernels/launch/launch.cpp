// The launch lesson on the CPU (kernels/launch/launch.h): a chain of tiny steps as one OpenMP
// parallel region per step (a fork and a join each: the CPU's launch), as one region, or fused
// into one loop. Run only this: roofbench run --device cpu --filter 'launch/'
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "roofbench/host_buffer.h"
#include "kernels/launch/launch.h"

namespace roofbench::launch {
namespace {

// ---------------------------------------------------------------- kernels
typedef float V __attribute__((vector_size(16)));  // GCC's vector extension: SSE
constexpr int kVecs = 8;                              // eight accumulators hide the add's latency
constexpr std::int64_t kBlock = 4 * kVecs;

class CpuChain final : public Instance {
 public:
  CpuChain(const Params& p, Form f) : n_(chain_n(p)), ops_(chain_ops(p)), form_(f), x_(n_), y_(n_) {}

  void prepare(std::uint64_t seed) override {
    fill_chain_input(x_.data(), n_, seed);
    for (std::int64_t i = 0; i < n_; ++i) y_.data()[i] = poison_f32();
  }

  void run() override {
    const float* x = x_.data();
    float* y = y_.data();  // not __restrict__: after step 0, each step reads y and writes it
    const std::int64_t n = n_, ops = ops_;
    switch (form_) {
      case Form::per_op:
        // One parallel region per step, as `ops` library calls would each fork and join.
        for (std::int64_t k = 0; k < ops; ++k) {
          const float c = step_constant(k);
          const float* src = k == 0 ? x : y;
#pragma omp parallel for simd schedule(static)
          for (std::int64_t i = 0; i < n; ++i) y[i] = src[i] + c;
        }
        break;
      case Form::batched:
        // One region; each thread runs every step over the same elements of its own, so no step
        // needs a barrier before the next. The range is the thread's by construction: OpenMP
        // promises two static `for` loops the same split only when neither is a `for simd`.
#pragma omp parallel
        {
          const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
          const std::int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
          for (std::int64_t k = 0; k < ops; ++k) {
            const float c = step_constant(k);
            const float* src = k == 0 ? x : y;
#pragma omp simd
            for (std::int64_t i = lo; i < hi; ++i) y[i] = src[i] + c;
          }
        }
        break;
      case Form::fused:
        // Blocks of kBlock elements stay in registers (eight 4-float vectors, SSE, which every
        // x86-64 has) through every step, then go out once.
#pragma omp parallel for schedule(static)
        for (std::int64_t b = 0; b < n; b += kBlock) {
          const std::int64_t len = std::min(kBlock, n - b);
          float in[kBlock] = {};
          std::copy(x + b, x + b + len, in);
          V acc[kVecs];
#pragma GCC unroll 8
          for (int j = 0; j < kVecs; ++j) std::memcpy(&acc[j], in + 4 * j, sizeof(V));
          for (std::int64_t k = 0; k < ops; ++k) {
            const float c = step_constant(k);
            const V cv = {c, c, c, c};
#pragma GCC unroll 8
            for (int j = 0; j < kVecs; ++j) acc[j] += cv;
          }
#pragma GCC unroll 8
          for (int j = 0; j < kVecs; ++j) std::memcpy(in + 4 * j, &acc[j], sizeof(V));
          std::copy(in, in + len, y + b);
        }
        break;
    }
  }

  Verification verify() override { return check_chain(x_.data(), y_.data(), n_, ops_); }

 private:
  std::int64_t n_, ops_;
  Form form_;
  HostBuffer<float> x_, y_;
};

// ---------------------------------------------------------------- registration
Variant make(Form f) {
  Variant v = launch_variant(f, Backend::cpu);
  v.summary = f == Form::per_op    ? "one OpenMP parallel region per step: a fork and a join each"
              : f == Form::batched ? "every step inside one parallel region (static schedule, no barrier between steps)"
                                   : "one loop doing every step on 32 elements at a time held in registers";
  v.make = [f](const Params& p) { return std::make_unique<CpuChain>(p, f); };
  return v;
}
ROOFBENCH_REGISTER(make(Form::per_op));
ROOFBENCH_REGISTER(make(Form::batched));
ROOFBENCH_REGISTER(make(Form::fused));

}  // namespace
}  // namespace roofbench::launch
