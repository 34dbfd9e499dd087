#pragma once
// What every GEMM variant shares: its declared work and its check against an FP64 reference.
// C = A·B with A M×K, B K×N, C M×N, all row-major; no C input (beta = 0). A and B are FP32,
// FP16 or BF16; C and the accumulation are FP32 in every variant (the "mixed precision" GEMM of
// tensor cores: products of 16-bit inputs are exact in FP32).
#include <cstdint>
#include <vector>

#include "roofbench/variant.h"
#include "roofbench/types.h"

namespace roofbench::gemm {

// C = A·B: 2·M·N·K FLOPs (a multiply and an add per term); reads A and B once, in the input
// precision, and writes C once, in FP32.
Work work(Precision input);

// Checks C against an FP64 reference: every entry when M·N <= 65536, else the entries of
// sample_entries(). Tolerance per entry:
// 4·u·sqrt(K)·Σ|a_ik·b_kj| with u the FP32 unit roundoff: the inputs are converted to FP64
// before the reference multiplies them, so the reference sees exactly what the kernel saw, and
// the only error left is the FP32 accumulation's (products of FP16/BF16 inputs are exact in FP32).
// A tensor core's truncating accumulation passes it with a wide margin at the largest K
// (GemmCheck.TruncatingTensorCoreAccumulationPassesAtTheLargestK).
// The entries of C (row-major indices) a check compares. All of them when M·N <= kFullCheck. Else
// one entry in every block x block tile of C (block = 32, doubled until there are at most
// kFullCheck tiles), so that a wrong or unwritten tile of that size, the GEMM kernels' smallest, is
// always caught (a sample of 2048 alone missed one 128x128 tile of 8192^2 six times in ten); its
// row random within the tile, its column one per tile column, so that few columns of B are
// needed; besides, the four corners, and random entries up to kLeastSampled. Fixed by the seed.
inline constexpr std::int64_t kFullCheck = 65536, kLeastSampled = 2048;
struct Sample {
  std::vector<std::int64_t> entries;
  std::int64_t block = 0;  // 0: every entry
};
Sample sample_entries(std::int64_t M, std::int64_t N, std::uint64_t seed);

template <class T>
Verification check(const T* A, const T* B, const float* C, std::int64_t M, std::int64_t N, std::int64_t K,
                   std::uint64_t seed);

std::vector<Params> test_shapes();  // awkward shapes: non-square, not multiples of any tile

// The declarations every GEMM variant with inputs of `precision` shares on `backend`, running on
// `unit`; the variant file fills in its name, summary, sizes and make. 16-bit inputs on CUDA
// cores are accumulated in FP32 on the FP32 pipe, so their roof is the FP32 one (math = fp32).
Variant variant_for(Precision precision, Backend backend, Unit unit);

}  // namespace roofbench::gemm
