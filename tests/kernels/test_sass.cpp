// The divergence lesson rests on the compiler keeping the branches: if it turned the 32 ways into
// predicated selects (if-conversion), "divergent" would run the same instructions as "uniform" and
// the lesson would measure nothing. This reads the SASS that the build put into the kernels'
// object file (cuobjdump -sass, fetched by scripts/setup.sh) and checks, for every GPU
// architecture in it:
//   divergent, uniform  each of the 32 ways has its own FMA chain (its constant is an immediate
//                       operand of FFMAs), reached by branches (BRA/BRX), and no FFMA is predicated
//                       (if-conversion predicates both arms and keeps one result);
//   branchless          no way constant is an immediate and there is no indexed branch (BRX): one
//                       FMA chain whose constants come from the table.
// Needs no GPU. Where cuobjdump was not found, every test here fails saying so: a skip would let CI
// pass with none of this checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/divergence/divergence.h"
#include "tests/kernels/object_files.h"

namespace roofbench {
namespace {

using roofbench::testing::object_of;
using roofbench::testing::run_command;

struct SassFunction {
  std::string name;                       // mangled
  std::string arch;                       // e.g. sm_90a
  std::vector<std::string> instructions;  // "@!P0 BRA 0x1c0", "FFMA R0, R0, R5, 0.265625", ...
  std::vector<unsigned long> addresses;   // of each instruction, as cuobjdump prints it
};

// Parses `cuobjdump -sass` output: "code for sm_XX" opens an architecture, "Function : NAME" a
// function, and each instruction line is "/*0040*/  OPCODE OPERANDS ;  /* encoding */".
std::vector<SassFunction> parse_sass(const std::string& text) {
  static const std::regex arch_re(R"(code for (sm_\w+))");
  static const std::regex function_re(R"(Function : (\S+))");
  static const std::regex instruction_re(R"(^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;)");
  std::vector<SassFunction> out;
  std::string arch, line;
  std::istringstream in(text);
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, arch_re)) {
      arch = m[1];
    } else if (std::regex_search(line, m, function_re)) {
      out.push_back({m[1], arch, {}, {}});
    } else if (!out.empty() && std::regex_search(line, m, instruction_re)) {
      out.back().addresses.push_back(std::stoul(m[1].str(), nullptr, 16));
      out.back().instructions.push_back(m[2]);
    }
  }
  return out;
}

// "@!P0 HMMA.16816.F32 R4, ..." -> "HMMA.16816.F32" (the guard predicate skipped).
std::string full_opcode(const std::string& ins) {
  std::istringstream in(ins);
  std::string word;
  in >> word;
  if (!word.empty() && word[0] == '@') in >> word;
  return word;
}
// Without its modifiers: "HMMA".
std::string opcode(const std::string& ins) {
  const std::string op = full_opcode(ins);
  return op.substr(0, op.find('.'));
}
bool predicated(const std::string& ins) {
  return !ins.empty() && ins[0] == '@';
}

// Immediate float operands of an instruction, by operand position (0 is the destination, so never).
// FFMA d, a, b, c computes a*b + c: an immediate at 2 is a multiplier, at 3 an addend.
std::vector<std::pair<int, double>> float_immediates(const std::string& ins) {
  std::vector<std::pair<int, double>> out;
  const auto space = ins.find(' ', predicated(ins) ? ins.find(' ') + 1 : 0);
  std::istringstream operands(ins.substr(space + 1));
  std::string op;
  for (int k = 0; std::getline(operands, op, ','); ++k) {
    const auto first = op.find_first_not_of(' ');
    op = first == std::string::npos ? "" : op.substr(first);
    if (k == 0 || op.empty() || !(std::isdigit(static_cast<unsigned char>(op[0])) || op[0] == '-')) continue;
    char* end = nullptr;
    const double v = std::strtod(op.c_str(), &end);
    if (end && *end == '\0') out.emplace_back(k, v);
  }
  return out;
}

struct Shape {
  int ffma = 0, predicated_ffma = 0, branches = 0, indexed_branches = 0;
  std::vector<int> ways_with_own_chain;  // ways whose coef_a is an FFMA multiplier or coef_b an addend
};

Shape shape_of(const SassFunction& f) {
  Shape s;
  std::vector<bool> seen(divergence::kMaxWays, false);
  for (const auto& ins : f.instructions) {
    const std::string op = opcode(ins);
    if (op == "BRA" || op == "BRX") ++s.branches;
    if (op == "BRX") ++s.indexed_branches;
    if (op != "FFMA") continue;
    ++s.ffma;
    if (predicated(ins)) ++s.predicated_ffma;
    for (const auto& [at, v] : float_immediates(ins))
      for (int w = 0; w < divergence::kMaxWays; ++w)
        if ((at == 2 && v == divergence::coef_a(w)) || (at == 3 && v == divergence::coef_b(w))) seen[w] = true;
  }
  for (int w = 0; w < divergence::kMaxWays; ++w)
    if (seen[w]) s.ways_with_own_chain.push_back(w);
  return s;
}

// `cuobjdump FLAG` of a source's object, run once per source and flag per test binary.
const std::string& cuobjdump_of(const std::string& source, const std::string& flag, std::string* why) {
  static std::map<std::string, std::pair<std::string, std::string>> cache;  // text, error
  const std::string key = source + " " + flag;
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::string error, text;
    const std::string object = object_of(source, &error);
    if (!object.empty()) {
      int status = 0;
      text = run_command("'" + std::string(ROOFBENCH_CUOBJDUMP) + "' " + flag + " '" + object + "' 2>&1", status);
      if (status != 0) error = "cuobjdump " + flag + " " + object + " failed:\n" + text.substr(0, 2000);
    }
    it = cache.emplace(key, std::make_pair(std::move(text), std::move(error))).first;
  }
  *why = it->second.second;
  return it->second.first;
}

