#include "bench/user_regex.h"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "roofbench/types.h"

namespace roofbench {

namespace {
// What libstdc++'s compiler must not see: it reads the digits of a back-reference (\1 … \9…) and
// of a repeat count ({n,m}) into a long without a bound (signed overflow, found by
// fuzz_command_line: "\8888888888888888888888"), and it expands a repeat into that many copies
// of the repeated part. Back-references are refused here, before compiling; repeat counts stop at
// kMaxUserRegexRepeat.
void check_before_compiling(const std::string& option, const std::string& pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      const bool digit_after = i + 2 < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[i + 2]));
      if ((next >= '1' && next <= '9') || (next == '0' && digit_after))
        throw InputError(fmt::format("{} '{}': back-references (\\{}) are not taken", option, pattern, next));
      ++i;  // the escaped character is not a brace or another backslash
      continue;
    }
    if (c != '{') continue;
    std::size_t j = i + 1;
    while (j < pattern.size() && (std::isdigit(static_cast<unsigned char>(pattern[j])) || pattern[j] == ',')) {
      std::size_t k = j;
      while (k < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[k]))) ++k;
      if (k - j > 4 || (k > j && std::stoi(pattern.substr(j, k - j)) > kMaxUserRegexRepeat))
        throw InputError(fmt::format("{} '{}': a repeat count over {} is not taken", option, pattern,
                                     kMaxUserRegexRepeat));
      j = k == j ? j + 1 : k;
    }
  }
}
}  // namespace

std::regex user_regex(const std::string& option, const std::string& pattern) {
  if (pattern.size() > kMaxUserRegexLength)
    throw InputError(fmt::format("{}: the regular expression is {} characters long; at most {}", option,
                                 pattern.size(), kMaxUserRegexLength));
  check_before_compiling(option, pattern);
  auto flags = std::regex::ECMAScript;
#if defined(__GLIBCXX__)
  flags |= std::regex_constants::__polynomial;
#endif
  try {
    return std::regex(pattern.empty() ? "." : pattern, flags);
  } catch (const std::regex_error& e) {
    const char* why = e.code() == std::regex_constants::error_complexity ? " here (back-references are not taken)"
                      : e.code() == std::regex_constants::error_space
                          ? " here: too large once its repeats are expanded (nested counts multiply)"
                          : "";
    throw InputError(fmt::format("{} '{}' is not a valid regular expression{}", option, pattern, why));
  }
}

}  // namespace roofbench
