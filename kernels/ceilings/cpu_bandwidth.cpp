// CPU bandwidth ceilings: read-only, write-only, copy, triad and update on all cores, over
// arrays of 8x the last-level cache where memory allows (DRAM); and the same read kernel over working sets that
// fit in L1, L2 and L3, read again and again (the cache levels of the hierarchical roofline).
// They share one file: they are one technique (STREAM).
// Run only these: roofbench ceilings --device cpu
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "roofbench/cpu.h"
#include "roofbench/host_buffer.h"
#include "kernels/ceilings/stream_ceilings.h"

namespace roofbench::ceilings {
namespace {

// ---------------------------------------------------------------- kernels
// A roof must be the best the machine does, so these use the widest vectors the CPU has
// (AVX-512, else AVX2, picked at run time): with 16-byte SSE operations a core runs out of
// load/store slots before memory runs out of bandwidth. Stores to fresh lines bypass the caches
// (non-temporal): without that, each written line is first read in (write-allocate) and a
// write-only kernel moves twice its bytes. Update writes back lines it has just read, so it uses
// ordinary stores. Each thread takes one contiguous chunk (a multiple of 16 floats). The read
// kernel keeps 8 independent vector sums, exact for small integers, and finishes in double.
struct Chunk {
  std::int64_t begin, end;
};
Chunk my_chunk(std::int64_t n) {
  const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
  const std::int64_t per = ((n / 16 + threads - 1) / threads) * 16;
  const std::int64_t b = std::min(n, t * per);
  return {b, std::min(n, b + per)};
}

// One set of the five kernels per instruction set; `W` floats per vector, `R` vectors in flight
// for the read. Tails (never more than 15 floats with n a multiple of 16) are done scalar.
#define ROOFBENCH_STREAM_KERNELS(SFX, TARGET, VEC, W, LOAD, STORE, STREAM, ADD, MUL, SET1, ZERO, FENCE)           \
  __attribute__((target(TARGET))) double read_##SFX(const float* x, Chunk c) {                                    \
    constexpr int R = 8;                                                                                          \
    VEC acc[R];                                                                                                   \
    for (int r = 0; r < R; ++r) acc[r] = ZERO();                                                                  \
    std::int64_t i = c.begin;                                                                                     \
    for (; i + R * W <= c.end; i += R * W)                                                                        \
      for (int r = 0; r < R; ++r) acc[r] = ADD(acc[r], LOAD(x + i + r * W));                                      \
    alignas(64) float lanes[R * W];                                                                               \
    for (int r = 0; r < R; ++r) STORE(lanes + r * W, acc[r]);                                                     \
    double s = 0;                                                                                                 \
    for (float v : lanes) s += v;                                                                                 \
    for (; i < c.end; ++i) s += x[i];                                                                             \
    return s;                                                                                                     \
  }                                                                                                               \
  /* The same over and over, accumulating across passes: the reduction runs once, not per pass. */              \
  __attribute__((target(TARGET))) double read_passes_##SFX(const float* x, Chunk c, std::int64_t passes) {        \
    constexpr int R = 8;                                                                                          \
    VEC acc[R];                                                                                                   \
    for (int r = 0; r < R; ++r) acc[r] = ZERO();                                                                  \
    std::int64_t i = c.begin;                                                                                     \
    for (std::int64_t k = 0; k < passes; ++k)                                                                     \
      for (i = c.begin; i + R * W <= c.end; i += R * W)                                                           \
        for (int r = 0; r < R; ++r) acc[r] = ADD(acc[r], LOAD(x + i + r * W));                                    \
    alignas(64) float lanes[R * W];                                                                               \
    for (int r = 0; r < R; ++r) STORE(lanes + r * W, acc[r]);                                                     \
    double s = 0;                                                                                                 \
    for (float v : lanes) s += v;                                                                                 \
    for (; i < c.end; ++i) s += static_cast<double>(passes) * x[i];                                               \
    return s;                                                                                                     \
  }                                                                                                               \
  __attribute__((target(TARGET))) void write_##SFX(float* y, float v, Chunk c) {                                  \
    const VEC vv = SET1(v);                                                                                       \
    std::int64_t i = c.begin;                                                                                     \
    for (; i + W <= c.end; i += W) STREAM(y + i, vv);                                                             \
    for (; i < c.end; ++i) y[i] = v;                                                                              \
    FENCE();                                                                                                      \
  }                                                                                                               \
  __attribute__((target(TARGET))) void copy_##SFX(const float* x, float* y, Chunk c) {                            \
    std::int64_t i = c.begin;                                                                                     \
    for (; i + W <= c.end; i += W) STREAM(y + i, LOAD(x + i));                                                    \
    for (; i < c.end; ++i) y[i] = x[i];                                                                           \
    FENCE();                                                                                                      \
  }                                                                                                               \
  __attribute__((target(TARGET))) void triad_##SFX(const float* b, const float* c3, float* a, float s, Chunk c) { \
    const VEC vs = SET1(s);                                                                                       \
    std::int64_t i = c.begin;                                                                                     \
    for (; i + W <= c.end; i += W) STREAM(a + i, ADD(LOAD(b + i), MUL(vs, LOAD(c3 + i))));                        \
    for (; i < c.end; ++i) a[i] = b[i] + s * c3[i];                                                               \
    FENCE();                                                                                                      \
  }                                                                                                               \
  __attribute__((target(TARGET))) void update_##SFX(float* y, Chunk c) {                                          \
    const VEC one = SET1(1.0f);                                                                                   \
    std::int64_t i = c.begin;                                                                                     \
    for (; i + W <= c.end; i += W) STORE(y + i, ADD(LOAD(y + i), one));                                           \
    for (; i < c.end; ++i) y[i] += 1.0f;                                                                          \
  }

