#pragma once
// A kernel's declared work, as typed terms: the FLOPs it does and the fewest bytes it must move,
// each term saying what it is. The rates come from these numbers, and the one-line derivation
// that results.json carries is written from the same terms, so the two cannot drift apart (no
// "44 bytes" typed beside a 44.0). In the spirit of nvbench's add_global_memory_reads<T>(n).
//
//   const Count n = Count::param("n");
//   Work().read<float>("x", n).write<float>("y", n).flops(5 * n, "sin, cos, two squares and an add")
//   derivation: "reads x (n × 4 B); writes y (n × 4 B): 8·n B; 5·n FLOPs (sin, cos, two squares and an add)"
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "roofbench/half.h"
#include "roofbench/types.h"

namespace roofbench {

// A number of items: a coefficient times named problem parameters ("2·M·N·K", "n"), or times a
// constant that is only known when the binary runs (the CPU's thread count), named for the text.
class Count {
 public:
  Count(double coefficient = 1) : coef_(coefficient) {}  // NOLINT: a plain number is a Count
  static Count param(const std::string& name);
  static Count constant(const std::string& name, double value);

  double value(const Params& p) const;  // throws std::out_of_range for a parameter p lacks
  std::string text() const;             // "2·M·N·K", "n", "threads·kib_per_thread·1024"
  double coefficient() const { return coef_; }
  // The named factors, sorted: counts with the same factors add up in a derivation.
  std::vector<std::string> factors() const;

  friend Count operator*(Count a, const Count& b);

 private:
  double coef_ = 1;
  std::vector<std::string> params_;
  std::vector<std::pair<std::string, double>> constants_;
};

// One pass of a form that runs as several kernels (loops, copies) one after another, each through
// memory: its share of the work. The model gives each pass its own binding roof and adds up their
// times, since a pass cannot overlap its math with the next one's bytes; a pipelined form
// (Work::pipelined) overlaps its passes across chunks instead.
struct WorkPhase {
  std::string name;
  double flops = 0, bytes = 0;
  std::map<std::string, double> transcendentals;
  // The bandwidth ceiling (by name: "pcie_h2d_pinned") this pass's bytes are placed against;
  // empty: the roof of the variant's memory level. A copy over the host link is not DRAM traffic.
  std::string ceiling;
};

class Work {
 public:
  // Starts a pass: the terms after it, up to the next phase(), are its work. Either every term
  // is in a named pass or none is (throws std::logic_error on a pass begun after unnamed terms).
  // `ceiling` names the bandwidth ceiling the pass's bytes move at (empty: the variant's level).
  Work& phase(const std::string& name, const std::string& ceiling = "");
  // The passes run as a pipeline over `chunks` equal chunks (copy chunk i+1 in while chunk i
  // computes and chunk i-1 goes back), chunk i on stream i mod `streams`, each stream running its
  // chunks' passes in order: the model's time is one chunk through every pass plus (C - 1) chunks
  // at the pipeline's pace, the slowest pass's chunk or, with too few streams to keep every pass
  // busy, a stream's chunk shared by S: Σ t_k / C + (C - 1) / C · max(max t_k, Σ t_k / S),
  // instead of Σ t_k. Without `streams`, as many as it takes. Needs named passes.
  Work& pipelined(Count chunks, std::optional<Count> streams = std::nullopt);
  // The passes that name a bandwidth ceiling (the copies over a host link) share one link, whose
  // rate with both directions busy at once is the bandwidth ceiling `ceiling` ("pcie_duplex_pinned":
  // bytes both ways per second). In the pipeline's steady state their bytes together move no faster:
  // the pace is also at least Σ bytes of those passes / that rate. Needs pipelined() first, and a
  // pass that names a ceiling (throws std::logic_error otherwise).
  Work& shared_link(const std::string& ceiling);
  // `count` items of `bytes_each` read from (written to) the memory level the variant declares,
  // `times` over (a cache ceiling reads one small buffer again and again).
  Work& read(const std::string& what, Count count, double bytes_each, Count times = 1);
  Work& write(const std::string& what, Count count, double bytes_each, Count times = 1);
  Work& read(const std::string& what, Count count, Precision p, Count times = 1) {
    return read(what, std::move(count), bytes_of(p), std::move(times));
  }
  Work& write(const std::string& what, Count count, Precision p, Count times = 1) {
    return write(what, std::move(count), bytes_of(p), std::move(times));
  }
  template <class T>
  Work& read(const std::string& what, Count count, Count times = 1) {
    return read(what, std::move(count), precision_of<T>(), std::move(times));
  }
  template <class T>
  Work& write(const std::string& what, Count count, Count times = 1) {
    return write(what, std::move(count), precision_of<T>(), std::move(times));
  }
  // FLOPs, with what counts as one ("an FMA is 2", "sin counted as 1").
  Work& flops(Count count, const std::string& what);
  // Calls of a math function ("sin", "cos", "sincos", "exp", "tanh": one element each), placed
  // against the transcendental ceiling of the same name: the model's third roof. Counted beside
  // the FLOPs, not instead of them.
  Work& transcendentals(const std::string& function, Count count);
  // Launches by one path ("kernel": a kernel launched on a stream; "graph_node": a kernel node of
  // a replayed CUDA graph; "omp_region": an OpenMP parallel region), placed against the launch
  // ceiling of the same path: the roof of work cut into many tiny launches. Whole-form, never
  // inside a pass.
  Work& launches(const std::string& path, Count count);

  double flops(const Params& p) const;
  double bytes(const Params& p) const;  // every read and write, times over
  std::map<std::string, double> transcendentals(const Params& p) const;  // by function
  std::map<std::string, double> launches(const Params& p) const;         // by path
  std::vector<WorkPhase> phases(const Params& p) const;  // empty when no pass was named
  double pipeline_chunks(const Params& p) const;         // 0 when not pipelined
  double pipeline_streams(const Params& p) const;        // 0 when not pipelined or not limited
  const std::string& pipeline_link() const { return link_; }  // empty when no link is shared
  // Each buffer once: the bytes of inputs the host makes and outputs it checks, about (the run's
  // time estimate charges the host for them, bench/plan.h).
  double host_bytes(const Params& p) const;
  std::string derivation() const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    enum Kind { read, write, flop, transcendental, launch } kind;
    std::string what;
    Count count;
    double bytes_each = 0;
    Count times = 1;
    int phase = 0;
  };
  std::vector<Term> terms_;
  std::vector<std::string> phase_names_, phase_ceilings_;
  std::optional<Count> chunks_, streams_;
  std::string link_;
  void add(Term t);
};

}  // namespace roofbench
