// vmath.h: SLEEF's scalar functions for CPUs without AVX2 (and other architectures), and the
// choice of loops for this CPU.
#include "kernels/elementwise/vmath.h"

#include <sleef.h>

#include "roofbench/cpu.h"

namespace roofbench::vmath {

namespace scalar {
namespace {
struct Pair {
  float x, y;
};
inline Pair sincos1(float v) {
  const Sleef_float2 r = Sleef_sincosf_u10(v);
  return {r.x, r.y};
}
}  // namespace
#define VMATH_NS scalar
#define VMATH_ISA "scalar"
#define VMATH_W 1
typedef float VEC;
#define VSIN Sleef_sinf_u10
#define VCOS Sleef_cosf_u10
#define VSINCOS sincos1
#define VTANH Sleef_tanhf_u10
#define VEXP Sleef_expf_u10
}  // namespace scalar
}  // namespace roofbench::vmath

#include "kernels/elementwise/vmath_body.inc"

namespace roofbench::vmath {

#if defined(__x86_64__)
namespace avx512 {
extern const Ops kOps, kStreamingOps;
}
namespace avx2 {
extern const Ops kOps, kStreamingOps;
}
#endif

const Ops* ops_for(const std::string& isa, Stores stores) {
  const bool stream = stores == Stores::streaming;
#if defined(__x86_64__)
  if (isa == "avx512f") return stream ? &avx512::kStreamingOps : &avx512::kOps;
  if (isa == "avx2+fma") return stream ? &avx2::kStreamingOps : &avx2::kOps;
#endif
  if (isa == "scalar") return &scalar::kOps;  // no vector to stream
  return nullptr;
}

const Ops& ops(Stores stores) {
  const Ops* o = ops_for(cpu_info().isa, stores);
  return o ? *o : scalar::kOps;
}

Stores stores_for(std::size_t bytes) {
  const std::size_t llc = cpu_info().llc_bytes;
  return llc > 0 && bytes > llc ? Stores::streaming : Stores::cached;
}

}  // namespace roofbench::vmath