#if defined(__x86_64__)
ROOFBENCH_STREAM_KERNELS(avx512, "avx512f", __m512, 16, _mm512_load_ps, _mm512_store_ps, _mm512_stream_ps,
                         _mm512_add_ps, _mm512_mul_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm_sfence)
ROOFBENCH_STREAM_KERNELS(avx2, "avx2", __m256, 8, _mm256_load_ps, _mm256_store_ps, _mm256_stream_ps, _mm256_add_ps,
                         _mm256_mul_ps, _mm256_set1_ps, _mm256_setzero_ps, _mm_sfence)
#endif
#undef ROOFBENCH_STREAM_KERNELS

// Portable fallback: plain loops the compiler vectorizes for the baseline instruction set.
double read_plain(const float* x, Chunk c) {
  double s = 0;
  for (std::int64_t i = c.begin; i < c.end; ++i) s += x[i];
  return s;
}
double read_passes_plain(const float* x, Chunk c, std::int64_t passes) {
  double s = 0;
  for (std::int64_t k = 0; k < passes; ++k) s += read_plain(x, c);
  return s;
}
void write_plain(float* y, float v, Chunk c) {
  for (std::int64_t i = c.begin; i < c.end; ++i) y[i] = v;
}
void copy_plain(const float* x, float* y, Chunk c) {
  for (std::int64_t i = c.begin; i < c.end; ++i) y[i] = x[i];
}
void triad_plain(const float* b, const float* c3, float* a, float s, Chunk c) {
  for (std::int64_t i = c.begin; i < c.end; ++i) a[i] = b[i] + s * c3[i];
}
void update_plain(float* y, Chunk c) {
  for (std::int64_t i = c.begin; i < c.end; ++i) y[i] += 1.0f;
}

enum class Isa { avx512, avx2, plain };
Isa isa() {
  const std::string& s = cpu_info().isa;
  return s == "avx512f" ? Isa::avx512 : s == "avx2+fma" ? Isa::avx2 : Isa::plain;
}

