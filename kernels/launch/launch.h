#pragma once
// The launch lesson, shared by its CPU and CUDA files: the same work cut three ways. A chain of
// `ops` tiny elementwise steps on a small vector, y ← y + c_k (step 0 reads x), is
//   per_op    one launch per step: `ops` kernel launches on a stream (GPU), `ops` OpenMP parallel
//             regions (CPU: a fork and a join are the CPU's launch);
//   batched   the same steps, launched once: replayed as one captured CUDA graph of `ops` kernel
//             nodes (GPU, variant `graph`), or run in one parallel region (CPU, `one_region`);
//   fused     one kernel (loop) doing every step in registers, the vector read and written once.
// When each step is tiny, the time goes to launching it, not to its bytes or FLOPs: the model
// places such forms against the launch ceilings (launches per second of empty work by the same
// path, kernels/ceilings/cpu_launch.cpp and gpu_launch.cu) and says "launch" where they bind.
//
// Exact arithmetic, so that the check can see one step missing or done twice: x holds multiples
// of 1/256 in [-1, 1] and c_k = (k mod 7 + 1)/1024, so every partial sum is a multiple of 1/1024
// below 8 in magnitude at the registered sizes (ops ≤ 1000; 13 significant bits), and below 2^13
// at the 2^20 steps chain_param allows (23 bits): FP32 holds it exactly; a missing step moves an
// element by at least 1/1024.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "roofbench/variant.h"
#include "roofbench/random.h"
#include "roofbench/verify.h"

namespace roofbench::launch {

enum class Form { per_op, batched, fused };

#if defined(__CUDACC__)
#define ROOFBENCH_HOST_DEVICE __host__ __device__
#else
#define ROOFBENCH_HOST_DEVICE
#endif
ROOFBENCH_HOST_DEVICE inline float step_constant(long long k) {
  return static_cast<float>(k % 7 + 1) * (1.0f / 1024.0f);
}

// Multiples of 1/256 in [-1, 1].
inline void fill_chain_input(float* x, std::int64_t n, std::uint64_t seed) {
  fill_uniform(x, n, seed, -1.0, 1.0);
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::round(x[i] * 256.0f) / 256.0f;
}

// `n` or `ops` of a chain, in [1, hi], checked before anything is allocated: a chain of no step or
// no element would leave y unwritten (and a grid of no block is a launch error).
inline std::int64_t chain_param(const Params& p, const char* name, std::int64_t hi) {
  const std::int64_t v = param(p, name);
  if (v < 1 || v > hi)
    throw std::invalid_argument("launch: " + std::string(name) + " = " + std::to_string(v) + " is outside [1, " +
                                std::to_string(hi) + "]");
  return v;
}

// n: any buffer the machine can hold. ops: up to 2^20 steps every partial sum stays a multiple of
// 1/1024 below 2^13, exact in FP32.
inline std::int64_t chain_n(const Params& p) { return chain_param(p, "n", std::int64_t{1} << 40); }
inline std::int64_t chain_ops(const Params& p) { return chain_param(p, "ops", std::int64_t{1} << 20); }

inline Verification check_chain(const float* x, const float* y, std::int64_t n, std::int64_t ops) {
  double sum = 0;  // exact: a multiple of 1/1024 below 2^13
  for (std::int64_t k = 0; k < ops; ++k) sum += step_constant(k);
  return check_all(Tolerance{0, 0}, "every element vs x + Σ c_k, exact in FP32 and FP64", n,
                   [&](Checker& chk, std::int64_t i) { chk.check(y[i], static_cast<double>(x[i]) + sum, i); });
}

// The declared work of a form on `backend`: the same steps in each (an add per element per step);
// per_op and batched move the vector through the cache once per step, fused once in all.
inline Variant launch_variant(Form f, Backend backend) {
  const bool gpu = backend == Backend::cuda;
  Variant v;
  v.family = "launch";
  v.variant = f == Form::per_op ? "per_op" : f == Form::fused ? "fused" : (gpu ? "graph" : "one_region");
  v.precision = Precision::fp32;
  v.backend = backend;
  v.unit = gpu ? Unit::simt : Unit::simd;
  // The vector stays in the cache between steps: L2 on the GPU (each step a new kernel), L1 on the
  // CPU (each thread's share of it). So it is timed warm, as the launch-rate roofs are: a flush
  // before each sample would add a DRAM round trip for its first step (and on the CPU a worker's
  // wake-up) to what is meant to be the cost of dispatch.
  v.level = gpu ? Level::l2 : Level::l1;
  v.warm = true;
  v.reference = "x + Σ c_k in FP64 (exact)";
  const Count n = Count::param("n"), ops = Count::param("ops");
  const std::string one = gpu ? "kernel" : "omp_region";
  Work w;
  if (f == Form::fused) {
    w.read<float>("x", n).write<float>("y", n);
  } else {
    w.read<float>("x, then y, once per step", n, ops).write<float>("y, once per step", n, ops);
  }
  w.flops(n * ops, "an add per element per step");
  if (f == Form::per_op) w.launches(one, ops);
  if (f == Form::batched) {
    if (gpu)  // one graph launch, and its kernel nodes at the graph's rate
      w.launches("graph", 1).launches("graph_node", ops);
    else
      w.launches("omp_region", 1);
  }
  if (f == Form::fused) w.launches(one, 1);
  v.work = w;
  if (f != Form::per_op) v.compared_with = "launch/per_op/fp32";
  // The host's launch is part of the work: every sample starts after a synchronize and its
  // events bracket the launches too (a stream held by a blocking kernel would hide them).
  v.launch_synchronizes = gpu;
  auto sizes = [](std::initializer_list<std::pair<std::int64_t, std::int64_t>> list) {
    std::vector<Params> out;
    for (auto [n_, ops_] : list) out.push_back(Params{{"n", n_}, {"ops", ops_}});
    return out;
  };
  v.sizes = sizes({{1024, 10}, {1024, 100}, {1024, 1000}});
  v.quick_sizes = sizes({{1024, 100}});
  v.test_sizes = sizes({{1, 1}, {1000, 7}, {4099, 100}});
  return v;
}

}  // namespace roofbench::launch
