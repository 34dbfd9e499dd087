#pragma once
// A regular expression a user types (empty: match everything) (--filter, --skip, --threshold-for REGEX=PCT,
// --benchmark_filter): compiled one way everywhere, so that no pattern can make a name match take
// exponential time or the process run out of stack (tests/fuzz/fuzz_command_line.cpp tries).
//  - ECMAScript syntax, as std::regex; at most kMaxUserRegexLength characters;
//  - with libstdc++, matched by its breadth-first executor (the __polynomial flag): time
//    polynomial in the name's length, where the default backtracking executor is exponential on
//    patterns such as (a|a)*b and recurses once per character. Back-references are refused.
// A bad pattern is an InputError that names the option.
#include <cstddef>
#include <regex>
#include <string>

namespace roofbench {

inline constexpr std::size_t kMaxUserRegexLength = 512;
inline constexpr int kMaxUserRegexRepeat = 1000;  // the largest n or m of {n,m}

std::regex user_regex(const std::string& option, const std::string& pattern);

}  // namespace roofbench
