// CPU DRAM bandwidth ceilings: read-only, write-only, copy, triad and update on all cores, over
// arrays 4-8x the last-level cache. The five share one file: they are one technique (STREAM).
// Run only these: roofbench ceilings --device cpu
#include <memory>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench/cpu_info.h"
#include "bench/host_buffer.h"
#include "kernels/ceilings/stream_ceilings.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- kernels
// Stores to fresh lines bypass the caches (non-temporal): without that, each written line is first
// read in (write-allocate) and a write-only kernel moves twice its bytes. Update writes back lines
// it has just read, so it uses ordinary stores. The read kernel sums 4096-element blocks in 64
// independent float lanes (exact for small integers; several vector registers, so the adds do
// not wait on each other) and adds the blocks in double.
constexpr std::int64_t kBlock = 4096, kLanes = 64;

__attribute__((target_clones("avx512f", "avx2", "default"))) float block_sum(const float* x, std::int64_t n) {
  float acc[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::int64_t j = 0; j < kLanes; ++j) acc[j] += x[i + j];
  float s = 0;
  for (; i < n; ++i) s += x[i];
  for (std::int64_t j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

class CpuStream final : public Instance {
 public:
  CpuStream(StreamOp op, const Params& p) : op_(op), n_(param(p, "n")) {
    if (n_ % 16 != 0) throw InputError("stream ceilings need n to be a multiple of 16");
    if (op_ != StreamOp::write) x_ = HostBuffer<float>(n_);
    if (op_ == StreamOp::triad) c_ = HostBuffer<float>(n_);
    if (op_ != StreamOp::read) y_ = HostBuffer<float>(n_);
  }

  void prepare(std::uint64_t seed) override {
    value_ = static_cast<float>(seed % 7 + 1);
    if (op_ != StreamOp::write) fill_small_ints(x_.data(), n_, seed);
    if (op_ == StreamOp::triad) fill_small_ints(c_.data(), n_, seed + 1);
    if (op_ != StreamOp::read) {
      float* y = y_.data();
      const float* x = x_.data();
      const bool from_x = op_ == StreamOp::update;  // update starts from x; the others poison y
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n_; ++i) y[i] = from_x ? x[i] : poison_f32();
    }
    sum_ = -1;
  }

  void run() override {
    const std::int64_t n = n_;
    if (op_ == StreamOp::read) {
      const float* x = x_.data();
      double total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
      for (std::int64_t b = 0; b < n; b += kBlock) total += block_sum(x + b, std::min(kBlock, n - b));
      sum_ = total;
      return;
    }
    const float* x = x_.data();
    const float* c = c_.data();
    float* y = y_.data();
    const float v = value_;
    if (op_ == StreamOp::update) {
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) y[i] = y[i] + 1.0f;
      return;
    }
#pragma omp parallel
    {
#if defined(__x86_64__)
      const __m128 vv = _mm_set1_ps(v), s = _mm_set1_ps(kTriadScalar);
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < n; i += 4) {
        __m128 r;
        if (op_ == StreamOp::write) r = vv;
        else if (op_ == StreamOp::copy) r = _mm_load_ps(x + i);
        else r = _mm_add_ps(_mm_load_ps(x + i), _mm_mul_ps(s, _mm_load_ps(c + i)));
        _mm_stream_ps(y + i, r);
      }
      _mm_sfence();
#else
#pragma omp for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i)
        y[i] = op_ == StreamOp::write ? v : op_ == StreamOp::copy ? x[i] : x[i] + kTriadScalar * c[i];
#endif
    }
  }

  Verification verify() override {
    if (op_ == StreamOp::read) return check_sum(sum_, exact_sum(x_.data(), n_), n_);
    return check_stream(op_, x_.data(), c_.data(), y_.data(), n_, value_);
  }

 private:
  StreamOp op_;
  std::int64_t n_;
  HostBuffer<float> x_, c_, y_;
  float value_ = 1;
  double sum_ = -1;
};

// ---------------------------------------------------------------- registration
// Arrays of at least 8x (quick: 4x) the last-level cache, rounded up to a power of two.
std::int64_t elements_for(std::size_t llc_multiple) {
  std::int64_t n = 1 << 20;
  while (static_cast<std::size_t>(n) * sizeof(float) < llc_multiple * cpu_info().llc_bytes) n *= 2;
  return n;
}

Variant make(StreamOp op) {
  Variant v = stream_ceiling_variant(op, Backend::cpu, "dram");
  v.summary = std::string("STREAM-style ") + op_name(op) + " on all cores";
  v.source = __FILE__;
  v.ceiling->method = "all cores, OpenMP static schedule, arrays of n floats (4-8x the last-level cache each), non-temporal stores to fresh lines";
  v.sizes = vector_sizes({elements_for(8)});
  v.quick_sizes = vector_sizes({elements_for(4)});
  v.test_sizes = vector_sizes({16, 4096 + 16, 1 << 20});
  v.make = [op](const Params& p) { return std::make_unique<CpuStream>(op, p); };
  return v;
}
ROOFBENCH_REGISTER(make(StreamOp::read));
ROOFBENCH_REGISTER(make(StreamOp::write));
ROOFBENCH_REGISTER(make(StreamOp::copy));
ROOFBENCH_REGISTER(make(StreamOp::triad));
ROOFBENCH_REGISTER(make(StreamOp::update));

}  // namespace
}  // namespace roofbench::ceilings