#if defined(__x86_64__)
#define ROOFBENCH_DISPATCH(NAME, ...)               \
  (isa_ == Isa::avx512 ? NAME##_avx512(__VA_ARGS__) \
   : isa_ == Isa::avx2 ? NAME##_avx2(__VA_ARGS__)   \
                       : NAME##_plain(__VA_ARGS__))
#else
#define ROOFBENCH_DISPATCH(NAME, ...) NAME##_plain(__VA_ARGS__)
#endif

// ---------------------------------------------------------------- launcher
class CpuStream final : public Instance {
 public:
  // vendor: the C library's memcpy in place of the copy loop (the copy ceiling's reference).
  CpuStream(StreamOp op, const Params& p, bool vendor = false)
      : op_(op), n_(param(p, "n")), isa_(isa()), vendor_(vendor && op == StreamOp::copy) {
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
    const float* x = x_.data();
    const float* c = c_.data();
    float* y = y_.data();
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
      const Chunk ch = my_chunk(n_);
      switch (op_) {
        case StreamOp::read:
          total += ROOFBENCH_DISPATCH(read, x, ch);
          break;
        case StreamOp::write:
          ROOFBENCH_DISPATCH(write, y, value_, ch);
          break;
        case StreamOp::copy:
          if (vendor_)
            std::memcpy(y + ch.begin, x + ch.begin, static_cast<std::size_t>(ch.end - ch.begin) * sizeof(float));
          else
            ROOFBENCH_DISPATCH(copy, x, y, ch);
          break;
        case StreamOp::triad:
          ROOFBENCH_DISPATCH(triad, x, c, y, kTriadScalar, ch);
          break;
        case StreamOp::update:
          ROOFBENCH_DISPATCH(update, y, ch);
          break;
      }
    }
    sum_ = total;
  }

  Verification verify() override {
    if (op_ == StreamOp::read) return check_sum(sum_, exact_sum(x_.data(), n_), n_);
    return check_stream(op_, x_.data(), c_.data(), y_.data(), n_, value_);
  }

 private:
  StreamOp op_;
  std::int64_t n_;
  Isa isa_;
  bool vendor_;
  HostBuffer<float> x_, c_, y_;
  float value_ = 1;
  double sum_ = -1;
};

// The cache levels: each thread reads its own slice of `kib_per_thread` KiB `passes` times.
// After the first pass (cold, flushed by the harness) the slice is served by the level it fits
// in, so the rate is that level's read bandwidth to within 1/passes.
class CpuCacheRead final : public Instance {
 public:
  explicit CpuCacheRead(const Params& p)
      : per_thread_(param(p, "kib_per_thread") * 1024 / static_cast<std::int64_t>(sizeof(float))),
        passes_(param(p, "passes")), threads_(omp_get_max_threads()), isa_(isa()) {
    if (per_thread_ % 16 != 0 || per_thread_ <= 0 || passes_ <= 0)
      throw InputError("cache read ceilings need a positive multiple of 64 bytes per thread and passes > 0");
    x_ = HostBuffer<float>(per_thread_ * threads_);
  }
  void prepare(std::uint64_t seed) override {
    fill_small_ints(x_.data(), per_thread_ * threads_, seed);
    sum_ = -1;
  }
  void run() override {
    const float* x = x_.data();
    const std::int64_t per = per_thread_, passes = passes_;
    double total = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : total)
    {
      const std::int64_t t = omp_get_thread_num();
      const Chunk ch{t * per, (t + 1) * per};
      total += ROOFBENCH_DISPATCH(read_passes, x, ch, passes);
    }
    sum_ = total;
  }
  Verification verify() override {
    return check_sum(sum_, static_cast<double>(passes_) * exact_sum(x_.data(), per_thread_ * threads_),
                     per_thread_ * threads_ * passes_);
  }

 private:
  std::int64_t per_thread_, passes_;
  int threads_;
  Isa isa_;
  HostBuffer<float> x_;
  double sum_ = -1;
};

// ---------------------------------------------------------------- registration
// Arrays of at least 8x the last-level cache, rounded up to a power of two (also in --quick:
// at 4x this VM-hosted CPU measured up to a third less, so a smaller array gives a wrong roof),
// unless triad's three arrays would then take more than an eighth of the machine's memory. A VM
// may report its host's whole L3: one 2-vCPU Xeon VM here reported 260 MiB, for which 8x is three
// arrays of 2 GiB, and two runs side by side (ctest -j 2) went out of its 24 GiB. Then the
// largest power of two that fits, and the ceiling's method says how many times the LLC that is.
// On that VM, 512 MiB arrays (2x) read, wrote, copied and updated within 5% of 2 GiB ones (8x).
constexpr std::size_t kLlcMultiple = 8;
constexpr std::size_t kMemoryShare = 8;  // at most 1/kMemoryShare of memory for the largest set
constexpr std::size_t kMaxArrays = 3;    // triad: x, c, y

