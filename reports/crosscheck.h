#pragma once
// Nsight Compute's numbers for one benchmark beside roofbench's own: what `ncu --csv` printed
// for the kernels of one run of it, against the CUPTI counters and the declared work that a
// results file holds for the same benchmark. The GPU check's `repeat` stage writes this for a
// GEMM and SAXPY (scripts/gpu-check.sh); the same derivation (roofline/cupti/metrics.h) turns
// both sets of counters into FLOPs, bytes and time, so the two tools are compared like for like.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/results.h"

namespace roofbench {

struct NcuKernel {
  std::string id;    // ncu's ID of the profiled launch
  std::string name;  // "Kernel Name" as ncu printed it
  std::map<std::string, double> metrics;  // in CUPTI's units: bytes, nanoseconds, counts
};

// The launches in `ncu --csv --metrics ...` output (the details page: one row per metric), in
// the order ncu profiled them; `==PROF==` lines and other text around the table are skipped.
// Values with thousands separators and units (byte..Gbyte, nsecond..second) are read in base
// units. Throws InputError when there is no table.
std::vector<NcuKernel> parse_ncu_csv(const std::string& text);

// The function name alone: namespaces, template arguments and parameters dropped
// ("void ns::(anonymous namespace)::k<float, 4>(float*)" -> "k"), as ncu prints kernel names.
std::string kernel_base_name(const std::string& name);

struct Crosscheck {
  std::string benchmark;
  std::vector<std::string> kernels;  // the ncu launches taken: one run of the benchmark
  struct Row {
    std::string quantity, unit;
    std::optional<double> ncu, cupti, declared;  // declared: the declared work, or the event median for time
  };
  std::vector<Row> rows;
};

// Throws InputError when the benchmark is not in `r`, has no kernel trace (run it with
// --counters), or none of its kernels is among ncu's launches.
Crosscheck crosscheck(const Results& r, const std::string& benchmark, const std::vector<NcuKernel>& ncu);
std::string render_crosscheck_markdown(const Crosscheck& c);
// The same as JSON, for a script to judge: {"benchmark", "kernels": [ncu's names], "rows":
// [{"quantity", "unit", "ncu", "cupti", "declared"}]}, a value null where a side has none.
nlohmann::json crosscheck_json(const Crosscheck& c);

}  // namespace roofbench
