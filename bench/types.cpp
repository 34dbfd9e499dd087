#include "bench/types.h"

#include <cmath>

namespace roofbench {

std::string to_string(Precision p) {
  switch (p) {
    case Precision::fp64:
      return "fp64";
    case Precision::fp32:
      return "fp32";
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
  }
  return "?";
}

std::string to_string(Backend b) {
  return b == Backend::cpu ? "cpu" : "cuda";
}

Precision precision_from_string(const std::string& s) {
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::fp16, Precision::bf16})
    if (to_string(p) == s) return p;
  throw InputError("unknown precision '" + s + "' (expected fp64, fp32, fp16 or bf16)");
}

Backend backend_from_string(const std::string& s) {
  if (s == "cpu") return Backend::cpu;
  if (s == "cuda") return Backend::cuda;
  throw InputError("unknown backend '" + s + "' (expected cpu or cuda)");
}

double bytes_of(Precision p) {
  switch (p) {
    case Precision::fp64:
      return 8;
    case Precision::fp32:
      return 4;
    case Precision::fp16:
    case Precision::bf16:
      return 2;
  }
  return 0;
}

double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::fp64:
      return std::ldexp(1.0, -53);
    case Precision::fp32:
      return std::ldexp(1.0, -24);
    case Precision::fp16:
      return std::ldexp(1.0, -11);
    case Precision::bf16:
      return std::ldexp(1.0, -8);
  }
  return 0;
}

std::int64_t param(const Params& p, const std::string& key) {
  for (const auto& [k, v] : p)
    if (k == key) return v;
  throw std::out_of_range("no parameter '" + key + "'");
}

std::string params_to_string(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) {
    if (!s.empty()) s += '/';
    s += k + ':' + std::to_string(v);
  }
  return s;
}

}  // namespace roofbench
