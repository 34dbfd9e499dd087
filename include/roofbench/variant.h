#pragma once
// Declaring a kernel variant: what it is (family, variant, precision, the unit it runs on), its
// sizes, the work it must do (roofbench/work.h), what its output is checked against, and how to
// make an instance to run. A variant file registers itself with ROOFBENCH_REGISTER beside its
// definition; `list`, `run` and every report take names from the registry and nowhere else.
// Roofbench's own families are declared the same way (kernels/).
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "roofbench/types.h"
#include "roofbench/verify.h"
#include "roofbench/waves.h"
#include "roofbench/work.h"

namespace roofbench {

// How the samples of a GPU variant start (roofbench's harness, bench/launch_timing.h).
enum class Launch {
  hidden,       // queued behind a blocking kernel: the events bracket the GPU's work alone
  synchronous,  // after a synchronize: the events also bracket the host's launch
  // --untrusted: after a synchronize, and the stop event recorded only after a device-wide
  // synchronize, so that work the callable launched on another stream is inside the time too.
  device_wide,
};

// One live problem instance of a variant on its device: owns the inputs, outputs and whatever
// the reference needs. The harness calls prepare → run → verify once, then run alone to time.
class Instance {
 public:
  virtual ~Instance() = default;
  // Fresh random inputs from `seed`, outputs poisoned (NaN) so unwritten elements fail. Untimed.
  virtual void prepare(std::uint64_t seed) = 0;
  // One execution. CUDA variants enqueue on the default stream and return without waiting.
  virtual void run() = 0;
  // Compares the output of the last run with the variant's reference (Variant::reference), e.g.
  // with check_all (roofbench/verify.h). Untimed. Not overridden: the benchmark fails with why
  // and gets no number, unless its variant is declared timing_only (then this is never called).
  virtual Verification verify();
  // Fixed-tile GPU kernels: their tile and occupancy, from which the model derives how their grid
  // fills the machine (see WaveModel).
  virtual std::optional<WaveModel> waves() const { return std::nullopt; }
};

// A variant that measures one of the machine's roofs rather than a kernel of interest.
struct CeilingSpec {
  CeilingSpec() = default;
  // CeilingSpec{name, kind, level, method} as before the transcendental kind, with no warning
  // about the field it leaves out.
  CeilingSpec(std::string name_, CeilingKind kind_, Level level_, std::string method_, std::string function_ = {})
      : name(std::move(name_)), kind(kind_), level(level_), method(std::move(method_)), function(std::move(function_)) {}
  std::string name;  // "dram_triad", "fp32_fma"
  CeilingKind kind = CeilingKind::bandwidth;
  Level level = Level::dram;  // bandwidth only
  std::string method;         // how it measures, one line, copied into results.json
  std::string function;       // transcendental only: the math function ("sin"), as kernels declare it
  // bandwidth: the roof of its level when it is the best there (the chart's line, the ridge
  // points, a kernel declared at that level). false: measured and used by name only, as a pass's
  // or a shared link's ceiling (Work::phase, Work::shared_link): a host link both ways at once,
  // whose bytes of two directions are no roof for a copy that goes one way.
  bool level_roof = true;
  // A vendor routine measured as a ceiling (cudaMemcpy, the C library's memcpy): the name of the
  // suite's own ceiling it is the reference for ("dram_copy"). The reports give that ceiling as a
  // ratio to it, both measured in the same run; empty for the suite's own loops.
  std::string reference_for;
  // Measured in every process whose kernels it bounds, even one that takes the other ceilings
  // from a file (--ceilings-from): a rate that depends on the process's own state (launches per
  // second: its driver queues, its OpenMP pool), which another process's figure does not bound.
  bool per_process = false;
  // Measured twice: the burst pass at the start of the run, from a device that has been idle, and
  // a sustained pass held back to back for `run --sustain S` seconds first, so that its clock has
  // settled where the power cap and the heat put it. The chart draws both roofs, and a kernel is
  // placed against the one whose clock its own samples ran at (docs/measurement.md).
  bool sustained = false;
  // The param that says how many times a sample repeats the same work ("iters", "reps",
  // "passes"): scaling it changes how long a sample runs and nothing else the ceiling measures.
  // A roof that a kernel came out above is measured once more with it scaled down, so that a
  // sample runs about as briefly as that kernel's (a brief pass, Ceiling::value_brief): a machine that runs short bursts
  // faster than it sustains (a CPU quota or hypervisor time slice that throttles long samples
  // only) has the higher roof for brief kernels, and a roof measured only in long samples is no
  // upper bound for them. A DRAM ceiling's array length qualifies from a flushed cache, within
  // the bounds below. Empty: the work cannot shrink without changing what it measures (the C
  // library's memcpy, whose stores stay in the cache below a size of its own choosing). Its full
  // and quick sizes name it.
  std::string repeat_param;
  // The least value repeat_param is scaled down to, and the step it is scaled in: a DRAM
  // ceiling's arrays stay at least twice the last-level cache, so that most of what it writes
  // leaves the cache within the sample, and in whole vectors. Every size is at least the least
  // value and a whole number of steps.
  std::int64_t repeat_min = 1, repeat_step = 1;
  // True where a smaller value measures the same level only from a flushed cache (a DRAM
  // ceiling's arrays, which a run without flushes, --warm, could find in the last-level cache):
  // such a run takes no brief pass of it.
  bool repeat_needs_flush = false;
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
  // What its output is checked against before it is timed, one line ("an FP64 loop over the same
  // inputs", "cuBLAS"): required, unless timing_only. Instance::verify() does the checking.
  std::string reference;
  // The explicit opt-out: no reference, timing only. Its numbers are kept and placed, but marked
  // unverified in results.json and every report. For roofbench's own families, never.
  bool timing_only = false;
  std::string source;    // the file that defines it (ROOFBENCH_REGISTER fills it in)
  bool builtin = false;  // one of roofbench's own families (ROOFBENCH_REGISTER fills it in)
  std::vector<Params> sizes;        // a full run
  std::vector<Params> quick_sizes;  // --quick; empty: the first of `sizes`
  std::vector<Params> test_sizes;   // small and awkward sizes for correctness tests; empty: quick_sizes
  // The declared work: its FLOPs and the fewest bytes it must move, as typed terms from which
  // the rates and the derivation in results.json are both made (roofbench/work.h).
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
  // False for work that may launch no kernel (host<->device copies; cudaMemcpy device to device,
  // which the driver may give a copy engine): hardware counters may have nothing to count there,
  // so `run --counters` does not profile it.
  bool launches_kernels = true;
  // True when run() waits for the GPU itself (a synchronous cudaMemcpy): its launches cannot be
  // queued behind a blocking kernel, so its samples start after a synchronize and include the
  // launch (bench/launch_timing.h).
  bool launch_synchronizes = false;
  Launch launch() const { return launch_synchronizes ? Launch::synchronous : Launch::hidden; }
  // True to be timed with warm caches in every run (no flush before a sample): for work whose
  // subject is not memory traffic and whose data stays in a cache by design (the launch lesson's
  // few KiB, declared at L1 or L2, and the launch-rate roofs it is placed under), where a flush
  // would add a DRAM round trip, and on the CPU a sleeping core's wake-up, to every sample.
  // results.json says so in the measurement (`cold_cache: false`).
  bool warm = false;

