// OpenBLAS SGEMM: the vendor-library reference for the CPU GEMM ladder, timed like the others.
// Run only this: roofbench run --device cpu --filter 'gemm/openblas'
#include <cblas.h>

#include "kernels/gemm/cpu_gemm.h"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
class OpenBlasGemm final : public CpuGemm {
 public:
  using CpuGemm::CpuGemm;

 private:
  void compute(const float* a, const float* b, float* c) override {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
                static_cast<int>(K), 1.0f, a, static_cast<int>(K), b, static_cast<int>(N), 0.0f, c,
                static_cast<int>(N));
  }
};

// ---------------------------------------------------------------- registration
Variant make() {
  Variant v = cpu_gemm_variant();
  v.variant = "openblas";
  v.vendor_reference = true;
  v.summary = "OpenBLAS cblas_sgemm, all cores: the CPU vendor reference";
  v.sizes = square_gemm_sizes({256, 512, 1024, 2048});
  v.quick_sizes = square_gemm_sizes({256, 512});
  v.make = [](const Params& p) { return std::make_unique<OpenBlasGemm>(p); };
  return v;
}
ROOFBENCH_REGISTER(make());

}  // namespace
}  // namespace roofbench::gemm
