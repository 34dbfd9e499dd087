// cuBLAS, the reference every GEMM rung is compared with in the same run: SGEMM for FP32, and
// cublasGemmEx with FP16/BF16 inputs, FP32 output and FP32 compute for the 16-bit types.
// Run only this: roofbench run --device cuda:0 --filter 'gemm/cublas'
#include "kernels/gemm/cublas_check.h"
#include "kernels/gemm/gpu_gemm.cuh"

namespace roofbench::gemm {
namespace {

// ---------------------------------------------------------------- kernel
// cuBLAS is column-major. A row-major C = A·B is, read column-major, Cᵀ = Bᵀ·Aᵀ with the same
// buffers, so the call swaps A and B (and M and N) and transposes nothing. It runs on the
// default stream, which the CUDA events that time it are recorded on.
//
// FP32: the default math mode, which never uses TF32 tensor cores for SGEMM unless
// NVIDIA_TF32_OVERRIDE=1 is set in the environment (the run refuses that: it would not be FP32).
template <class T>
constexpr cudaDataType_t cuda_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  if constexpr (std::is_same_v<T, half_t>) return CUDA_R_16F;
  if constexpr (std::is_same_v<T, bf16_t>) return CUDA_R_16BF;
}

// ---------------------------------------------------------------- launcher
template <class T>
class CublasGemm final : public GpuGemm<T> {
 public:
  using D = device_t<T>;
  explicit CublasGemm(const Params& p) : GpuGemm<T>(p) {
    if constexpr (std::is_same_v<T, float>) {
      const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
      if (tf32 && std::string(tf32) == "1")
        throw InputError("gemm/cublas/fp32: NVIDIA_TF32_OVERRIDE=1 would run SGEMM on TF32 tensor cores; unset it");
    }
    CUBLAS_CHECK(cublasSetMathMode(handle_.get(), CUBLAS_DEFAULT_MATH));
  }

 private:
  void launch(const D* A, const D* B, float* C) override {
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(this->N), n = static_cast<int>(this->M), k = static_cast<int>(this->K);
    if constexpr (std::is_same_v<T, float>) {
      CUBLAS_CHECK(cublasSgemm(handle_.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, B, m, A, k, &beta, C, m));
    } else {
      CUBLAS_CHECK(cublasGemmEx(handle_.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, B, cuda_type<T>(), m, A,
                                cuda_type<T>(), k, &beta, C, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
  }

  CublasHandle handle_;
};

// ---------------------------------------------------------------- registration
template <class T>
Variant make() {
  Variant v = gpu_gemm_variant<T>(std::is_same_v<T, float> ? Unit::simt : Unit::tensor);
  v.variant = "cublas";
  v.vendor_reference = true;
  v.summary = std::is_same_v<T, float> ? "cublasSgemm (FP32 on CUDA cores), the FP32 reference"
                                       : "cublasGemmEx, 16-bit inputs, FP32 output and compute: the tensor-core reference";
  v.sizes = fixed_tile_sweep();
  v.quick_sizes = square_gemm_sizes({std::is_same_v<T, float> ? 1024 : 2048});
  v.make = [](const Params& p) { return std::make_unique<CublasGemm<T>>(p); };
  return v;
}
ROOFBENCH_REGISTER(make<float>());
ROOFBENCH_REGISTER(make<half_t>());
ROOFBENCH_REGISTER(make<bf16_t>());

}  // namespace
}  // namespace roofbench::gemm