std::int64_t dram_elements() {
  const CpuInfo& cpu = cpu_info();
  std::int64_t n = 1 << 20;
  while (static_cast<std::size_t>(n) * sizeof(float) < kLlcMultiple * cpu.llc_bytes) n *= 2;
  if (cpu.memory_bytes > 0)
    while (n > (1 << 20) && kMaxArrays * static_cast<std::size_t>(n) * sizeof(float) * kMemoryShare > cpu.memory_bytes)
      n /= 2;
  return n;
}

std::string dram_arrays_method(std::int64_t n) {
  const double multiple = static_cast<double>(n) * sizeof(float) / static_cast<double>(cpu_info().llc_bytes);
  return fmt::format("arrays of {} floats ({:.1f}x the last-level cache{})", n, multiple,
                     multiple < kLlcMultiple ? fmt::format("; {}x would take more than 1/{} of memory", kLlcMultiple,
                                                           kMemoryShare)
                                             : "");
}

Variant make(StreamOp op) {
  Variant v = stream_ceiling_variant(op, Backend::cpu, Level::dram);
  v.summary = std::string("STREAM-style ") + op_name(op) + " on all cores, " + cpu_info().isa + " vectors";
  const std::int64_t n = dram_elements();
  v.ceiling->method = "all cores, one contiguous chunk per thread, " + cpu_info().isa +
                      " vectors, non-temporal stores to fresh lines, " + dram_arrays_method(n);
  v.sizes = vector_sizes({n});
  v.quick_sizes = v.sizes;
  v.test_sizes = vector_sizes({16, 4096 + 16, (1 << 20) + 48});
  v.ceiling->sustained = op == StreamOp::read;
  // Measured once more in samples as brief as a kernel's above it, from a flushed cache: arrays
  // down to twice all the last-level caches together (never below its own size where memory kept
  // that smaller), in whole vectors. Its stores are non-temporal and its reads cold, so a smaller
  // array measures DRAM as well. Not update: its ordinary stores leave up to a cache's worth of
  // dirty lines unwritten when a sample's clock stops, which a brief sample would count as moved.
  if (op != StreamOp::update) {
    const CpuInfo& cpu = cpu_info();
    const std::size_t llcs = static_cast<std::size_t>(std::max(1, cpu.threads / std::max(1, cpu.llc_sharers)));
    const auto floor = static_cast<std::int64_t>(2 * cpu.llc_bytes * llcs / sizeof(float));
    v.ceiling->repeat_param = "n";
    v.ceiling->repeat_step = 16;
    v.ceiling->repeat_min = std::min<std::int64_t>(n, std::max<std::int64_t>(16, (floor + 15) / 16 * 16));
    v.ceiling->repeat_needs_flush = true;
  }
  v.make = [op](const Params& p) { return std::make_unique<CpuStream>(op, p); };
  return v;
}
ROOFBENCH_REGISTER(make(StreamOp::read));
ROOFBENCH_REGISTER(make(StreamOp::write));
ROOFBENCH_REGISTER(make(StreamOp::copy));
ROOFBENCH_REGISTER(make(StreamOp::triad));
ROOFBENCH_REGISTER(make(StreamOp::update));

