#pragma once
// CUBLAS_CHECK, the cuBLAS member of the CUDA_CHECK family, and an RAII cuBLAS handle.
#include <cublas_v2.h>

#include <string>

#include "roofbench/cuda.h"

namespace roofbench {

[[noreturn]] inline void throw_cublas(cublasStatus_t s, const char* expr, const char* file, int line) {
  throw CudaError(std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ") from " + expr + " at " +
                  file + ":" + std::to_string(line));
}

#define CUBLAS_CHECK(expr)                                                                                         \
  do {                                                                                                             \
    cublasStatus_t roofbench_status_ = (expr);                                                                     \
    if (roofbench_status_ != CUBLAS_STATUS_SUCCESS) ::roofbench::throw_cublas(roofbench_status_, #expr, __FILE__, \
                                                                              __LINE__);                           \
  } while (false)

class CublasHandle {
 public:
  CublasHandle() { CUBLAS_CHECK(cublasCreate(&h_)); }
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace roofbench
