#include "roofbench/types.h"

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

std::string to_string(Unit u) {
  switch (u) {
    case Unit::simd:
      return "simd";
    case Unit::simt:
      return "simt";
    case Unit::tensor:
      return "tensor";
  }
  return "?";
}

std::string to_string(Level l) {
  switch (l) {
    case Level::dram:
      return "dram";
    case Level::l3:
      return "l3";
    case Level::l2:
      return "l2";
    case Level::l1:
      return "l1";
    case Level::smem:
      return "smem";
    case Level::pcie:
      return "pcie";
  }
  return "?";
}

std::string to_string(CeilingKind k) {
  switch (k) {
    case CeilingKind::bandwidth: return "bandwidth";
    case CeilingKind::compute: return "compute";
    case CeilingKind::transcendental: return "transcendental";
    case CeilingKind::launch: return "launch";
  }
  return "?";
}

Unit unit_from_string(const std::string& s) {
  for (Unit u : {Unit::simd, Unit::simt, Unit::tensor})
    if (to_string(u) == s) return u;
  throw InputError("unknown compute unit '" + s + "' (expected simd, simt or tensor)");
}

Level level_from_string(const std::string& s) {
  for (Level l : {Level::dram, Level::l3, Level::l2, Level::l1, Level::smem, Level::pcie})
    if (to_string(l) == s) return l;
  throw InputError("unknown memory level '" + s + "' (expected dram, l3, l2, l1, smem or pcie)");
}

CeilingKind ceiling_kind_from_string(const std::string& s) {
  if (s == "bandwidth") return CeilingKind::bandwidth;
  if (s == "compute") return CeilingKind::compute;
  if (s == "transcendental") return CeilingKind::transcendental;
  if (s == "launch") return CeilingKind::launch;
  throw InputError("unknown ceiling kind '" + s + "' (expected bandwidth, compute, transcendental or launch)");
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