// The SASS of one of the kernels' object files, parsed once. Empty, with *why set, when it cannot.
const std::vector<SassFunction>& sass_of(const std::string& source, std::string* why) {
  static std::map<std::string, std::vector<SassFunction>> cache;
  const std::string& text = cuobjdump_of(source, "-sass", why);
  auto it = cache.find(source);
  if (it == cache.end()) it = cache.emplace(source, why->empty() ? parse_sass(text) : std::vector<SassFunction>{}).first;
  return it->second;
}

bool have_cuobjdump() {
  return !std::string(ROOFBENCH_CUOBJDUMP).empty();
}
constexpr const char* kNoCuobjdump =
    "cuobjdump was not found when CMake ran: scripts/setup.sh fetches it into .tools/cuda/bin";

class DivergenceSass : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
    std::string why;
    const auto& functions = sass_of("divergence.cu", &why);
    ASSERT_TRUE(why.empty()) << why;
    for (const auto& f : functions) {
      // divergence_kernel<How>: How 0 divergent, 1 uniform, 2 branchless (see divergence.cu).
      static const std::regex kernel_re(R"(divergence_kernelIL\w*HowE([012])E)");
      std::smatch m;
      if (std::regex_search(f.name, m, kernel_re)) kernels_[std::stoi(m[1])].push_back(f);
    }
    ASSERT_EQ(kernels_.size(), 3u) << "expected the three divergence_kernel<How> instantiations in divergence.cu's SASS";
  }
  std::map<int, std::vector<SassFunction>> kernels_;
};

TEST_F(DivergenceSass, EveryWayOfTheBranchingKernelsIsItsOwnBranchedFmaChain) {
  for (int how : {0, 1}) {
    for (const auto& f : kernels_[how]) {
      SCOPED_TRACE(f.arch + " " + (how == 0 ? "divergent" : "uniform"));
      const Shape s = shape_of(f);
      EXPECT_EQ(s.ways_with_own_chain.size(), static_cast<std::size_t>(divergence::kMaxWays))
          << "ways whose constants appear as FFMA immediates: " << s.ways_with_own_chain.size()
          << " of 32: the compiler merged ways";
      EXPECT_EQ(s.predicated_ffma, 0) << "predicated FFMAs: the branches were if-converted";
      EXPECT_GE(s.branches, divergence::kMaxWays) << "too few branches to reach 32 separate chains";
      EXPECT_GE(s.ffma, 32 * 4) << "each way's loop should be an FFMA chain";
    }
  }
}

TEST_F(DivergenceSass, TheBranchlessKernelIsOneChainWithItsConstantsFromTheTable) {
  for (const auto& f : kernels_[2]) {
    SCOPED_TRACE(f.arch + " branchless");
    const Shape s = shape_of(f);
    EXPECT_TRUE(s.ways_with_own_chain.empty()) << s.ways_with_own_chain.size() << " ways have their own chain";
    EXPECT_EQ(s.indexed_branches, 0) << "an indexed branch (BRX) means a dispatch on the way";
    EXPECT_GT(s.ffma, 0);
  }
}

// ---------------------------------------------------------------- the units each kernel uses
// A ceiling measures a unit only if its loop runs on that unit, and a GEMM rung's lesson holds
// only if it uses what it says: the compiler could quietly widen BF16 math to FP32 FFMAs, route
// fragment loads through generic memory, or spill a register tile. Each case names a kernel
// (by its source and a pattern of its mangled name), instructions it must contain (full SASS
// opcode with its modifiers, at least so many) and instructions it must not contain.
struct Need {
  std::string opcode;  // regular expression over the whole opcode, e.g. "HMMA\\.16816\\.F32"
  int at_least = 1;
};
struct UnitCase {
  std::string label, source, kernel;  // kernel: regular expression searched in the mangled name
  std::vector<Need> needs;
  std::vector<std::string> forbidden;  // regular expressions over the whole opcode
  bool sm90a_only = false;             // built only when the architecture list has 90a
  // wgmma kernels: the HGMMAs issued per commit group. Only the last of a group may wait for the
  // group (the `gsb0` operand). When ptxas cannot prove the accumulators untouched while the
  // group runs, it serializes: every HGMMA gets its own gsb0 and a wait after it (warning C7515,
  // shown only with -Xptxas -v), and the tensor cores idle between them.
  int hgmma_per_group = 0;
  std::vector<std::string> lines;  // regular expressions over whole instructions, each needed once
};

