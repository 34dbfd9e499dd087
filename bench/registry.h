#pragma once
// The kernel registry: the one list of variants. A variant file registers itself next to its
// definition with ROOFBENCH_REGISTER; `roofbench list`, the run and the reports take names from
// here and nowhere else.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/launch_timing.h"
#include "bench/results.h"
#include "bench/types.h"
#include "bench/work.h"

namespace roofbench {

// One live problem instance of a variant on its device: owns the inputs, outputs and whatever
// the reference needs. The harness calls prepare → run → verify once, then run alone to time.
class Instance {
 public:
  virtual ~Instance() = default;
  // Fresh random inputs from `seed`, outputs poisoned (NaN) so unwritten elements fail. Untimed.
  virtual void prepare(std::uint64_t seed) = 0;
  // One execution. CUDA variants enqueue on the default stream and return without waiting.
  virtual void run() = 0;
  // Compares the output of the last run with the reference. Untimed.
  virtual Verification verify() = 0;
  // Fixed-tile GPU kernels: their tile and occupancy, from which the model derives how their grid
  // fills the machine (see WaveModel).
  virtual std::optional<WaveModel> waves() const { return std::nullopt; }
};

// A variant that measures one of the machine's roofs rather than a kernel of interest.
struct CeilingSpec {
  std::string name;  // "dram_triad", "fp32_fma"
  CeilingKind kind = CeilingKind::bandwidth;
  Level level = Level::dram;  // bandwidth only
  std::string method;         // how it measures, one line, copied into results.json
};

struct Variant {
  std::string family;   // "gemm", "stream", "ceiling"
  std::string variant;  // "naive", "smem_tiled", ...
  Precision precision = Precision::fp32;
  Backend backend = Backend::cpu;
  Unit unit = Unit::simd;         // the compute unit it runs on: simd on the CPU; simt or tensor on a GPU
  std::optional<Precision> math;  // its arithmetic's precision, when not `precision` (see BenchmarkResult)
  Level level = Level::dram;      // the memory level its declared bytes refer to
  std::string summary;            // one line: the idea of this variant
  std::string source;             // the file that defines it (ROOFBENCH_REGISTER fills it in)
  std::vector<Params> sizes;        // a full run
  std::vector<Params> quick_sizes;  // --quick
  std::vector<Params> test_sizes;   // small and awkward sizes for the correctness tests
  // The declared work: its FLOPs and the fewest bytes it must move, as typed terms from which
  // the rates and the derivation in results.json are both made (bench/work.h).
  Work work;
  // The vendor library measured beside the ladder's rungs (cuBLAS, OpenBLAS): the reports give
  // each rung's rate as a ratio to it.
  bool vendor_reference = false;
  std::function<std::unique_ptr<Instance>(const Params&)> make;
  std::optional<CeilingSpec> ceiling;
  std::string compared_with;  // the lesson families: base name of the form it is measured against
  // CUDA only: the one compute capability ("9.0") its code runs on (sm_90a features: wgmma,
  // TMA). Empty: every GPU the build has code for. Elsewhere it is left out of a run, with why.
  std::string only_on;
  // False for work that launches no kernel (host<->device copies): hardware counters have nothing
  // to count there, so `run --counters` does not profile it.
  bool launches_kernels = true;
  // True when run() waits for the GPU itself (a synchronous cudaMemcpy): its launches cannot be
  // queued behind a blocking kernel, so its samples start after a synchronize and include the
  // launch (bench/launch_timing.h).
  bool launch_synchronizes = false;
  Launch launch() const { return launch_synchronizes ? Launch::synchronous : Launch::hidden; }

  std::string base_name() const;  // family/variant/precision
  std::string name(const Params& p) const { return base_name() + "/" + params_to_string(p); }
};

const std::vector<Variant>& registry();

// Why `v` cannot run on a device of this compute capability ("8.0"; empty for the CPU), or ""
// when it can.
std::string not_here(const Variant& v, const std::string& compute_capability);
// Validates and adds; aborts with a message on a malformed or duplicate declaration (a
// programming error caught the first time the binary starts).
// `source` is the file that registers it.
bool register_variant(Variant v, const char* source);

#define ROOFBENCH_CONCAT_(a, b) a##b
#define ROOFBENCH_CONCAT(a, b) ROOFBENCH_CONCAT_(a, b)
#define ROOFBENCH_REGISTER(...)                                           \
  static const bool ROOFBENCH_CONCAT(roofbench_registered_, __LINE__) = \
      ::roofbench::register_variant(__VA_ARGS__, __FILE__)

// Square GEMM sizes as params, for brevity in variant files.
std::vector<Params> square_gemm_sizes(std::initializer_list<std::int64_t> ns);
std::vector<Params> vector_sizes(std::initializer_list<std::int64_t> ns);

}  // namespace roofbench
