#include "bench/user_regex.h"

#include <fmt/format.h>

#include "roofbench/types.h"

namespace roofbench {

std::regex user_regex(const std::string& option, const std::string& pattern) {
  if (pattern.size() > kMaxUserRegexLength)
    throw InputError(fmt::format("{}: the regular expression is {} characters long; at most {}", option,
                                 pattern.size(), kMaxUserRegexLength));
  auto flags = std::regex::ECMAScript;
#if defined(__GLIBCXX__)
  flags |= std::regex_constants::__polynomial;
#endif
  try {
    return std::regex(pattern.empty() ? "." : pattern, flags);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("{} '{}' is not a valid regular expression{}", option, pattern,
                                 e.code() == std::regex_constants::error_complexity
                                     ? " here (back-references are not taken)"
                                     : ""));
  }
}

}  // namespace roofbench