// Generic loads and stores (LD/ST without a state space) and local memory (spills).
const std::vector<std::string> kNoGenericOrLocal = {R"((LD|ST)(\..*)?)", R"((LDL|STL)(\..*)?)"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// 06_wgmma.cu at one input type and tile width: 64 x BN x 16 HGMMAs, four per 64-deep k-tile.
UnitCase wgmma_gemm(const std::string& type, const std::string& mangled, int bn, bool persistent = false) {
  const std::string shape = "HGMMA\\.64x" + std::to_string(bn) + "x16\\.F32";
  const bool bf16 = type == "bf16";
  const std::string variant = std::string(persistent ? "wgmma_persistent" : "wgmma") +
                              (bn == 256 ? "" : "_bn" + std::to_string(bn));  // as registered
  return {"gemm_" + variant + "_" + type,
          "06_wgmma.cu",
          std::string(persistent ? "wgmma_persistent_kernelI" : "wgmma_kernelI") + mangled + "Li" +
              std::to_string(bn) + "E",
          {{shape + (bf16 ? "\\.BF16" : ""), 4}, {R"(UTMALDG\..*)", 2}, {R"(SYNCS\..*)", 2}},
          bf16 ? kNoGenericOrLocal : with(kNoGenericOrLocal, {R"(HGMMA.*BF16)"}),
          true,
          4,
          {R"(WARPGROUP\.DEPBAR\.LE gsb0, 0x1)"}};
}

std::vector<UnitCase> unit_cases() {
  return {
      {"ceiling_fp32_fma", "gpu_fma.cu", "fma_kernelINS1_4Fp32E", {{"FFMA", 32}}, {"DFMA", R"(HFMA2.*)"}},
      {"ceiling_fp64_fma", "gpu_fma.cu", "fma_kernelINS1_4Fp64E", {{"DFMA", 32}}, {"FFMA", R"(HFMA2\..*BF16.*)"}},
      // Hopper issues half2 FMAs on the FMA pipe (HFMA2) and on the MMA pipe (HFMA2.MMA).
      {"ceiling_fp16_fma", "gpu_fma.cu", "fma_kernelINS1_4Fp16E", {{R"(HFMA2(\.MMA)?)", 32}}, {"FFMA", R"(.*BF16.*)"}},
      {"ceiling_bf16_fma", "gpu_fma.cu", "fma_kernelINS1_4Bf16E", {{R"(HFMA2(\.MMA)?\.BF16_V2)", 32}}, {"FFMA"}},
      // The special function unit: __sinf and ex2.approx each one MUFU per call, no library path.
      {"ceiling_mufu_sin", "gpu_math.cu", "math_kernelINS1_7MufuSinE", {{R"(MUFU\.SIN)", 8}}, {R"(MUFU\.EX2)"}},
      {"ceiling_mufu_ex2", "gpu_math.cu", "math_kernelINS1_7MufuEx2E", {{R"(MUFU\.EX2)", 8}}, {R"(MUFU\.SIN)"}},
      // Accurate sinf is CUDA's own polynomial after range reduction, not the MUFU: the two
      // ceilings measure different code, as the kernels that call each do.
      {"ceiling_math_sin", "gpu_math.cu", "math_kernelINS1_3SinE", {{"FFMA", 16}}, {R"(MUFU\.SIN)"}},
      {"ceiling_fp16_mma_sync", "gpu_mma.cu", "mma_kernelILb0E", {{R"(HMMA\.16816\.F32)", 32}}, {R"(HMMA.*BF16)"}},
      {"ceiling_bf16_mma_sync", "gpu_mma.cu", "mma_kernelILb1E", {{R"(HMMA\.16816\.F32\.BF16)", 32}}, {}},
      {"ceiling_fp16_wgmma",
       "gpu_wgmma.cu",
       "wgmma_peak_kernelILb0E",
       {{R"(HGMMA\.64x256x16\.F32)", 64}},
       {R"(HGMMA.*BF16)"},
       true,
       16},
      {"ceiling_bf16_wgmma",
       "gpu_wgmma.cu",
       "wgmma_peak_kernelILb1E",
       {{R"(HGMMA\.64x256x16\.F32\.BF16)", 64}},
       {},
       true,
       16},
      // The TMA bulk copy: cp.async.bulk in (UBLKCP.S.G) and out (UBLKCP.G.S), no per-thread loads.
      {"ceiling_dram_copy_bulk",
       "gpu_bulk_copy.cu",
       "bulk_copy_kernel",
       {{R"(UBLKCP\.S\.G)", 1}, {R"(UBLKCP\.G\.S)", 1}, {R"(SYNCS\..*)", 2}},
       with(kNoGenericOrLocal, {R"(LDG\..*)", R"(STG\..*)"}),
       true},
      // Register tiling: a thread's 8x8 outputs from 128-bit shared-memory reads, all in registers.
      {"gemm_register_tiled_fp32",
       "03_register_tiled.cu",
       "register_tiled_kernel",
       {{"FFMA", 512}, {R"(LDS\.128)", 8}},
       kNoGenericOrLocal},
      // Warp tiling: a thread's 8x8 outputs (64 FFMAs per k, 16 k per tile) from 128-bit shared reads.
      {"gemm_warp_tiled_fp32",
       "04_warp_tiled.cu",
       "warp_tiled_kernel",
       {{"FFMA", 1024}, {R"(LDS\.128)", 64}},
       kNoGenericOrLocal},
      // WMMA: mma.sync on the tensor cores, fragments by ldmatrix from shared memory, cp.async in.
      {"gemm_wmma_fp16",
       "05_wmma.cu",
       "wmma_kernelI6__half",
       {{R"(HMMA\.16816\.F32)", 32}, {R"(LDSM\..*)", 8}, {R"(LDGSTS\..*)", 8}},
       with(kNoGenericOrLocal, {R"(HMMA.*BF16)"})},
      {"gemm_wmma_bf16",
       "05_wmma.cu",
       "wmma_kernelI13__nv_bfloat16",
       {{R"(HMMA\.16816\.F32\.BF16)", 32}, {R"(LDSM\..*)", 8}, {R"(LDGSTS\..*)", 8}},
       kNoGenericOrLocal},
      // mma.sync from ldmatrix: WMMA's HMMA, its fragments by ldmatrix (A) and ldmatrix.trans (B,
      // LDSM.16.MT88) from swizzled shared memory, cp.async in: 64 HMMAs a warp a 32-deep k-tile.
      {"gemm_mma_sync_fp16",
       "05_mma_sync.cu",
       "mma_sync_kernelI6__half",
       {{R"(HMMA\.16816\.F32)", 64}, {R"(LDSM\.16\.M88\.4)", 8}, {R"(LDSM\.16\.MT88\.4)", 8}, {R"(LDGSTS\..*)", 6}},
       with(kNoGenericOrLocal, {R"(HMMA.*BF16)"})},
      {"gemm_mma_sync_bf16",
       "05_mma_sync.cu",
       "mma_sync_kernelI13__nv_bfloat16",
       {{R"(HMMA\.16816\.F32\.BF16)", 64}, {R"(LDSM\.16\.M88\.4)", 8}, {R"(LDSM\.16\.MT88\.4)", 8}, {R"(LDGSTS\..*)", 6}},
       kNoGenericOrLocal},
      // wgmma: warpgroup MMAs fed by the tensor memory accelerator (UTMALDG), mbarrier waits, and
      // one k-tile's group left in flight while the next is issued (wait until <= 1 pending).
      wgmma_gemm("fp16", "6__half", 256),
      wgmma_gemm("bf16", "13__nv_bfloat16", 256),
      wgmma_gemm("fp16", "6__half", 128),
      wgmma_gemm("bf16", "13__nv_bfloat16", 128),
      // The persistent form: the same groups, the accumulators stored between tiles without
      // ptxas serializing the wgmmas of the next.
      wgmma_gemm("fp16", "6__half", 256, true),
      wgmma_gemm("bf16", "13__nv_bfloat16", 256, true),
  };
}

void PrintTo(const UnitCase& c, std::ostream* os) {
  *os << c.label;
}

class KernelUnits : public ::testing::TestWithParam<UnitCase> {};

TEST_P(KernelUnits, UsesTheInstructionsItsLessonIsAbout) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  const UnitCase& c = GetParam();
  std::string why;
  const auto& functions = sass_of(c.source, &why);
  if (c.sm90a_only && why.rfind("no ", 0) == 0)
    GTEST_SKIP() << c.source << " is not built: the CUDA architecture list has no 90a";
  ASSERT_TRUE(why.empty()) << why;
  const std::regex kernel(c.kernel);
  int found = 0;
  for (const auto& f : functions) {
    if (!std::regex_search(f.name, kernel)) continue;
    ++found;
    SCOPED_TRACE(f.arch + " " + f.name);
    std::map<std::string, int> ops;
    for (const auto& ins : f.instructions) {
      std::string op = full_opcode(ins);
      // `HFMA2.MMA Rd, -RZ, RZ, imm, imm` is how Hopper code moves a constant: a MOV, not an FMA.
      if (op.rfind("HFMA2", 0) == 0 && ins.find("-RZ, RZ,") != std::string::npos) op = "MOV";
      ++ops[op];
    }
    for (const auto& need : c.needs) {
      const std::regex re(need.opcode);
      int n = 0;
      for (const auto& [op, count] : ops)
        if (std::regex_match(op, re)) n += count;
      EXPECT_GE(n, need.at_least) << "instructions matching " << need.opcode;
    }
    for (const auto& bad : c.forbidden) {
      const std::regex re(bad);
      for (const auto& [op, count] : ops) EXPECT_FALSE(std::regex_match(op, re)) << count << " x " << op;
    }
    for (const auto& line : c.lines) {
      const std::regex re(line);
      EXPECT_TRUE(std::any_of(f.instructions.begin(), f.instructions.end(),
                              [&](const std::string& ins) { return std::regex_search(ins, re); }))
          << "no instruction matching " << line;
    }
    if (c.hgmma_per_group > 0) {
      int hgmma = 0, group_ends = 0;
      for (const auto& ins : f.instructions)
        if (opcode(ins) == "HGMMA") {
          ++hgmma;
          group_ends += ins.find("gsb0") != std::string::npos;
        }
      EXPECT_LE(group_ends * c.hgmma_per_group, hgmma)
          << group_ends << " of " << hgmma << " HGMMAs wait for their group: ptxas serialized them";
    }
  }
  EXPECT_GE(found, 1) << "no function matching " << c.kernel << " in " << c.source;
}

