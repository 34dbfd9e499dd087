// vmath.h's loops for AVX-512F, compiled with -mavx512f (CMakeLists.txt); run only where
// cpu_info() says the CPU has it.
#include <immintrin.h>
#include <cstdint>
#include <cstring>
#include <sleef.h>

#include "kernels/elementwise/vmath.h"

#define VMATH_NS avx512
#define VMATH_ISA "avx512f"
#define VMATH_W 16
typedef float VEC __attribute__((vector_size(64)));
#define VSIN Sleef_sinf16_u10avx512f
#define VCOS Sleef_cosf16_u10avx512f
#define VSINCOS Sleef_sincosf16_u10avx512f
#define VTANH Sleef_tanhf16_u10avx512f
#define VEXP Sleef_expf16_u10avx512f
#define VSTREAM(p, v) _mm512_stream_ps((p), (__m512)(v))
#include "kernels/elementwise/vmath_body.inc"
