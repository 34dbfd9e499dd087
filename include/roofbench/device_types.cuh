#pragma once
// The device type behind each host storage type (same bits; see roofbench/half.h), and the
// conversions kernels use to do their arithmetic in FP32 whatever they store.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "roofbench/half.h"

namespace roofbench {

template <class T>
struct DeviceTypeOf {
  using type = T;
};
template <>
struct DeviceTypeOf<half_t> {
  using type = __half;
};
template <>
struct DeviceTypeOf<bf16_t> {
  using type = __nv_bfloat16;
};
template <class T>
using device_t = typename DeviceTypeOf<T>::type;

__device__ __forceinline__ float to_float(float x) {
  return x;
}
__device__ __forceinline__ float to_float(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <class D>
__device__ __forceinline__ D from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

}  // namespace roofbench