INSTANTIATE_TEST_SUITE_P(Sass, KernelUnits, ::testing::ValuesIn(unit_cases()),
                         [](const ::testing::TestParamInfo<UnitCase>& i) { return i.param.label; });

// ---------------------------------------------------------------- issue slots, bytes in flight
// What keeps a ceiling or a bandwidth lesson from reaching its roof, read off the code alone.

// The loops of a function: a branch back to an address at or before its own closes one.
struct Loop {
  std::size_t first, last;  // instruction indices, both inside the loop
};
std::vector<Loop> loops_of(const SassFunction& f) {
  static const std::regex bra_re(R"(^(@\S+\s+)?BRA\s+(?:`\()?0x([0-9a-f]+))");
  std::vector<Loop> out;
  for (std::size_t i = 0; i < f.instructions.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(f.instructions[i], m, bra_re)) continue;
    const unsigned long target = std::stoul(m[2].str(), nullptr, 16);
    if (target >= f.addresses[i]) continue;  // forward (a self-branch is the end-of-kernel trap)
    const auto at = std::lower_bound(f.addresses.begin(), f.addresses.end(), target);
    if (at != f.addresses.end() && *at == target) out.push_back({static_cast<std::size_t>(at - f.addresses.begin()), i});
  }
  return out;
}

