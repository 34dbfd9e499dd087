#pragma once
// Host-side storage types for FP16 and BF16: the same 16 bits as CUDA's __half and
// __nv_bfloat16 (device code reinterprets the pointers), with round-to-nearest-even conversion
// from float. They exist so that inputs are made, and outputs checked, by plain C++ code that
// builds without the CUDA toolkit; arithmetic always happens after conversion to float/double.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "roofbench/types.h"

namespace roofbench {

namespace detail {
inline std::uint32_t float_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}
inline float bits_float(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
}  // namespace detail

// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits; largest finite 65504.
inline std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t x = detail::float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN stays NaN, inf stays inf
  if (a >= 0x477ff000u) return sign | 0x7c00u;                                // >= 65520 rounds to inf
  if (a < 0x38800000u) {
    // Below the smallest normal half (2^-14): a multiple of 2^-24. Scaling by 2^24 is exact in
    // float, and nearbyint rounds to nearest even in the default rounding mode; a result of
    // 0x400 is the smallest normal, which is the right bits too.
    return sign | static_cast<std::uint16_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
  }
  std::uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13));
  const std::uint32_t rest = a & 0x1fffu;  // the 13 bits dropped
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is correct
  return static_cast<std::uint16_t>(sign | h);
}

inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);  // zero or subnormal, exact
    return sign ? -v : v;
  }
  if (e == 31) return detail::bits_float(sign | 0x7f800000u | (m << 13));
  return detail::bits_float(sign | ((e - 15 + 127) << 23) | (m << 13));
}

// bfloat16: the top 16 bits of a float (8 exponent, 7 mantissa bits).
inline std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t x = detail::float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_float(std::uint16_t b) {
  return detail::bits_float(static_cast<std::uint32_t>(b) << 16);
}

// Storage types: explicit conversions only, so that no arithmetic happens in 16 bits by accident.
struct half_t {
  std::uint16_t bits = 0;
  half_t() = default;
  explicit half_t(double v) : bits(float_to_half_bits(static_cast<float>(v))) {}
  explicit operator double() const { return half_bits_to_float(bits); }
  explicit operator float() const { return half_bits_to_float(bits); }
};

struct bf16_t {
  std::uint16_t bits = 0;
  bf16_t() = default;
  explicit bf16_t(double v) : bits(float_to_bf16_bits(static_cast<float>(v))) {}
  explicit operator double() const { return bf16_bits_to_float(bits); }
  explicit operator float() const { return bf16_bits_to_float(bits); }
};

static_assert(sizeof(half_t) == 2 && sizeof(bf16_t) == 2, "same layout as __half and __nv_bfloat16");

// The precision a storage type stands for.
template <class T>
constexpr Precision precision_of();
template <>
constexpr Precision precision_of<double>() {
  return Precision::fp64;
}
template <>
constexpr Precision precision_of<float>() {
  return Precision::fp32;
}
template <>
constexpr Precision precision_of<half_t>() {
  return Precision::fp16;
}
template <>
constexpr Precision precision_of<bf16_t>() {
  return Precision::bf16;
}

}  // namespace roofbench
