#pragma once
// CUPTI_CHECK: the CUPTI member of the one error-check family (roofbench/cuda.h has CUDA's).
// The error keeps CUPTI's code, so callers can turn it into a reason a user can act on
// (explain_failure in roofline/cupti/host.h).
#include <cupti_result.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace roofbench::cupti {

struct CuptiError : std::runtime_error {
  CuptiError(CUptiResult code, std::string call, const std::string& what)
      : std::runtime_error(what), code(code), call(std::move(call)) {}
  CUptiResult code;
  std::string call;  // the CUPTI function that failed, e.g. "cuptiRangeProfilerStart"
};

inline std::string cupti_result_name(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

// The function's name: the expression up to its '('.
inline std::string cupti_call_name(const char* expr) {
  std::string e = expr;
  return e.substr(0, e.find('('));
}

[[noreturn]] inline void throw_cupti(CUptiResult r, const char* expr, const char* file, int line) {
  throw CuptiError(r, cupti_call_name(expr),
                   cupti_result_name(r) + " from " + expr + " at " + file + ":" + std::to_string(line));
}

#define CUPTI_CHECK(expr)                                                                                      \
  do {                                                                                                         \
    CUptiResult roofbench_cupti_ = (expr);                                                                     \
    if (roofbench_cupti_ != CUPTI_SUCCESS) ::roofbench::cupti::throw_cupti(roofbench_cupti_, #expr, __FILE__, \
                                                                           __LINE__);                          \
  } while (false)

// For destructors: report, never throw.
#define CUPTI_CHECK_NOEXCEPT(expr)                                                                    \
  do {                                                                                                \
    CUptiResult roofbench_cupti_ = (expr);                                                            \
    if (roofbench_cupti_ != CUPTI_SUCCESS)                                                            \
      std::fprintf(stderr, "roofbench: %s from %s at %s:%d\n",                                        \
                   ::roofbench::cupti::cupti_result_name(roofbench_cupti_).c_str(), #expr, __FILE__, \
                   __LINE__);                                                                         \
  } while (false)

// A CUPTI parameter struct: zeroed, with its size set (the size tells CUPTI which fields this
// build knows). CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params).
template <class T>
T params_of(std::size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}
#define CUPTI_PARAMS(T) ::roofbench::cupti::params_of<T>(T##_STRUCT_SIZE)

}  // namespace roofbench::cupti
