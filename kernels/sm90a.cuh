#pragma once
// What every sm_90a-only file shares: the guard that turns its kernels into traps for other
// entries of the architecture list, the host-side check that refuses other GPUs first, and the
// wgmma instructions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "roofbench/cuda.h"
#include "roofbench/types.h"

// wgmma, TMA and their kin exist only in sm_90a code. Device code guarded by
// `#ifdef ROOFBENCH_NO_SM90A` compiles to a trap for every other architecture in the list.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFBENCH_NO_SM90A 1
#endif

namespace roofbench {

// Variant::only_on for every sm_90a-only variant: the run leaves it out on other GPUs.
inline constexpr const char* kSm90Only = "9.0";

// Throws InputError naming `what` unless the current GPU is sm_90 (the only one sm_90a code runs on).
inline void require_sm90(const std::string& what) {
  int dev = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (major != 9 || minor != 0)
    throw InputError(fmt::format("{} is built for sm_90a (Hopper) only; this GPU is sm_{}{}", what, major, minor));
}

}  // namespace roofbench

// ---- wgmma (device side, sm_90a entries of the architecture list only)
#ifndef ROOFBENCH_NO_SM90A
namespace roofbench::sm90a {

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Shared-memory matrix descriptor for wgmma: start address, leading and stride byte offsets (all
// >> 4, 14 bits each), and the layout: unswizzled (0) or the 128-byte swizzle TMA writes (1 in
// bits 62-63).
enum class Swizzle { none = 0, b128 = 1 };
__device__ __forceinline__ std::uint64_t smem_desc(const void* p, unsigned lbo_bytes, unsigned sbo_bytes,
                                                   Swizzle swizzle) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) |
         static_cast<std::uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16 |
         static_cast<std::uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32 | static_cast<std::uint64_t>(swizzle) << 62;
}

// D(64xN, FP32 registers) += A(64x16) · B(16xN), both from shared memory through descriptors.
// kTransB = 0: B stored K-major (like A); 1: B stored MN-major (a row-major K x N matrix).
// One asm statement per shape and input type: wgmma takes its N/2 accumulators as operands.
template <int N, class T>
struct Wgmma;
// clang-format off
#define ROOFBENCH_ACC8(i) "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define ROOFBENCH_ACC64(i) ROOFBENCH_ACC8((i) + 0), ROOFBENCH_ACC8((i) + 8), ROOFBENCH_ACC8((i) + 16), ROOFBENCH_ACC8((i) + 24), ROOFBENCH_ACC8((i) + 32), ROOFBENCH_ACC8((i) + 40), ROOFBENCH_ACC8((i) + 48), ROOFBENCH_ACC8((i) + 56)
#define ROOFBENCH_WGMMA(N, T, PTX, REGS, A, B, TRANS, ACC, ...)                                     \
  template <>                                                                                      \
  struct Wgmma<N, T> {                                                                             \
    template <int kTransB>                                                                         \
    __device__ static __forceinline__ void run(float (&d)[N / 2], std::uint64_t a, std::uint64_t b,  \
                                               int accumulate) {                                   \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " ACC ", 0;\n"                                 \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " " REGS             \
                   ", " A ", " B ", p, 1, 1, 0, " TRANS ";\n}\n"                                      \
                   : __VA_ARGS__                                                                   \
                   : "l"(a), "l"(b), "n"(kTransB), "r"(accumulate));                               \
    }                                                                                              \
  };
#define ROOFBENCH_REGS64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define ROOFBENCH_REGS128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
ROOFBENCH_WGMMA(128, __half, "f16", ROOFBENCH_REGS64, "%64", "%65", "%66", "%67", ROOFBENCH_ACC64(0))
ROOFBENCH_WGMMA(128, __nv_bfloat16, "bf16", ROOFBENCH_REGS64, "%64", "%65", "%66", "%67", ROOFBENCH_ACC64(0))
ROOFBENCH_WGMMA(256, __half, "f16", ROOFBENCH_REGS128, "%128", "%129", "%130", "%131", ROOFBENCH_ACC64(0),
                ROOFBENCH_ACC64(64))
ROOFBENCH_WGMMA(256, __nv_bfloat16, "bf16", ROOFBENCH_REGS128, "%128", "%129", "%130", "%131", ROOFBENCH_ACC64(0),
                ROOFBENCH_ACC64(64))
#undef ROOFBENCH_WGMMA
#undef ROOFBENCH_REGS64
#undef ROOFBENCH_REGS128
#undef ROOFBENCH_ACC64
#undef ROOFBENCH_ACC8
// clang-format on

// ---- mbarriers in shared memory, for TMA's completion and a pipeline's hand-offs
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarriers
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// A wait that never ends (a TMA that delivers fewer bytes than expected, a phase mixed up) would
// hang the process, and with it the whole run. A wait longer than kHangNs, far beyond any real
// one, traps instead: the run records the error and names this benchmark (bench/gbench_runner.cpp).
constexpr unsigned long long kHangNs = 10'000'000'000ull;
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned long long start = 0;
  for (unsigned spins = 0;; ++spins) {
    unsigned done = 0;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    if (done) return;
    if (spins == 0)
      start = global_ns();
    else if (spins % 1024 == 0 && global_ns() - start > kHangNs)
      __trap();
  }
}

// accumulate = 0 overwrites D (D = A·B), so the accumulators need no zeroing first.
template <int N, int kTransB, class T>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b,
                                             bool accumulate = true) {
  Wgmma<N, T>::template run<kTransB>(d, desc_a, desc_b, accumulate ? 1 : 0);
}

}  // namespace roofbench::sm90a
#endif  // ROOFBENCH_NO_SM90A