// The vendor's copy beside the suite's: the C library's memcpy, each thread copying its own chunk
// of the same arrays. The reports give the copy ceiling as a ratio to it (a copy loop slower than
// memcpy is no roof); it is a roof of its own where it is the faster.
Variant make_memcpy() {
  const std::int64_t n = dram_elements();
  Variant v = bandwidth_ceiling_variant(
      "dram_memcpy", Backend::cpu, Level::dram,
      "all cores, std::memcpy of one contiguous chunk per thread (the C library's choice of stores), " +
          dram_arrays_method(n));
  v.ceiling->reference_for = stream_ceiling_name(StreamOp::copy, Level::dram);
  v.work = stream_work(StreamOp::copy);
  v.summary = "the C library's memcpy on all cores, a chunk per thread: the reference for the copy ceiling";
  v.sizes = vector_sizes({n});
  v.quick_sizes = v.sizes;
  v.test_sizes = vector_sizes({16, 4096 + 16, (1 << 20) + 48});
  v.make = [](const Params& p) { return std::make_unique<CpuStream>(StreamOp::copy, p, /*vendor=*/true); };
  return v;
}
ROOFBENCH_REGISTER(make_memcpy());

// Half of each level's share per thread: its size over the threads that share it (SMT siblings
// share a core's L1 and L2; an L3 is shared by its core complex, which on many CPUs is not the
// whole chip), so that every slice stays resident beside the stack and the loop; enough passes to
// move about 1 GiB per run.
std::int64_t cache_kib_per_thread(std::size_t bytes, int sharers) {
  const int threads = cpu_info().threads;
  return static_cast<std::int64_t>(bytes / 2 / static_cast<std::size_t>(std::clamp(sharers, 1, threads)) / 1024);
}

Variant make_cache(Level level, std::int64_t kib_per_thread) {
  Variant v = bandwidth_ceiling_variant(
      to_string(level) + "_read", Backend::cpu, level,
      "all cores, each summing its own slice (half of the level's share per thread) over and over with " +
          cpu_info().isa + " vectors; the first pass is cold");
  const int threads = cpu_info().threads;
  v.work = Work().read("each thread's own slice, summed",
                       Count::constant("threads", threads) * Count::param("kib_per_thread"), 1024,
                       Count::param("passes"));
  v.summary =
      "read-only over a working set that fits in " + to_string(level) + ", on all cores, " + cpu_info().isa + " vectors";
  // Where a thread's share of the L3 is no larger than its share of the L2 (many cores, a small
  // L3 per core), its slice fits in the L2 as well: the ceiling is the L2's as much as the L3's.
  const CpuInfo& cpu = cpu_info();
  if (level == Level::l3 && static_cast<std::size_t>(kib_per_thread) * 1024 <=
                                cpu.l2_bytes / static_cast<std::size_t>(std::max(1, cpu.l2_sharers)))
    v.summary += " (here a thread's L3 slice fits in its share of the L2: this reads the L2 as much as the L3)";
  kib_per_thread = std::max<std::int64_t>(4, kib_per_thread / 4 * 4);  // whole 4 KiB pages: a multiple of 64 floats
  const std::int64_t passes =
      std::max<std::int64_t>(4, (std::int64_t{1} << 30) / (static_cast<std::int64_t>(threads) * kib_per_thread * 1024));
  v.sizes = {{{"kib_per_thread", kib_per_thread}, {"passes", passes}}};
  v.quick_sizes = {{{"kib_per_thread", kib_per_thread}, {"passes", std::max<std::int64_t>(4, passes / 4)}}};
  v.test_sizes = {{{"kib_per_thread", 4}, {"passes", 3}}, {{"kib_per_thread", kib_per_thread}, {"passes", 2}}};
  // Its first pass is cold (flushed before each sample): a brief pass keeps at least 4, of which
  // 3 read the level.
  v.ceiling->repeat_param = "passes";
  v.ceiling->repeat_min = 4;
  v.make = [](const Params& p) { return std::make_unique<CpuCacheRead>(p); };
  return v;
}
ROOFBENCH_REGISTER(make_cache(Level::l1, cache_kib_per_thread(cpu_info().l1d_bytes, cpu_info().l1d_sharers)));
ROOFBENCH_REGISTER(make_cache(Level::l2, cache_kib_per_thread(cpu_info().l2_bytes, cpu_info().l2_sharers)));
ROOFBENCH_REGISTER(make_cache(Level::l3, cache_kib_per_thread(cpu_info().llc_bytes, cpu_info().llc_sharers)));

}  // namespace
}  // namespace roofbench::ceilings