// A loop's steady path: from its first instruction to its last, falling through every
// conditional branch and following every unconditional one (forward, inside the loop). In the
// GEMMs' k loops that is the trip of a block inside the matrices with a next tile to load: each
// guards the tile's copies with a branch around them taken when there is none, and its bounds-
// checked copies with one taken at the edges, which the inside copies skip by an unconditional
// branch. The tests that walk it check what it holds (its copies, its fragment loads), so that a
// compiler that turned a branch around is caught, not measured. Empty, with `why`, when an
// unconditional branch leaves the loop or goes back.
std::vector<std::size_t> steady_path(const SassFunction& f, const Loop& l, std::string* why) {
  static const std::regex bra_re(R"(^(@\S+\s+)?BRA\s+(?:`\()?0x([0-9a-f]+))");
  std::vector<std::size_t> path;
  for (std::size_t i = l.first; i <= l.last; ++i) {
    path.push_back(i);
    std::smatch m;
    const std::string& ins = f.instructions[i];
    if (i == l.last || !std::regex_search(ins, m, bra_re) || m[1].matched) continue;
    const unsigned long target = std::stoul(m[2].str(), nullptr, 16);
    const auto at = std::lower_bound(f.addresses.begin(), f.addresses.end(), target);
    if (at == f.addresses.end() || *at != target || target <= f.addresses[i] || target > f.addresses[l.last]) {
      *why = "an unconditional branch that is not forward inside the loop: " + ins;
      return {};
    }
    i = static_cast<std::size_t>(at - f.addresses.begin()) - 1;  // the loop's ++i lands on the target
  }
  return path;
}

// The loop of f with the most instructions whose opcode (without modifiers) is `op`; null if none.
const Loop* loop_with_most(const SassFunction& f, const std::vector<Loop>& loops, const std::string& op) {
  const Loop* best = nullptr;
  int most = 0;
  for (const Loop& l : loops) {
    int n = 0;
    for (std::size_t i = l.first; i <= l.last; ++i) n += opcode(f.instructions[i]) == op;
    if (n > most) most = n, best = &l;
  }
  return best;
}

// Calls check(f) for each function whose mangled name holds `kernel`, traced with its name;
// expects at least one.
template <class Check>
void each_function(const std::vector<SassFunction>& functions, const std::string& kernel, Check check) {
  int found = 0;
  for (const auto& f : functions) {
    if (f.name.find(kernel) == std::string::npos) continue;
    ++found;
    SCOPED_TRACE(f.arch + " " + kernel);
    check(f);
  }
  EXPECT_GE(found, 1) << "no function matching " << kernel;
}

// An FMA ceiling reaches the FMA pipe's peak only if its loop issues little else: a sub-partition
// issues one instruction per clock, and the FP32 pipe takes an FFMA (or an HFMA2) every clock.
// The compiler's own unrolling of the 64-bit `iters` loop gave 32 FMAs per 37 instructions: at
// most 86% of the peak, against a target of 94%.
TEST(KernelIssue, TheFmaCeilingsHotLoopIsAtLeast95PercentFmas) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  std::string why;
  const auto& functions = sass_of("gpu_fma.cu", &why);
  ASSERT_TRUE(why.empty()) << why;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fma_kernelINS1_4Fp32E", "FFMA"},
      {"fma_kernelINS1_4Fp64E", "DFMA"},
      {"fma_kernelINS1_4Fp16E", R"(HFMA2(\.MMA)?)"},
      {"fma_kernelINS1_4Bf16E", R"(HFMA2(\.MMA)?\.BF16_V2)"}};
  for (const auto& [kernel, fma] : cases) {
    const std::regex fma_re(fma);
    each_function(functions, kernel, [&](const SassFunction& f) {
      int best_fmas = 0;
      std::size_t best_size = 0;
      for (const Loop& l : loops_of(f)) {
        int n = 0;
        for (std::size_t i = l.first; i <= l.last; ++i) n += std::regex_match(full_opcode(f.instructions[i]), fma_re);
        if (n > best_fmas) best_fmas = n, best_size = l.last - l.first + 1;
      }
      ASSERT_GT(best_size, 0u) << "no loop with an FMA";
      EXPECT_GE(best_fmas, 128) << "FMAs in the hottest loop";
      EXPECT_GE(static_cast<double>(best_fmas) / static_cast<double>(best_size), 0.95)
          << best_fmas << " FMAs in a loop of " << best_size << " instructions";
    });
  }
}

// The WMMA GEMM's k loop: Nsight Compute on an H200 (reports/baselines/h200-2026-11-29/profile/
// wmma.txt) counted 7.9 instructions issued per HMMA, issue slots 52% busy and the tensor pipe 40%:
// its cp.async loader was a loop over chunks whose trip count the compiler could not know, ~450
// instructions of index arithmetic and branches around 4 copies a thread. mma.sync's ceiling takes
// an HMMA.16816 about every 6.6 clocks per sub-partition, so the loop must leave the issue slot to
// the HMMAs' neighbours: at most 4 instructions per HMMA, over a k step of at least 64 HMMAs (a
// 64-deep step: one barrier and one loader for four 16-deep slices).
TEST(KernelIssue, TheWmmaGemmsKLoopIssuesAtMostFourInstructionsPerHmma) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  std::string why;
  const auto& functions = sass_of("05_wmma.cu", &why);
  ASSERT_TRUE(why.empty()) << why;
  for (const std::string kernel : {"wmma_kernelI6__half", "wmma_kernelI13__nv_bfloat16"}) {
    each_function(functions, kernel, [&](const SassFunction& f) {
      const auto loops = loops_of(f);
      const Loop* loop = loop_with_most(f, loops, "HMMA");
      ASSERT_NE(loop, nullptr) << "no loop with an HMMA";
      const std::size_t size = loop->last - loop->first + 1;
      int hmma = 0;
      for (std::size_t i = loop->first; i <= loop->last; ++i) hmma += opcode(f.instructions[i]) == "HMMA";
      EXPECT_GE(hmma, 64) << "HMMAs in the k loop";
      EXPECT_LE(static_cast<double>(size) / static_cast<double>(hmma), 4.0)
          << size << " instructions in the k loop for " << hmma << " HMMAs";
    });
  }
}

