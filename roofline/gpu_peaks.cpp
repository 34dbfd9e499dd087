#include "roofline/gpu_peaks.h"

#include <fmt/format.h>

#include <vector>

namespace roofbench {

namespace {

struct Rate {
  const char* cc;
  Precision precision;
  Unit unit;
  double flops_per_clock_per_sm;
  const char* why;
};

// From NVIDIA's architecture whitepapers (per-SM throughput tables).
const std::vector<Rate>& rates() {
  static const std::vector<Rate> r = {
      {"9.0", Precision::fp32, Unit::simt, 256, "128 FP32 lanes x 2"},
      {"9.0", Precision::fp64, Unit::simt, 128, "64 FP64 lanes x 2"},
      {"9.0", Precision::fp16, Unit::simt, 512, "128 lanes x half2 x 2"},
      {"9.0", Precision::bf16, Unit::simt, 512, "128 lanes x bfloat162 x 2"},
      {"9.0", Precision::fp16, Unit::tensor, 4096, "4 tensor cores x 512 dense FP16 FMA x 2"},
      {"9.0", Precision::bf16, Unit::tensor, 4096, "4 tensor cores x 512 dense BF16 FMA x 2"},
      {"8.0", Precision::fp32, Unit::simt, 128, "64 FP32 lanes x 2"},
      {"8.0", Precision::fp64, Unit::simt, 64, "32 FP64 lanes x 2"},
      {"8.0", Precision::fp16, Unit::simt, 512, "64 lanes x half2 x 2 x 2 (A100 runs FP16 at 4x FP32)"},
      {"8.0", Precision::bf16, Unit::simt, 256, "64 lanes x bfloat162 x 2"},
      {"8.0", Precision::fp16, Unit::tensor, 2048, "4 tensor cores x 256 dense FP16 FMA x 2"},
      {"8.0", Precision::bf16, Unit::tensor, 2048, "4 tensor cores x 256 dense BF16 FMA x 2"},
  };
  return r;
}

const Rate* find_rate(const std::string& cc, Precision p, Unit unit) {
  for (const auto& r : rates())
    if (cc == r.cc && p == r.precision && unit == r.unit) return &r;
  return nullptr;
}

}  // namespace

std::optional<double> gpu_flops_per_clock_per_sm(const std::string& cc, Precision p, Unit unit) {
  const Rate* r = find_rate(cc, p, unit);
  if (!r) return std::nullopt;
  return r->flops_per_clock_per_sm;
}

std::optional<ReferenceValue> gpu_theoretical(const nlohmann::json& device, const Ceiling& c, double sm_clock_hz) {
  if (sm_clock_hz <= 0) return std::nullopt;
  const auto cc = device.find("compute_capability");
  const auto sms = device.find("sm_count");
  if (cc == device.end() || sms == device.end() || !cc->is_string() || !sms->is_number_integer()) return std::nullopt;
  const std::string v = cc->get<std::string>();
  const auto n = sms->get<std::int64_t>();
  // The MUFU and shared-memory rates below hold from compute capability 5.0 through 9.0.
  const bool maxwell_to_hopper = !v.empty() && v[0] >= '5' && v.size() <= 3 && v <= "9.0";
  double per_sm = 0;  // per clock per SM
  std::string what;   // the rate, as the source says it
  if (c.kind == CeilingKind::transcendental && c.function &&
      (*c.function == "sin.approx" || *c.function == "ex2.approx")) {
    // The MUFU (special function unit) path: 16 results per clock per SM (CUDA C++ Programming
    // Guide, arithmetic instruction throughput: __sinf, __cosf, exp2f, __log2f, reciprocal, rsqrt).
    if (!maxwell_to_hopper) return std::nullopt;
    per_sm = 16;
    what = fmt::format("16 MUFU results/clock/SM (compute capability {})", v);
  } else if (c.kind == CeilingKind::bandwidth && c.level == Level::smem) {
    // Shared memory: 32 banks, each 4 bytes wide and one access per clock (CUDA C++ Programming
    // Guide, shared memory).
    if (!maxwell_to_hopper) return std::nullopt;
    per_sm = 128;
    what = fmt::format("128 B/clock/SM (32 banks x 4 bytes, compute capability {})", v);
  } else {
    if (c.kind != CeilingKind::compute || !c.precision || !c.unit) return std::nullopt;
    const Rate* r = find_rate(v, *c.precision, *c.unit);
    if (!r) return std::nullopt;
    per_sm = r->flops_per_clock_per_sm;
    what = fmt::format("{:g} FLOP/clock/SM ({})", r->flops_per_clock_per_sm, r->why);
  }
  return ReferenceValue{static_cast<double>(n) * per_sm * sm_clock_hz,
                        fmt::format("{} SMs x {} x {:.3f} GHz SM clock measured around the samples", n, what,
                                    sm_clock_hz / 1e9)};
}

}  // namespace roofbench
