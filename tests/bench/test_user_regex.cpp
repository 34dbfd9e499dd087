// bench/user_regex: one way to compile a pattern a user typed, safe on any input.
#include "bench/user_regex.h"

#include <gtest/gtest.h>

#include <string>

#include "roofbench/types.h"

namespace roofbench {
namespace {

std::string error_of(const std::string& option, const std::string& pattern) {
  try {
    (void)user_regex(option, pattern);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(UserRegex, EmptyMatchesEveryName) {
  const std::regex re = user_regex("--filter", "");
  EXPECT_TRUE(std::regex_search("gemm/naive/fp32/M:64", re));
  EXPECT_TRUE(std::regex_search("x", re));
}

TEST(UserRegex, MatchesAsEcmaScript) {
  const std::regex re = user_regex("--filter", "^gemm/(naive|wmma)/fp(16|32)");
  EXPECT_TRUE(std::regex_search("gemm/naive/fp32/M:64", re));
  EXPECT_TRUE(std::regex_search("gemm/wmma/fp16/M:64", re));
  EXPECT_FALSE(std::regex_search("gemm/smem_tiled/fp32/M:64", re));
  EXPECT_FALSE(std::regex_search("xgemm/naive/fp32", re));
}

TEST(UserRegex, ABadPatternNamesTheOptionAndThePattern) {
  const std::string e = error_of("--skip", "(unclosed");
  EXPECT_NE(e.find("--skip"), std::string::npos) << e;
  EXPECT_NE(e.find("(unclosed"), std::string::npos) << e;
  EXPECT_NE(e.find("not a valid regular expression"), std::string::npos) << e;
}

TEST(UserRegex, ATooLongPatternIsRefusedBeforeCompiling) {
  EXPECT_NO_THROW((void)user_regex("--filter", std::string(kMaxUserRegexLength, 'a')));
  const std::string e = error_of("--filter", std::string(kMaxUserRegexLength + 1, 'a'));
  EXPECT_NE(e.find("at most 512"), std::string::npos) << e;
}

// fuzz_command_line's one finding (UBSan: signed overflow in libstdc++'s regex compiler, reading
// a back-reference's digits), and its cousin in a repeat count: refused before compiling.
TEST(UserRegex, DigitsLibstdcxxWouldOverflowOnAreRefusedBeforeCompiling) {
  const std::string found = "^r\xea" "execuocc\\" + std::string(43, '8') + "\\\\c";
  EXPECT_NE(error_of("--filter", found).find("back-references"), std::string::npos);
  EXPECT_NE(error_of("--filter", "a{99999999999999999999}").find("repeat count over 1000"), std::string::npos);
  EXPECT_NE(error_of("--filter", "a{2,1001}").find("repeat count over 1000"), std::string::npos);
  EXPECT_NO_THROW((void)user_regex("--filter", "a{2,1000}"));
  EXPECT_NO_THROW((void)user_regex("--filter", "gemm/(naive|tiled)/fp32/M:1024\\b"));
  EXPECT_NO_THROW((void)user_regex("--filter", "a\\{99999\\}"));  // escaped braces are text
}

#if defined(__GLIBCXX__)
// Each count within bounds, their product not: libstdc++ stops at its state limit, and the
// message says why, quickly (the pattern's 10^6 copies are never made).
TEST(UserRegex, NestedRepeatsTooLargeOnceExpandedAreRefusedWithTheReason) {
  const std::string e = error_of("--filter", "(a{999}){999}");
  EXPECT_NE(e.find("not a valid regular expression"), std::string::npos) << e;
  EXPECT_NE(e.find("too large once its repeats are expanded"), std::string::npos) << e;
  EXPECT_NO_THROW((void)user_regex("--filter", "(a{9}){9}"));
}

TEST(UserRegex, BackReferencesAreRefusedWithTheReason) {
  const std::string e = error_of("--filter", "(a)\\1");
  EXPECT_NE(e.find("back-references"), std::string::npos) << e;
}

// (a|a)*b over a run of a's takes the backtracking executor 2^n steps and one stack frame per
// character; the polynomial executor answers at once. Without the flag this test does not end
// (n = 40: about 10^12 steps), and ctest's timeout fails it.
TEST(UserRegex, APathologicalPatternOverALongNameEnds) {
  const std::regex re = user_regex("--filter", "^(a|a)*b$");
  EXPECT_FALSE(std::regex_search(std::string(40, 'a'), re));
  EXPECT_TRUE(std::regex_search(std::string(40, 'a') + "b", re));
  // A name far longer than any benchmark's: no stack overflow either.
  EXPECT_FALSE(std::regex_search(std::string(100000, 'a'), user_regex("--filter", "^(a|b)*c")));
}
#endif

}  // namespace
}  // namespace roofbench