// The mma.sync GEMM's k loop on its steady path (steady_path above: a block inside M and N, a
// k-tile with a next one to load; the path must hold that tile's 6 copies, 2 of A and 4 of B, and
// the 16 fragment loads of its two slices). WMMA's loop issued 3.5 instructions per HMMA; this
// rung, written out by hand, is held to 2.5 over a k-tile of at least 64 HMMAs (2.1 in the build:
// 134 instructions).
TEST(KernelIssue, TheMmaSyncGemmsSteadyKLoopIssuesAtMost2Point5InstructionsPerHmma) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  std::string why;
  const auto& functions = sass_of("05_mma_sync.cu", &why);
  ASSERT_TRUE(why.empty()) << why;
  for (const std::string kernel : {"mma_sync_kernelI6__half", "mma_sync_kernelI13__nv_bfloat16"}) {
    each_function(functions, kernel, [&](const SassFunction& f) {
      const auto loops = loops_of(f);
      const Loop* loop = loop_with_most(f, loops, "HMMA");
      ASSERT_NE(loop, nullptr) << "no loop with an HMMA";
      std::string bad;
      const auto path = steady_path(f, *loop, &bad);
      ASSERT_FALSE(path.empty()) << bad;
      int hmma = 0, copies = 0, fragments = 0;
      for (std::size_t i : path) {
        const std::string& ins = f.instructions[i];
        hmma += opcode(ins) == "HMMA";
        copies += opcode(ins) == "LDGSTS" && !predicated(ins);
        fragments += opcode(ins) == "LDSM";
      }
      EXPECT_EQ(copies, 6) << "the next k-tile's unguarded cp.async copies on the steady path";
      EXPECT_EQ(fragments, 16) << "ldmatrix loads on the steady path";
      EXPECT_GE(hmma, 64) << "HMMAs on the steady path of the k loop";
      EXPECT_LE(static_cast<double>(path.size()) / static_cast<double>(hmma), 2.5)
          << path.size() << " instructions on the steady path for " << hmma << " HMMAs";
    });
  }
}

// The registers an instruction names (R0..R255, not RZ), in its operands from `from` on: "R10.64"
// and "R4.H0_H0" name R10 and R4.
std::vector<int> registers_named(const std::string& ins, std::size_t from) {
  static const std::regex reg_re(R"(\bR(\d+)\b)");
  std::vector<int> out;
  const std::string rest = ins.substr(std::min(from, ins.size()));
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), reg_re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi((*it)[1].str()));
  return out;
}

// The warp-tiled SGEMM's k loop feeds its FFMAs from fragments loaded a k step ahead. Nsight
// Compute on an H200 (reports/baselines/h200-2026-11-29/profile/register_tiled.txt) found the best
// SIMT rung's warps stalled 0.95 cycles an instruction on the short scoreboard: register_tiled's
// SASS reads some shared loads 3 to 6 instructions after they issue (the first of each tile),
// a wait of the shared load's whole latency. On the k loop's steady path (steady_path above: a
// block inside the matrices, with a next tile; it must hold that tile's 4 unguarded float4 loads
// and a 16-deep tile's 64 shared loads), each shared load's registers are first read at least 32
// instructions later (half a k step's 64 FFMAs), in the trip or, carried, in the next; and at
// least 87% of the path is FFMAs (1,024 of 1,163 in the build).
TEST(KernelIssue, TheWarpTiledSgemmReadsEachSharedLoadAtLeast32InstructionsLater) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  std::string why;
  const auto& functions = sass_of("04_warp_tiled.cu", &why);
  ASSERT_TRUE(why.empty()) << why;
  each_function(functions, "warp_tiled_kernel", [&](const SassFunction& f) {
    const auto loops = loops_of(f);
    const Loop* loop = loop_with_most(f, loops, "FFMA");
    ASSERT_NE(loop, nullptr) << "no loop with an FFMA";
    std::string bad;
    const auto path = steady_path(f, *loop, &bad);
    ASSERT_FALSE(path.empty()) << bad;
    const std::size_t size = path.size();
    int ffma = 0, fetches = 0, loads = 0;
    for (std::size_t i : path) {
      const std::string& ins = f.instructions[i];
      ffma += opcode(ins) == "FFMA";
      fetches += full_opcode(ins).rfind("LDG.E.128", 0) == 0 && !predicated(ins);
    }
    EXPECT_EQ(fetches, 4) << "the next tile's unguarded float4 loads on the steady path";
    EXPECT_GE(ffma, 1024) << "FFMAs on the steady path";
    EXPECT_GE(static_cast<double>(ffma) / static_cast<double>(size), 0.87)
        << ffma << " FFMAs in " << size << " instructions on the steady path";
    std::size_t nearest = size;
    for (std::size_t p = 0; p < size; ++p) {
      const std::string& ins = f.instructions[path[p]];
      const std::string op = full_opcode(ins);
      if (op.rfind("LDS", 0) != 0 || ins.rfind("@!PT", 0) == 0) continue;  // @!PT: never issued (a filler)
      ++loads;
      const std::size_t operands = ins.find(op) + op.size();
      const std::size_t comma = ins.find(',', operands);
      const auto dest = registers_named(ins.substr(0, comma), operands);
      ASSERT_FALSE(dest.empty()) << ins;
      const int width = op.find(".128") != std::string::npos ? 4 : op.find(".64") != std::string::npos ? 2 : 1;
      std::set<int> pending;
      for (int r = dest[0]; r < dest[0] + width; ++r) pending.insert(r);
      // Forward along the path and round again to this load: the first instruction that reads one
      // of its registers; a register written again first holds something else.
      for (std::size_t step = 1; step < size && !pending.empty(); ++step) {
        const std::string& next = f.instructions[path[(p + step) % size]];
        const std::string nop = full_opcode(next);
        const std::size_t nfrom = next.find(nop) + nop.size();
        const std::size_t ncomma = next.find(',', nfrom);
        const bool store = nop.rfind("ST", 0) == 0;
        const auto sources = registers_named(next, store || ncomma == std::string::npos ? nfrom : ncomma);
        if (std::any_of(sources.begin(), sources.end(), [&](int r) { return pending.count(r) > 0; })) {
          if (step < nearest) nearest = step;
          SCOPED_TRACE(ins + " read by " + next);
          EXPECT_GE(step, 32u) << "instructions from a shared load to the first read of what it loaded";
          break;
        }
        if (!store && ncomma != std::string::npos)
          for (int r : registers_named(next.substr(0, ncomma), nfrom)) pending.erase(r);
      }
    }
    EXPECT_EQ(loads, 64) << "shared loads on the steady path";
    EXPECT_GE(nearest, 32u);
  });
}

