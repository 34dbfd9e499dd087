#pragma once
// The CUDA GEMM instance every GPU FP32 variant shares: inputs made on the host (kept for the
// FP64 check), copied once; C poisoned before the verified run. A variant supplies launch().
#include <memory>

#include "bench/cuda_check.h"
#include "bench/random.h"
#include "bench/registry.h"
#include "kernels/gemm/reference.h"

namespace roofbench::gemm {

class GpuGemm : public Instance {
 public:
  explicit GpuGemm(const Params& p)
      : M(param(p, "M")), N(param(p, "N")), K(param(p, "K")), dA(M * K), dB(K * N), dC(M * N) {}

  void prepare(std::uint64_t seed) override {
    seed_ = seed;
    hA = uniform_vector<float>(M * K, seed);
    hB = uniform_vector<float>(K * N, seed + 1);
    dA.upload(hA);
    dB.upload(hB);
    dC.poison();
  }
  void run() override {
    launch(dA.get(), dB.get(), dC.get());
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    const auto hC = dC.download();
    return check(hA.data(), hB.data(), hC.data(), M, N, K, Precision::fp32, seed_);
  }

 protected:
  virtual void launch(const float* A, const float* B, float* C) = 0;
  const std::int64_t M, N, K;

 private:
  DeviceBuffer<float> dA, dB, dC;
  std::vector<float> hA, hB;
  std::uint64_t seed_ = 0;
};

inline Variant gpu_gemm_variant() {
  return fp32_variant(Backend::cuda, "simt");
}

}  // namespace roofbench::gemm
