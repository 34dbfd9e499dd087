#pragma once
// The STREAM-style bandwidth ceilings shared by the CPU and the GPU: read-only, write-only, copy,
// triad, and update (read and write back the same lines, which some memory systems serve faster
// than any of the other four: without it a read-modify-write kernel such as SAXPY beats its
// roof). Declarations and checks live here once; each backend supplies the kernels. Inputs are
// small integers stored as floats (0, 1, 2, 3), so sums are exact and every check is exact
// equality: a kernel that skips one element fails.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "roofbench/random.h"
#include "roofbench/variant.h"
#include "roofbench/verify.h"

namespace roofbench::ceilings {

enum class StreamOp { read, write, copy, triad, update };

inline constexpr float kTriadScalar = 3.0f;

inline const char* op_name(StreamOp op) {
  switch (op) {
    case StreamOp::read:
      return "read";
    case StreamOp::write:
      return "write";
    case StreamOp::copy:
      return "copy";
    case StreamOp::triad:
      return "triad";
    case StreamOp::update:
      return "update";
  }
  return "?";
}

// The ceiling's name: "dram_copy". A kernel whose pass has one STREAM shape names the ceiling of
// that shape by it (Work::phase), so both sides spell it here.
inline std::string stream_ceiling_name(StreamOp op, Level level) {
  return to_string(level) + "_" + op_name(op);
}

inline void fill_small_ints(float* x, std::int64_t n, std::uint64_t seed) {
  fill_uniform(x, n, seed, 0.0, 4.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::floor(x[i]);
}

inline double exact_sum(const float* x, std::int64_t n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

inline Verification check_sum(double got, double expected, std::int64_t n) {
  Checker chk(Tolerance{0, 0}, fmt::format("exact sum of {} integer-valued elements", n));
  chk.check(got, expected, 0, [] { return std::string("sum"); });
  return chk.finish();
}

// write: y[i] == value; copy: y[i] == x[i]; triad: y[i] == x[i] + s·c[i]; update (y += 1 in
// place, started from x): y[i] == x[i] + 1. Exact: everything is a small integer.
inline Verification check_stream(StreamOp op, const float* x, const float* c, const float* y, std::int64_t n,
                                 float value) {
  return check_all(Tolerance{0, 0}, "every element, exact", n, [&](Checker& chk, std::int64_t i) {
    double ref = 0;
    switch (op) {
      case StreamOp::write:
        ref = value;
        break;
      case StreamOp::copy:
        ref = x[i];
        break;
      case StreamOp::triad:
        ref = static_cast<double>(x[i]) + kTriadScalar * static_cast<double>(c[i]);
        break;
      case StreamOp::update:
        ref = static_cast<double>(x[i]) + 1.0;
        break;
      case StreamOp::read:
        break;
    }
    chk.check(y[i], ref, i);
  });
}

// What every bandwidth ceiling declares: FP32 data, no FLOPs, its memory level, and the spec the
// model reads (`method`, one line, goes into results.json).
inline Variant bandwidth_ceiling_variant(const std::string& name, Backend backend, Level level,
                                         const std::string& method) {
  Variant v;
  v.family = "ceiling";
  v.variant = name;
  v.reference = "the exact result of the same operation on integer-valued data";
  v.precision = Precision::fp32;
  v.backend = backend;
  v.unit = backend == Backend::cpu ? Unit::simd : Unit::simt;
  v.level = level;
  v.ceiling = CeilingSpec{name, CeilingKind::bandwidth, level, method};
  return v;
}

// The STREAM kernels' work, on n floats.
inline Work stream_work(StreamOp op) {
  const Count n = Count::param("n");
  switch (op) {
    case StreamOp::read:
      return Work().read<float>("x, summed (the adds are not counted)", n);
    case StreamOp::write:
      return Work().write<float>("y, filled", n);
    case StreamOp::copy:
      return Work().read<float>("x", n).write<float>("y = x", n);
    case StreamOp::triad:
      return Work().read<float>("b", n).read<float>("c", n).write<float>("a = b + s·c", n).flops(2 * n, "a multiply and an add");
    case StreamOp::update:
      return Work().read<float>("y", n).write<float>("y + 1, in place", n).flops(n, "an add");
  }
  return Work();
}

inline Variant stream_ceiling_variant(StreamOp op, Backend backend, Level level) {
  Variant v = bandwidth_ceiling_variant(stream_ceiling_name(op, level), backend, level, "");
  v.work = stream_work(op);
  return v;
}

}  // namespace roofbench::ceilings
