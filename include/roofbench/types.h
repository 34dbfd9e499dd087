#pragma once
// Vocabulary shared by kernels, the harness, the model and the printers.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace roofbench {

enum class Precision { fp64, fp32, fp16, bf16 };
enum class Backend { cpu, cuda };
// The compute unit a kernel runs on: the CPU's SIMD lanes, a GPU's CUDA cores, its tensor cores.
enum class Unit { simd, simt, tensor };
// A level of the memory hierarchy a bandwidth is measured at, or declared bytes refer to. The GPU's
// shared memory stands in for its L1; pcie is the host link.
enum class Level { dram, l3, l2, l1, smem, pcie };
// transcendental: calls of one math function (sin, exp, ...) per second, by the same code the
// kernels call: the roof of a kernel bound by its math library rather than its FMAs or bytes.
// launch: launches per second of empty work by one launch path (a kernel launch on a stream, a
// kernel node of a replayed CUDA graph, an OpenMP parallel region): the roof of many tiny launches.
enum class CeilingKind { bandwidth, compute, transcendental, launch };

// Each as results.json spells it ("fp32", "cuda", "tensor", "dram", "bandwidth"), and back; the
// readers throw InputError naming what they expected.
std::string to_string(Precision p);
std::string to_string(Backend b);
std::string to_string(Unit u);
std::string to_string(Level l);
std::string to_string(CeilingKind k);
Precision precision_from_string(const std::string& s);
Backend backend_from_string(const std::string& s);
Unit unit_from_string(const std::string& s);
Level level_from_string(const std::string& s);
CeilingKind ceiling_kind_from_string(const std::string& s);

// Bytes of one value stored in a precision: 8, 4 or 2.
double bytes_of(Precision p);

// Unit roundoff of a precision (2^-p for p mantissa bits incl. the hidden one).
double unit_roundoff(Precision p);

// Named problem parameters, in declaration order ("M", "N", "K" or "n").
using Params = std::vector<std::pair<std::string, std::int64_t>>;
std::int64_t param(const Params& p, const std::string& key);  // throws std::out_of_range
std::string params_to_string(const Params& p);                // "M:256/N:256/K:256"

// Bad input from the user or a file: the CLI prints what() on one line and exits 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A buffer that does not fit in the memory the machine has free (host or device): the benchmark
// that asked gets no number and says so; the rest of the run goes on.
struct MemoryRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace roofbench