// In a loop's body, from its first instruction: the 16-byte loads issued before the first
// instruction that reads a register one of them wrote (a use of what they load). Index arithmetic
// between the loads (a select that wraps an index) is no use; a register written by anything else
// after a load holds that instead.
int wide_loads_before_first_use(const SassFunction& f, const Loop& l) {
  static const std::regex load_re(R"(LDG\..*128.*)"), store_re(R"(ST[GS](\..*)?)");
  std::set<int> loaded;
  int loads = 0;
  for (std::size_t i = l.first; i <= l.last; ++i) {
    const std::string& ins = f.instructions[i];
    const std::string op = full_opcode(ins);
    const std::size_t operands = ins.find(op) + op.size();
    const std::size_t comma = ins.find(',', operands);  // the destination ends there
    if (std::regex_match(op, load_re)) {
      const auto dest = registers_named(ins.substr(0, comma == std::string::npos ? ins.size() : comma), operands);
      if (!dest.empty())
        for (int r = dest[0]; r < dest[0] + 4; ++r) loaded.insert(r);
      ++loads;
      continue;
    }
    const bool store = std::regex_match(op, store_re);
    const auto sources = registers_named(ins, store || comma == std::string::npos ? operands : comma);
    if (std::any_of(sources.begin(), sources.end(), [&](int r) { return loaded.count(r) > 0; })) break;
    if (!store && comma != std::string::npos)
      for (int r : registers_named(ins.substr(0, comma), operands)) loaded.erase(r);
  }
  return loads;
}

// A bandwidth-bound loop covers the memory's latency with bytes in flight: four 16-byte loads
// issued per thread before the first instruction that uses what they read. The FP16 ReLU had
// one (the compiler unrolled only the FP32 loop) and the L2 ceiling one (its unrolled loop summed
// each load before the next): a quarter of what covers the latency at full bandwidth.
TEST(KernelIssue, StreamingLoopsIssueFourWideLoadsBeforeUsingAny) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  const std::vector<std::pair<std::string, std::string>> cases = {{"relu.cu", "relu_kernelIfE"},
                                                                   {"relu.cu", "relu_kernelI6__halfE"},
                                                                   {"relu.cu", "relu_kernelI13__nv_bfloat16E"},
                                                                   {"gpu_cache_bandwidth.cu", "l2_read_kernel"}};
  for (const auto& [source, kernel] : cases) {
    std::string why;
    const auto& functions = sass_of(source, &why);
    ASSERT_TRUE(why.empty()) << why;
    each_function(functions, kernel, [&](const SassFunction& f) {
      int most = 0;
      for (const Loop& l : loops_of(f)) most = std::max(most, wide_loads_before_first_use(f, l));
      EXPECT_GE(most, 4) << "16-byte loads issued before the first use of one, in the best loop";
    });
  }
}

// The counting above, on loops written out: loads, index selects between them, then the sums.
TEST(SassParser, CountsWideLoadsUntilAnInstructionReadsWhatOneLoaded) {
  SassFunction f;
  f.instructions = {"@!P0 LDG.E.128.STRONG.GPU R4, desc[UR4][R10.64]",
                    "SEL R9, R22, RZ, P0",  // an index wrapped: no use
                    "IADD3 R10, P3, -R9, R8, RZ",
                    "@!P1 LDG.E.128.STRONG.GPU R12, desc[UR4][R10.64]",
                    "MOV R6, R2",  // R6 now holds something else
                    "FADD R3, R6, R1",  // not a use: R6 was overwritten
                    "@!P1 LDG.E.128 R16, desc[UR4][R18.64]",
                    "FADD R0, R4, R5",  // the first use
                    "@!P1 LDG.E.128 R20, desc[UR4][R24.64]"};
  f.addresses = {0x0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80};
  EXPECT_EQ(wide_loads_before_first_use(f, {0, 8}), 3);
  f.instructions[1] = "FSEL R9, R5, RZ, P0";  // reads R5, which the first load wrote
  EXPECT_EQ(wide_loads_before_first_use(f, {0, 8}), 1);
  f.instructions[1] = "STG.E.128 desc[UR4][R2.64], R4";  // a store of what was loaded
  EXPECT_EQ(wide_loads_before_first_use(f, {0, 8}), 1);
}

