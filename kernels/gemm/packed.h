#pragma once
// The packed GEMM of 08_packed.cpp with its micro-kernel chosen by name ("avx512f", "avx2+fma",
// anything else: the plain C++ one), for the test that runs each ISA the CPU has; the variant
// itself takes cpu_info().isa. C = A·B, row-major FP32. Naming an ISA the CPU lacks is an
// illegal instruction.
#include <cstdint>
#include <string>

namespace roofbench::gemm {

void packed_gemm(const float* a, const float* b, float* c, std::int64_t M, std::int64_t N, std::int64_t K,
                 const std::string& isa);

}  // namespace roofbench::gemm
