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
// Needs no GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/divergence/divergence.h"

namespace roofbench {
namespace {

struct SassFunction {
  std::string name;                       // mangled
  std::string arch;                       // e.g. sm_90a
  std::vector<std::string> instructions;  // "@!P0 BRA 0x1c0", "FFMA R0, R0, R5, 0.265625", ...
};

std::string run_command(const std::string& cmd, int& status) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) {
    status = -1;
    return {};
  }
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  status = pclose(pipe.release());
  return out;
}

// Parses `cuobjdump -sass` output: "code for sm_XX" opens an architecture, "Function : NAME" a
// function, and each instruction line is "/*0040*/  OPCODE OPERANDS ;  /* encoding */".
std::vector<SassFunction> parse_sass(const std::string& text) {
  static const std::regex arch_re(R"(code for (sm_\w+))");
  static const std::regex function_re(R"(Function : (\S+))");
  static const std::regex instruction_re(R"(^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;)");
  std::vector<SassFunction> out;
  std::string arch, line;
  std::istringstream in(text);
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, arch_re)) {
      arch = m[1];
    } else if (std::regex_search(line, m, function_re)) {
      out.push_back({m[1], arch, {}});
    } else if (!out.empty() && std::regex_search(line, m, instruction_re)) {
      out.back().instructions.push_back(m[1]);
    }
  }
  return out;
}

std::string opcode(const std::string& ins) {
  std::istringstream in(ins);
  std::string word;
  in >> word;
  if (!word.empty() && word[0] == '@') in >> word;  // the guard predicate
  return word.substr(0, word.find('.'));
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

// The kernels' object file for divergence.cu, from the list CMake wrote at generate time.
std::string divergence_object() {
  std::ifstream list(ROOFBENCH_KERNEL_OBJECTS);
  std::string path;
  while (std::getline(list, path))
    if (const std::string tail = "/divergence.cu.o";
        path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0)
      return path;
  return {};
}

class DivergenceSass : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(ROOFBENCH_CUOBJDUMP).empty())
      GTEST_SKIP() << "cuobjdump was not found when CMake ran: scripts/setup.sh fetches it into .tools/cuda/bin";
    const std::string object = divergence_object();
    ASSERT_FALSE(object.empty()) << "no divergence.cu object in " << ROOFBENCH_KERNEL_OBJECTS;
    int status = 0;
    const std::string text =
        run_command("'" + std::string(ROOFBENCH_CUOBJDUMP) + "' -sass '" + object + "' 2>&1", status);
    ASSERT_EQ(status, 0) << "cuobjdump -sass " << object << " failed:\n" << text.substr(0, 2000);
    for (auto& f : parse_sass(text)) {
      // divergence_kernel<How>: How 0 divergent, 1 uniform, 2 branchless (see divergence.cu).
      static const std::regex kernel_re(R"(divergence_kernelIL\w*HowE([012])E)");
      std::smatch m;
      if (std::regex_search(f.name, m, kernel_re)) kernels_[std::stoi(m[1])].push_back(std::move(f));
    }
    ASSERT_EQ(kernels_.size(), 3u) << "expected the three divergence_kernel<How> instantiations in the SASS of "
                                   << object;
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
        /*0030*/               @P1 FFMA R0, R0, 0.5, R5 ;                /* 0x3e88000000007423 */
		Function : _Z3barv
        /*0000*/                   BRX R4 -0x3c0 ;                       /* 0xfffffffc04107949 */
)";
  const auto fs = parse_sass(text);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].name, "_Z3fooPf");
  EXPECT_EQ(fs[0].arch, "sm_90a");
  ASSERT_EQ(fs[0].instructions.size(), 4u);
  EXPECT_EQ(fs[0].instructions[1], "@!P0 BRA 0x1c0");
  const Shape s = shape_of(fs[0]);
  EXPECT_EQ(s.ffma, 2);
  EXPECT_EQ(s.predicated_ffma, 1);
  EXPECT_EQ(s.branches, 1);
  // 0.265625 = coef_b(1) as an addend, 0.5 = coef_a(0) as a multiplier (as an addend it would be
  // coef_b(16)).
  EXPECT_EQ(s.ways_with_own_chain, (std::vector<int>{0, 1}));
  EXPECT_EQ(float_immediates("FFMA R0, R0, R5, -1.5e-05"), (std::vector<std::pair<int, double>>{{3, -1.5e-05}}));
  EXPECT_TRUE(float_immediates("FFMA R7, R3.reuse, R7, R4.reuse").empty());
  EXPECT_EQ(shape_of(fs[1]).indexed_branches, 1);
}

}  // namespace
}  // namespace roofbench
