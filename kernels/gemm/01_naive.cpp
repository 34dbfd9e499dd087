// Naive CPU GEMM: one dot product per element of C, rows of C split over the cores.
// Run only this: roofbench run --device cpu --filter 'gemm/naive'
#include "kernels/gemm/cpu_gemm.h"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// The inner loop walks B down a column: a stride of N floats, so every step touches a new cache
// line and nothing is reused from registers. This is the rung the others are measured against.
class NaiveGemm final : public CpuGemm {
 public:
  using CpuGemm::CpuGemm;

 private:
  void compute(const float* a, const float* b, float* c) override {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        float acc = 0;
        for (std::int64_t k = 0; k < K; ++k) acc += a[i * K + k] * b[k * N + j];
        c[i * N + j] = acc;
      }
  }
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = cpu_gemm_variant();
  v.variant = "naive";
  v.summary = "one dot product per element of C; B walked down its columns";
  v.sizes = square_gemm_sizes({256, 512, 1024});
  v.quick_sizes = square_gemm_sizes({256});
  v.make = [](const Params& p) { return std::make_unique<NaiveGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