  std::string base_name() const;  // family/variant/precision
  // family/variant/precision/params ("n:4096"); without params, the base name alone
  std::string name(const Params& p) const { return p.empty() ? base_name() : base_name() + "/" + params_to_string(p); }
};

// Validates and adds; aborts with a message that says what to fix on a malformed or duplicate
// declaration, or one without a reference (a programming error caught the first time the binary
// starts). `source` is the file that registers it; `builtin` marks roofbench's own families.
bool register_variant(Variant v, const char* source, bool builtin = false);

// Registers a Variant (an expression) at static initialization: ROOFBENCH_REGISTER(make_mine());
// Roofbench's own kernels are compiled with ROOFBENCH_BUILTIN_KERNELS defined, which is how
// `run --no-builtin` tells them from yours.
#ifdef ROOFBENCH_BUILTIN_KERNELS
#define ROOFBENCH_BUILTIN_ true
#else
#define ROOFBENCH_BUILTIN_ false
#endif
#define ROOFBENCH_CONCAT_(a, b) a##b
#define ROOFBENCH_CONCAT(a, b) ROOFBENCH_CONCAT_(a, b)
#define ROOFBENCH_REGISTER(...)                                           \
  static const bool ROOFBENCH_CONCAT(roofbench_registered_, __LINE__) = \
      ::roofbench::register_variant(__VA_ARGS__, __FILE__, ROOFBENCH_BUILTIN_)

// Square GEMM sizes as params, for brevity in variant files.
std::vector<Params> square_gemm_sizes(std::initializer_list<std::int64_t> ns);
std::vector<Params> vector_sizes(std::initializer_list<std::int64_t> ns);

}  // namespace roofbench
