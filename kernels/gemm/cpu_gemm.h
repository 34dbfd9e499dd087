#pragma once
// The CPU GEMM instance every CPU variant shares: FP32 row-major A, B, C in host memory.
// A variant only supplies compute(); inputs, poisoning and the check live here once.
#include <memory>

#include "roofbench/host_buffer.h"
#include "roofbench/random.h"
#include "roofbench/variant.h"
#include "roofbench/verify.h"
#include "kernels/gemm/reference.h"

namespace roofbench::gemm {

class CpuGemm : public Instance {
 public:
  explicit CpuGemm(const Params& p)
      : M(param(p, "M")), N(param(p, "N")), K(param(p, "K")), A(M * K), B(K * N), C(M * N) {}

  void prepare(std::uint64_t seed) override {
    seed_ = seed;
    fill_uniform(A.data(), M * K, seed);
    fill_uniform(B.data(), K * N, seed + 1);
    for (std::int64_t i = 0; i < M * N; ++i) C[i] = poison_f32();
  }
  void run() override { compute(A.data(), B.data(), C.data()); }
  Verification verify() override { return check(A.data(), B.data(), C.data(), M, N, K, seed_); }

 protected:
  virtual void compute(const float* a, const float* b, float* c) = 0;
  const std::int64_t M, N, K;

 private:
  HostBuffer<float> A, B, C;
  std::uint64_t seed_ = 0;
};

// The declarations every FP32 CPU GEMM variant shares; the variant fills in the rest.
inline Variant cpu_gemm_variant() {
  return variant_for(Precision::fp32, Backend::cpu, Unit::simd);
}

}  // namespace roofbench::gemm
