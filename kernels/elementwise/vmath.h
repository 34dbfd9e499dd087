#pragma once
// The transcendental loops of the CPU elementwise families, vectorized with SLEEF at this CPU's
// widest ISA (AVX-512F, AVX2+FMA, else SLEEF's scalar functions), picked at run time.
//
// Accuracy: SLEEF's u10 functions, within 1.0 ULP, as accurate as glibc's scalar libm that the
// families called before; the 3.5-ULP (u35) ones are about 1.3x faster, but sin² + cos² = 1
// would then carry up to 2·3.5 ULP from sin and cos alone, near the check's 8-ULP bound, and the
// lessons compare forms of one computation, not two accuracies.
//
// Stores: each loop comes twice, with cached stores and with streaming (non-temporal) stores. A
// kernel whose arrays do not fit in the last-level cache streams its stores (stores_for): what
// it writes would be evicted before it is read again anyway, and a cached store first reads the
// line it overwrites (a write-allocate), so an output array costs two passes through DRAM instead
// of one. The math ceilings (kernels/ceilings/cpu_math.cpp) loop over an L1-sized buffer and keep
// cached stores.
//
// Each function does a contiguous chunk; callers split the range over OpenMP threads. Every
// element, the tail of a chunk included, goes through the same vector code (the tail through a
// padded vector), so a result does not depend on where a thread's chunk ends.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace roofbench::vmath {

enum class Stores { cached, streaming };

struct Ops {
  const char* isa;     // "avx512f", "avx2+fma" or "scalar": what the loops run on
  const char* stores;  // "cached" or "streaming" (the scalar loops always store cached)
  void (*sin)(const float* x, float* y, std::int64_t n);
  void (*cos)(const float* x, float* y, std::int64_t n);
  void (*sin2_plus_cos2)(const float* x, float* y, std::int64_t n);  // y = sin²x + cos²x
  // y = gelu(x + b), tanh form; b holds n values (one bias row, or a piece of one)
  void (*bias_gelu)(const float* x, const float* b, float* y, std::int64_t n);
  void (*gelu)(const float* t, float* y, std::int64_t n);
  // a1 = σ(x), a2 = σ(a1), y = σ(a2), σ(t) = 1 / (1 + exp(−t)); a1 and a2 may be null
  void (*sigmoid3)(const float* x, float* a1, float* a2, float* y, std::int64_t n);
  // gx = g · y(1−y) · a2(1−a2) · a1(1−a1), the three σ recomputed from x
  void (*sigmoid3_backward)(const float* x, const float* g, float* gx, std::int64_t n);
  // gx = g · y(1−y) · a2(1−a2) · a1(1−a1) from the stored a1, a2 and y
  void (*sigmoid3_backward_stored)(const float* g, const float* a1, const float* a2, const float* y, float* gx,
                                   std::int64_t n);
  void (*square)(const float* x, float* y, std::int64_t n);               // y = x²
  void (*add)(const float* a, const float* b, float* y, std::int64_t n);  // y = a + b
  // One function each, for the transcendental ceilings (kernels/ceilings/cpu_math.cpp): the calls
  // the families above make, with nothing else in the loop.
  void (*sincos)(const float* x, float* s, float* c, std::int64_t n);
  void (*exp)(const float* x, float* y, std::int64_t n);
  void (*tanh)(const float* x, float* y, std::int64_t n);
};

const Ops& ops(Stores stores = Stores::cached);  // for this CPU (cpu_info().isa)
// The loops built for `isa` ("avx512f", "avx2+fma", "scalar"), null where this build has none;
// for tests, which run each ISA the CPU has. Calling one the CPU lacks is an illegal instruction.
const Ops* ops_for(const std::string& isa, Stores stores = Stores::cached);
// Streaming when a kernel's arrays, `bytes` in all, exceed this CPU's last-level cache.
Stores stores_for(std::size_t bytes);

// Calls f(begin, length) once per OpenMP thread over [0, n), in contiguous chunks that start on
// a multiple of 16 elements (a whole vector at every ISA).
template <class F>
void split(std::int64_t n, F&& f) {
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t per = ((n + threads - 1) / threads + 15) / 16 * 16;
    const std::int64_t begin = std::min(n, t * per), end = std::min(n, begin + per);
    if (end > begin) f(begin, end - begin);
  }
}

}  // namespace roofbench::vmath
