#pragma once
// What every GEMM variant shares: its declared work and its check against an FP64 reference.
// C = A·B with A M×K, B K×N, C M×N, all row-major; no C input (beta = 0).
#include <cstdint>
#include <vector>

#include "bench/registry.h"
#include "bench/results.h"
#include "bench/types.h"

namespace roofbench::gemm {

// 2·M·N·K flops (one multiply and one add per term).
double flops(const Params& p);
// Reads A and B once, writes C once: (M·K + K·N + M·N) elements of `elem_bytes`.
double bytes(const Params& p, double elem_bytes);
inline constexpr const char* kWork =
    "C = A·B: 2·M·N·K flops; reads A and B once and writes C once: (M·K + K·N + M·N) elements";

// Checks C against an FP64 reference: every entry when M·N <= 65536, else a fixed random sample
// of 2048 entries (always including the four corners). Tolerance per entry:
// 4·u·sqrt(K)·Σ|a_ik·b_kj| for the precision's unit roundoff u (inputs are converted to FP64
// before the reference multiplies them, so the reference sees exactly what the kernel saw).
template <class T>
Verification check(const T* A, const T* B, const T* C, std::int64_t M, std::int64_t N, std::int64_t K, Precision prec,
                   std::uint64_t seed);

std::vector<Params> test_shapes();  // awkward shapes: non-square, not multiples of any tile

// The declarations every FP32 GEMM variant shares on `backend`, running on `unit`; the variant
// file fills in its name, summary, sizes and make.
Variant fp32_variant(Backend backend, const std::string& unit);

}  // namespace roofbench::gemm
