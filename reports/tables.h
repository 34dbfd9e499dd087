#pragma once
// The tables every printer shares (console, Markdown, HTML): a benchmark's row, the GEMM ladder
// against the vendor library, the lessons, the counters beside the declared work, the warnings.
// Each is data (text cells); the printers lay it out.
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"

namespace roofbench {

// The text of one benchmark's table row, shared by the console, Markdown and HTML tables.
// Cells without a value hold `empty`.
struct BenchmarkCells {
  std::string median, rel_iqr, samples, flop_rate, byte_rate, intensity, attainable, roof_pct, bound;
  std::string clock;  // SM / core clock before → after the samples, "1.98 → 1.75 GHz"
  std::string waves;  // fixed-tile kernels: "1.09 (55%)", waves and the wave model's efficiency
};
BenchmarkCells benchmark_cells(const BenchmarkResult& b, const std::string& empty);

// The GEMM ladder against the vendor library measured in the same run (the variant that declares
// itself the vendor reference: cuBLAS on CUDA, OpenBLAS on the CPU): one row per (variant,
// precision), one column per problem size, each cell the FLOP rate and its ratio to the
// reference at the same precision and size, "48.1 TFLOP/s (0.93×)". Empty without a reference.
struct LadderTable {
  std::string reference;           // "cublas"
  std::vector<std::string> sizes;  // column heads: "4096³" for square sizes, else "M×N×K"
  struct Row {
    std::string variant, precision, unit;
    std::vector<std::string> cells;  // "" where that size was not run or not verified
  };
  std::vector<Row> rows;
};
LadderTable gemm_ladder(const Results& r);

// The lesson families: each benchmark against the form it improves on (its compared_with), at
// the same parameters: both medians, the speedup (their ratio), the bytes each must move, and its
// share of its roof. Rows only where both sides were verified.
struct LessonRow {
  std::string name, against;                // full benchmark names
  // "1.20 ms", "6.10 ms", "5.08×"; a form that declares launches adds its time per launch
  // ("1.52 ms, 1.52 us per launch")
  std::string time, against_time, speedup;
  std::string bytes, against_bytes;         // declared: "537 MB"
  std::string roof_pct;                     // of this benchmark: "93.1%", or "—"
  // What the model expected from the same run's roofs: the against form's model time over this
  // one's ("4.97×"), and each one's binding roof ("memory ← transcendental"); "—" when unplaced.
  std::string predicted = "—", bounds = "—";
};
std::vector<LessonRow> lessons(const Results& r);

// One row per benchmark with counters: measured against declared work, the measured intensity
// at each level (FLOP per byte at L1, L2 and HBM) and, where collected, the divergence measures.
// Cells without a value hold "—"; `error` holds why the counters are missing.
struct CounterRow {
  std::string name, passes = "—";
  std::string flops = "—", flops_ratio = "—";  // measured FLOPs and measured / declared
  std::string dram = "—", dram_ratio = "—";    // HBM bytes and measured / declared (DRAM-level kernels)
  std::string l2 = "—", l1 = "—";              // bytes
  std::string ai_l1 = "—", ai_l2 = "—", ai_dram = "—";  // FLOP/byte
  std::string threads_per_instruction = "—";   // of 32
  std::string branch_uniformity = "—";         // percent
  std::string trace = "—";  // the kernels' own span (CUPTI Activity) and how far the event median is from it
  std::string error;
};
std::vector<CounterRow> counter_rows(const Results& r);

// Energy (bench/power.h): every benchmark whose samples carried an energy counter, with its joules
// a run, mean power, and work per joule against the best of this run's ceilings of that kind
// (GFLOP/J over the compute ceilings, GB/J over the bandwidth ones). Where nothing was read,
// `unavailable` says why (the device's own reason, or the counter's).
struct EnergyRow {
  std::string name, joules, watts, temperature = "—";
  std::string flop_per_j = "—", flop_share = "—";   // "12.3 GFLOP/J", "81%" of the best ceiling's
  std::string bytes_per_j = "—", bytes_share = "—";
};
struct EnergyTable {
  std::string source;  // "NVML", "RAPL: package-0"
  std::string best_flop_per_j = "—", best_flop_ceiling, best_bytes_per_j = "—", best_bytes_ceiling;
  std::vector<EnergyRow> ceilings, benchmarks;
  std::string unavailable;  // non-empty when no row has energy: why
};
EnergyTable energy_table(const Results& r);

// Every warning of a run, ceilings first, then the benchmarks left out of it, as (what it is
// about, the warning).
std::vector<std::pair<std::string, std::string>> all_warnings(const Results& r);

}  // namespace roofbench