// The L2 ceiling's 16 MiB would mostly fit in the SMs' L1s (about 127 KiB per SM per pass): only
// loads that skip the L1 (ld.global.cg, SASS LDG...STRONG.GPU) make it the L2's. A plain or __ldg
// load would pass its check and every other SASS test, and measure the L1.
TEST(KernelIssue, TheL2CeilingsLoadsSkipTheL1) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  std::string why;
  const auto& functions = sass_of("gpu_cache_bandwidth.cu", &why);
  ASSERT_TRUE(why.empty()) << why;
  int loads = 0;
  each_function(functions, "l2_read_kernel", [&](const SassFunction& f) {
    for (const auto& ins : f.instructions) {
      const std::string op = full_opcode(ins);
      if (op.rfind("LDG", 0) != 0) continue;
      ++loads;
      EXPECT_NE(op.find(".STRONG.GPU"), std::string::npos) << ins << ": a load that may be served by the L1";
    }
  });
  EXPECT_GE(loads, 4);
}

// Grid-stride kernels launch 8 blocks of 256 threads per SM (grid_stride_blocks): all resident
// only at 32 registers a thread or fewer (65536 / 2048). The triad ceiling and the sincos lesson's
// add took 40: 6 blocks fitted, and the last quarter of the grid ran as a ragged second round.
TEST(KernelIssue, GridStrideKernelsFitEightBlocksPerSmInRegisters) {
  ASSERT_TRUE(have_cuobjdump()) << kNoCuobjdump;
  const std::map<std::string, std::vector<std::string>> kernels = {
      {"gpu_bandwidth.cu", {"read_kernel", "write_kernel", "copy_kernel", "triad_kernel", "update_kernel"}},
      {"gpu_cache_bandwidth.cu", {"l2_read_kernel"}},
      {"sincos.cu", {"map_kernel", "zip_kernel"}},
      {"relu.cu", {"relu_kernel"}},
      {"saxpy.cu", {"saxpy_kernel"}}};
  static const std::regex function_re(R"(Function (\S+):)"), reg_re(R"(REG:(\d+))"), local_re(R"(LOCAL:(\d+))");
  for (const auto& [source, names] : kernels) {
    std::string why;
    const std::string& text = cuobjdump_of(source, "-res-usage", &why);
    ASSERT_TRUE(why.empty()) << why;
    std::map<std::string, int> seen;
    std::istringstream in(text);
    std::string line, function;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, function_re)) {
        function = m[1];
        continue;
      }
      if (function.empty() || !std::regex_search(line, m, reg_re)) continue;
      for (const auto& name : names)
        if (function.find(name) != std::string::npos) {
          ++seen[name];
          EXPECT_LE(std::stoi(m[1]), 32) << function;
          std::smatch l;
          if (std::regex_search(line, l, local_re)) EXPECT_EQ(std::stoi(l[1]), 0) << function << " spills";
        }
      function.clear();
    }
    for (const auto& name : names) EXPECT_GE(seen[name], 1) << name << " in " << source << "'s -res-usage";
  }
}

// The parser itself, on a few lines in cuobjdump's format.
TEST(SassParser, ReadsArchitecturesFunctionsAndInstructions) {
  const std::string text = R"(
	code for sm_90a
		Function : _Z3fooPf
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                /* 0x00000a00ff017b82 */
                                                                         /* 0x000fe20000000800 */
        /*0010*/              @!P0 BRA 0x1c0 ;                           /* 0x00000000000c8947 */
        /*0020*/                   FFMA R0, R0, R5, 0.265625 ;           /* 0x3e88000000007423 */
        /*0030*/               @P1 FFMA R0, R0, 1.0000001192092895508, R5 ; /* 0x3e88000000007423 */
        /*0040*/                   FFMA R0, R0, 0.5, R5 ;                /* 0x3e88000000007423 */
		Function : _Z3barv
        /*0000*/                   BRX R4 -0x3c0 ;                       /* 0xfffffffc04107949 */
)";
  const auto fs = parse_sass(text);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].name, "_Z3fooPf");
  EXPECT_EQ(fs[0].arch, "sm_90a");
  ASSERT_EQ(fs[0].instructions.size(), 5u);
  EXPECT_EQ(fs[0].instructions[1], "@!P0 BRA 0x1c0");
  const Shape s = shape_of(fs[0]);
  EXPECT_EQ(s.ffma, 3);
  EXPECT_EQ(s.predicated_ffma, 1);
  EXPECT_EQ(s.branches, 1);
  // 0.265625 = coef_b(1) as an addend, 1 + 2^-23 = coef_a(0) as a multiplier; 0.5 as a multiplier
  // is no way's (as an addend it would be coef_b(16)).
  EXPECT_EQ(s.ways_with_own_chain, (std::vector<int>{0, 1}));
  EXPECT_EQ(float_immediates("FFMA R0, R0, R5, -1.5e-05"), (std::vector<std::pair<int, double>>{{3, -1.5e-05}}));
  EXPECT_TRUE(float_immediates("FFMA R7, R3.reuse, R7, R4.reuse").empty());
  EXPECT_EQ(shape_of(fs[1]).indexed_branches, 1);
}

}  // namespace
}  // namespace roofbench
