#pragma once
// cp.async (sm_80 on) for the tensor-core rungs that copy their tiles global -> shared without
// passing through registers (05_wmma.cu, 05_mma_sync.cu): 16-byte chunks, .cg (cached in L2 only).
#include <cuda_runtime.h>

namespace roofbench::gemm {

// A generic pointer into shared memory as the 32-bit shared-window address the instructions take.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared; or 16 zero bytes when `valid` is false (src-size 0 reads nothing).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async16_or_zeros(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
// The commit and the wait name "memory": shared memory that a plain C++ access (or a compiler
// builtin such as wmma::load_matrix_sync) reads after them is not read before them.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace roofbench::gemm
