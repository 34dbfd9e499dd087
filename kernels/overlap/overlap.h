#pragma once
// The overlap lesson (GPU): a vector that lives on the host is processed on the GPU in `chunks`
// chunks, each copied in (H2D), run through a kernel of `iters` FMAs per element, and copied back
// (D2H). Four forms of the same work:
//   serial      every chunk's copy in, kernel and copy out on one stream: nothing overlaps, the
//               time is the sum of the three;
//   streams2    chunk i on stream i mod 2, from pinned memory: chunk i+1's copy in may run while
//               chunk i computes, but a stream's next copy in waits for its last copy out;
//   streams4    the same on four streams: copy in, compute and copy out of three chunks at once,
//               so the time approaches that of the slowest of the three;
//   pageable    streams4's calls from pageable (not page-locked) host memory: the driver stages
//               each copy through a pinned buffer of its own and the host waits for it, so little
//               overlaps. (The suite's HostBuffer: arrays of 8 MiB and more ask for 2 MiB pages,
//               MADV_HUGEPAGE, as the CPU kernels' arrays do; pageable all the same.)
// The model places each form's passes against the PCIe ceilings measured in the same run
// (pcie_h2d_pinned, pcie_d2h_pinned) and the FP32 and DRAM roofs: the serial sum, or for the
// pipelined forms one chunk through all three plus (chunks - 1) at the slowest pass's pace
// (Work::pipelined), the copies in and out together no faster than the link both ways
// (pcie_duplex_pinned, Work::shared_link); a pipelined form's roof % is its overlap efficiency.
// pageable is declared as streams4 is: the roof is what pinned memory allows, and its shortfall is
// the lesson.
//
// Exact arithmetic, so the check sees a chunk or an FMA pair missing: x holds multiples of 1/256 in
// [-1, 1]; each pair of steps is v ← a·v + 0, v ← a·v + d with a = -1 and d = 1/4096 given at run
// time (the compiler cannot fold them), i.e. v + d per pair and -v after an odd step. Every value
// is a multiple of 1/4096 below 16 for iters < 2^16: FP32 holds it exactly.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "kernels/ceilings/pcie_names.h"
#include <vector>

#include "roofbench/variant.h"
#include "roofbench/random.h"
#include "roofbench/verify.h"

namespace roofbench::overlap {

enum class Form { serial, streams2, streams4, pageable };

inline constexpr float kStep = 1.0f / 4096.0f;

inline const char* form_name(Form f) {
  switch (f) {
    case Form::serial: return "serial";
    case Form::streams2: return "streams2";
    case Form::streams4: return "streams4";
    case Form::pageable: return "pageable";
  }
  return "?";
}
inline int streams_of(Form f) { return f == Form::serial ? 1 : f == Form::streams2 ? 2 : 4; }

// Multiples of 1/256 in [-1, 1].
inline void fill_overlap_input(float* x, std::int64_t n, std::uint64_t seed) {
  fill_uniform(x, n, seed, -1.0, 1.0);
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::round(x[i] * 256.0f) / 256.0f;
}

// What `iters` steps make of x, in FP64 (exact): x + (iters / 2)·d, negated when iters is odd.
inline double overlap_reference(double x, std::int64_t iters) {
  const double v = x + static_cast<double>(iters / 2) * kStep;
  return iters % 2 ? -v : v;
}

inline Verification check_overlap(const float* x, const float* y, std::int64_t n, std::int64_t iters) {
  return check_all(tolerance_for(Precision::fp32), "every element vs its closed form in FP64, exact in FP32", n,
                   [&](Checker& chk, std::int64_t i) { chk.check(y[i], overlap_reference(x[i], iters), i); });
}

// The first element and the size of chunk `c` of `chunks` over n elements: sizes differ by at
// most one (empty only when chunks > n).
inline std::int64_t chunk_begin(std::int64_t n, std::int64_t chunks, std::int64_t c) {
  return static_cast<std::int64_t>(static_cast<__int128>(c) * n / chunks);
}
inline std::int64_t chunk_size(std::int64_t n, std::int64_t chunks, std::int64_t c) {
  return chunk_begin(n, chunks, c + 1) - chunk_begin(n, chunks, c);
}

// The declared work: three passes, the copies at the PCIe ceilings, the kernel at the DRAM and
// FP32 roofs; pipelined over the chunks for every form but serial.
inline Variant overlap_variant(Form f) {
  Variant v;
  v.family = "overlap";
  v.variant = form_name(f);
  v.precision = Precision::fp32;
  v.backend = Backend::cuda;
  v.unit = Unit::simt;
  v.level = Level::dram;
  v.reference = "x + (iters/2)/4096, negated for odd iters, in FP64 (exact)";
  const Count n = Count::param("n");
  Work w;
  using ceilings::Direction, ceilings::HostMemory, ceilings::pcie_ceiling_name;
  w.phase("H2D: x to the GPU", pcie_ceiling_name(Direction::to_device, HostMemory::pinned))
      .read<float>("x over PCIe", n)
      .phase("kernel: iters FMAs per element")
      .read<float>("x", n)
      .write<float>("y", n)
      .flops(2 * n * Count::param("iters"), "an FMA is 2")
      .phase("D2H: y to the host", pcie_ceiling_name(Direction::from_device, HostMemory::pinned))
      .write<float>("y over PCIe", n);
  // Chunk i runs on stream i mod S: with S = 2 a stream's next copy in waits for its last copy out.
  // The copies in and out of a pipeline run at once, both ways over one link: together no faster
  // than the link with both directions busy (pcie_duplex_pinned), which is less than twice the
  // slower one-way ceiling where the link is not full duplex.
  if (f != Form::serial) w.pipelined(Count::param("chunks"), Count(streams_of(f))).shared_link(ceilings::kPcieDuplexPinned);
  v.work = w;
  if (f != Form::serial) v.compared_with = "overlap/serial/fp32";
  // run() waits for the pageable copies; for one timing method across the lesson, every form's
  // samples start after a synchronize (the first copy's enqueue, a few µs, is in the time).
  v.launch_synchronizes = true;
  auto sizes = [](std::int64_t n_, std::int64_t chunks, std::initializer_list<std::int64_t> iters) {
    std::vector<Params> out;
    for (std::int64_t it : iters) out.push_back(Params{{"n", n_}, {"chunks", chunks}, {"iters", it}});
    return out;
  };
  // 256 MiB each way; on Hopper over PCIe 5 (about 50 GB/s each way, 60 TFLOP/s FP32) the kernel
  // takes as long as a copy near iters = 2048: below it the copies bind, above it the FMAs.
  v.sizes = sizes(1 << 26, 16, {64, 2048, 8192});
  v.quick_sizes = sizes(1 << 24, 16, {2048});
  v.test_sizes = {Params{{"n", 1}, {"chunks", 1}, {"iters", 1}}, Params{{"n", 1000 + 3}, {"chunks", 7}, {"iters", 7}},
                  Params{{"n", 5}, {"chunks", 8}, {"iters", 2}}, Params{{"n", 1 << 20}, {"chunks", 16}, {"iters", 64}}};
  return v;
}

}  // namespace roofbench::overlap
