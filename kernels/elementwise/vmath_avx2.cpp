// vmath.h's loops for AVX2 with FMA, compiled with -mavx2 -mfma (CMakeLists.txt); run only
// where cpu_info() says the CPU has them.
#include <immintrin.h>
#include <cstdint>
#include <cstring>
#include <sleef.h>

#include "kernels/elementwise/vmath.h"

#define VMATH_NS avx2
#define VMATH_ISA "avx2+fma"
#define VMATH_W 8
typedef float VEC __attribute__((vector_size(32)));
#define VSIN Sleef_sinf8_u10avx2
#define VCOS Sleef_cosf8_u10avx2
#define VSINCOS Sleef_sincosf8_u10avx2
#define VTANH Sleef_tanhf8_u10avx2
#define VEXP Sleef_expf8_u10avx2
#define VSTREAM(p, v) _mm256_stream_ps((p), (__m256)(v))
#include "kernels/elementwise/vmath_body.inc"
