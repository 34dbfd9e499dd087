// The machine code the build made for the CPU kernels, read with objdump (binutils, which the
// compiler needs anyway): what a timed loop must be for its lesson to hold. Needs no GPU.
//
// The CPU divergence lesson weighs a mispredicted branch (about 15 cycles) against a body of four
// dependent FMAs (about 16). Built for plain x86-64, std::fma is a call into libm's fmaf, four
// calls per element, and the calls, not the branch, were what the three variants measured.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/kernels/object_files.h"

// A sanitized build (the asan preset: clang at -O1) or an unoptimized one (debug) is not the code a
// run times: clang at -O1 keeps one FMA chain after the branch that picks its constants, -O0
// unrolls nothing, and the sanitizers add calls. Their loops are held to the FMA instruction and no
// libm call, not to their shape.
#if defined(__SANITIZE_ADDRESS__)
#define ROOFBENCH_SHAPE_UNCHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROOFBENCH_SHAPE_UNCHECKED 1
#endif
#endif
#if !defined(__OPTIMIZE__)
#define ROOFBENCH_SHAPE_UNCHECKED 1
#endif

namespace {

using roofbench::testing::object_of;
using roofbench::testing::run_command;

struct X86Function {
  std::string name;  // demangled
  int fma_instructions = 0;  // scalar single precision: vfmadd132ss and its kin
  int libm_fma_calls = 0;
  int calls = 0;             // any call
};

// `objdump -d -r -C` of an object: "0000000000000120 <NAME>:" opens a function; an instruction
// "vfmadd132ss %xmm2,%xmm1,%xmm0" is a scalar FP32 FMA (the lesson's loops are scalar: a packed
// "ps" form would mean the compiler vectorized one of them); a call into libm shows as its
// relocation, "R_X86_64_PLT32	fmaf-0x4" (or "<fmaf@plt>" in a linked file, or a call of
// libstdc++'s std::fma wrapper where it was not inlined).
std::vector<X86Function> parse_objdump(const std::string& text) {
  static const std::regex header(R"(^[0-9a-f]+ <(.+)>:$)");
  static const std::regex fma(R"(\tv?fn?m(add|sub)(132|213|231)ss\b)");
  static const std::regex libm(R"((R_X86_64_PLT32|R_X86_64_PC32)\s+(fmaf?|std::fma\(.*\))-|<fmaf?@plt>)");
  static const std::regex call(R"(\tcall\b)");
  std::vector<X86Function> fns;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, header)) {
      fns.push_back({m[1], 0, 0});
      continue;
    }
    if (fns.empty()) continue;
    if (std::regex_search(line, fma)) ++fns.back().fma_instructions;
    if (std::regex_search(line, libm)) ++fns.back().libm_fma_calls;
    if (std::regex_search(line, call)) ++fns.back().calls;
  }
  return fns;
}

TEST(CpuCode, TheDivergenceLoopsRunTheFmaInstructionNotALibmCall) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86-64 only: the FMA loops carry an x86 target attribute";
#endif
  ASSERT_FALSE(std::string(ROOFBENCH_OBJDUMP).empty()) << "objdump (binutils) was not found when CMake ran";
  std::string why;
  const std::string object = object_of("divergence.cpp", &why);
  ASSERT_FALSE(object.empty()) << why;
  int status = 0;
  const std::string text = run_command("'" + std::string(ROOFBENCH_OBJDUMP) + "' -d -r -C --no-show-raw-insn '" +
                                           object + "' 2>&1",
                                       status);
  ASSERT_EQ(status, 0) << text.substr(0, 2000);
  int loops = 0;
  for (const X86Function& f : parse_objdump(text)) {
    const bool fma_loop = f.name.find("span_fma_instruction<") != std::string::npos;
    if (!fma_loop) continue;
    ++loops;
    const bool branchless = f.name.find("span_fma_instruction<true>") != std::string::npos;
    SCOPED_TRACE(f.name);
    EXPECT_EQ(f.libm_fma_calls, 0);
#ifdef ROOFBENCH_SHAPE_UNCHECKED
    EXPECT_GE(f.fma_instructions, 1);
    (void)branchless;
#else
    // Branchy (uniform, divergent): each arm its own chain of four; branchless: one chain. No
    // call of anything: the whole span is the loop.
    EXPECT_GE(f.fma_instructions, branchless ? 4 : 8);
    EXPECT_EQ(f.calls, 0);
#endif
  }
  EXPECT_EQ(loops, 2) << "the two FMA-instruction loops (branchy and branchless) were not found in " << object;
}

// The parser against lines objdump prints, so that a format it misreads fails here, not silently.
TEST(CpuCode, TheObjdumpReaderCountsFmasAndLibmCalls) {
  const std::string text =
      "0000000000000990 <void ns::span_fma_instruction<false>(ns::Arrays const&, long, long)>:\n"
      "     994:\tvmovss (%rcx,%rdx,4),%xmm0\n"
      "     99b:\tvfmadd132ss %xmm2,%xmm1,%xmm0\n"
      "     9a0:\tvfmadd213ps %ymm2,%ymm1,%ymm0\n"
      "     9a5:\tvfnmadd231ss %xmm2,%xmm1,%xmm0\n"
      "00000000000007a0 <void ns::span_libm_fma<false>(ns::Arrays const&, long, long)>:\n"
      "     7c0:\tcall   7c5 <void ns::span_libm_fma<false>(ns::Arrays const&, long, long)+0x25>\n"
      "\t\t\t7c1: R_X86_64_PLT32\tfmaf-0x4\n"
      "     7d0:\tcall   1030 <fmaf@plt>\n"
      "     7e0:\tcall   1040 <fmal@plt>\n"
      "     7f0:\tcall   7f5 <void ns::span_libm_fma<false>(ns::Arrays const&, long, long)+0x75>\n"
      "\t\t\t7f1: R_X86_64_PLT32\tstd::fma(float, float, float)-0x4\n";
  const std::vector<X86Function> fns = parse_objdump(text);
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].name, "void ns::span_fma_instruction<false>(ns::Arrays const&, long, long)");
  EXPECT_EQ(fns[0].fma_instructions, 2);  // the packed one is not the loops' scalar FMA
  EXPECT_EQ(fns[0].libm_fma_calls, 0);
  EXPECT_EQ(fns[0].calls, 0);
  EXPECT_EQ(fns[1].fma_instructions, 0);
  EXPECT_EQ(fns[1].libm_fma_calls, 3);
  EXPECT_EQ(fns[1].calls, 4);
}

}  // namespace
