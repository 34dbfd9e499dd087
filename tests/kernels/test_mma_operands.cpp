// The tensor-core ceilings' operands can expose a layout mistake; uniform operands could not.
// A host model of one warp's m16n8k16 MMA: each lane puts the elements it loaded where the
// hardware reads them (the PTX ISA's fragment layout). A kernel that loaded them from the wrong
// place (two fragment registers swapped, B transposed) computes another product; the check's
// weighted per-thread sums then differ from the host's, with the ceilings' operands
// (kernels/ceilings/mma_operands.h), and not with every element 1/8 as before.
#include <gtest/gtest.h>

#include <array>
#include <functional>

#include "bench/registry.h"
#include "kernels/ceilings/mma_operands.h"

using namespace roofbench::ceilings;

namespace {

using Value = std::function<double(int, int)>;
struct Cell {
  int row, col;
};
// Element e (0-7) of lane l's A fragment and element e (0-3) of its B fragment, as PTX lays
// them out: A {(g,2t),(g,2t+1)}, {(g+8,..)}, {(g,2t+8),..}, {(g+8,2t+8),..}; B (k, n).
Cell a_cell(int lane, int e) {
  const int g = lane / 4, t = lane % 4;
  return {g + 8 * ((e / 2) % 2), 2 * t + (e % 2) + 8 * (e / 4)};
}
Cell b_cell(int lane, int e) {
  const int g = lane / 4, t = lane % 4;
  return {2 * t + (e % 2) + 8 * (e / 2), g};
}

// The 32 threads' weighted sums Σ_r (r + 1)·d_r of one MMA whose lanes loaded A element e from
// load_a(lane, e) (and B likewise), while the hardware reads it as a_cell/b_cell say.
std::array<double, 32> thread_sums(const Value& a, const Value& b, const std::function<Cell(int, int)>& load_a,
                                   const std::function<Cell(int, int)>& load_b) {
  double A[16][16] = {}, B[16][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    for (int e = 0; e < 8; ++e) {
      const Cell at = a_cell(lane, e), from = load_a(lane, e);
      A[at.row][at.col] = a(from.row, from.col);
    }
    for (int e = 0; e < 4; ++e) {
      const Cell at = b_cell(lane, e), from = load_b(lane, e);
      B[at.row][at.col] = b(from.row, from.col);
    }
  }
  std::array<double, 32> sums{};
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    const Cell d[4] = {{g, 2 * t}, {g, 2 * t + 1}, {g + 8, 2 * t}, {g + 8, 2 * t + 1}};
    for (int r = 0; r < 4; ++r) {
      double s = 0;
      for (int k = 0; k < 16; ++k) s += A[d[r].row][k] * B[k][d[r].col];
      sums[lane] += (r + 1) * s;
    }
  }
  return sums;
}

const Value kOperandA = [](int m, int k) { return static_cast<double>(mma_a(m, k)); };
const Value kOperandB = [](int k, int n) { return static_cast<double>(mma_b(k, n)); };
const Value kEighth = [](int, int) { return 0.125; };

// Mistakes a kernel could make in loading its fragments.
Cell swap_a_registers_1_and_2(int lane, int e) {
  const int reg = e / 2;
  return a_cell(lane, (reg == 1 ? 2 : reg == 2 ? 1 : reg) * 2 + e % 2);
}
Cell swap_b_registers(int lane, int e) {
  return b_cell(lane, (e + 2) % 4);
}
Cell swap_halves_of_each_register(int lane, int e) {
  return a_cell(lane, e ^ 1);
}

}  // namespace

TEST(TensorCeilingOperands, TheRightLayoutGivesTheHostsProduct) {
  const auto sums = thread_sums(kOperandA, kOperandB, a_cell, b_cell);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    const double want = 1 * mma_dot16(g, 2 * t) + 2 * mma_dot16(g, 2 * t + 1) + 3 * mma_dot16(g + 8, 2 * t) +
                        4 * mma_dot16(g + 8, 2 * t + 1);
    EXPECT_EQ(sums[lane], want) << "lane " << lane;
  }
}

TEST(TensorCeilingOperands, EveryLoadingMistakeChangesSomeThreadsSum) {
  const auto right = thread_sums(kOperandA, kOperandB, a_cell, b_cell);
  EXPECT_NE(thread_sums(kOperandA, kOperandB, swap_a_registers_1_and_2, b_cell), right);
  EXPECT_NE(thread_sums(kOperandA, kOperandB, a_cell, swap_b_registers), right);
  EXPECT_NE(thread_sums(kOperandA, kOperandB, swap_halves_of_each_register, b_cell), right);
  // B read as its transpose's layout would be (k and n exchanged within the 8x8 blocks)
  EXPECT_NE(thread_sums(kOperandA, kOperandB, a_cell,
                        [](int lane, int e) {
                          const Cell c = b_cell(lane, e);
                          return Cell{c.col + 8 * (c.row / 8), c.row % 8};
                        }),
            right);
}

TEST(TensorCeilingOperands, UniformOperandsHideEveryOneOfThoseMistakes) {
  // Why the ceilings' old inputs (every element 1/8) could not fail on a layout mistake.
  const auto right = thread_sums(kEighth, kEighth, a_cell, b_cell);
  EXPECT_EQ(thread_sums(kEighth, kEighth, swap_a_registers_1_and_2, b_cell), right);
  EXPECT_EQ(thread_sums(kEighth, kEighth, a_cell, swap_b_registers), right);
  EXPECT_EQ(thread_sums(kEighth, kEighth, swap_halves_of_each_register, b_cell), right);
}

TEST(TensorCeilingOperands, AllProductsStayExactInFp32AtTheCeilingsSizes) {
  // |D| <= 64 per k16 product; the ceilings refuse sizes where iters·64 (mma.sync) or
  // iters·mmas·64 (wgmma) reaches 2^24.
  int most = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 256; ++n) most = std::max(most, std::abs(mma_dot16(m, n)));
  EXPECT_LE(most, kMmaDotBound);
  EXPECT_GT(most, 0);
#ifdef ROOFBENCH_HAVE_CUDA
  // Every size the registered tensor ceilings run at (full, quick, test), read from the registry:
  // a larger `iters` there fails here, not as the kernel's refusal in a run on the GPU machine.
  int ceilings = 0;
  for (const auto& v : roofbench::registry()) {
    if (v.family != "ceiling" || v.backend != roofbench::Backend::cuda) continue;
    const bool sync = v.variant.find("mma_sync") != std::string::npos;
    if (!sync && v.variant.find("wgmma") == std::string::npos) continue;
    ++ceilings;
    for (const auto* sizes : {&v.sizes, &v.quick_sizes, &v.test_sizes})
      for (const auto& p : *sizes) {
        const std::int64_t mmas = sync ? 1 : roofbench::param(p, "mmas");
        EXPECT_LT(roofbench::param(p, "iters") * mmas * kMmaDotBound, std::int64_t{1} << 24) << v.name(p);
      }
  }
  EXPECT_EQ(ceilings, 4);  // mma.sync and wgmma, FP16 and BF16
#else
  GTEST_SKIP() << "built without CUDA: the tensor ceilings' sizes are checked where they are registered";
#endif
}
