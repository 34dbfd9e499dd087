#include "reports/crosscheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "bench/stats.h"
#include "reports/format.h"
#include "roofline/cupti/metrics.h"

namespace roofbench {

namespace {

// One CSV record, RFC 4180 quoting.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

// "1,073,741,824" with unit "byte" -> 1073741824; "1.25" "msecond" -> 1250000: CUPTI's own units
// (bytes, nanoseconds), in which roofline/cupti/metrics.h reads counter values.
std::optional<double> base_value(std::string v, const std::string& unit) {
  v.erase(std::remove(v.begin(), v.end(), ','), v.end());
  if (v.empty() || v == "n/a") return std::nullopt;
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != v.size()) return std::nullopt;
  static const std::map<std::string, double> scale = {
      {"Kbyte", 1e3},   {"Mbyte", 1e6}, {"Gbyte", 1e9},   {"Tbyte", 1e12}, {"usecond", 1e3},
      {"us", 1e3},      {"msecond", 1e6}, {"ms", 1e6},    {"second", 1e9}, {"s", 1e9}};
  if (auto it = scale.find(unit); it != scale.end()) x *= it->second;
  return x;
}

}  // namespace

std::vector<NcuKernel> parse_ncu_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  int id = -1, kname = -1, mname = -1, munit = -1, mvalue = -1;
  std::vector<NcuKernel> out;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '"') continue;  // ==PROF== lines, the program's own output
    const auto f = csv_fields(line);
    if (header.empty() || (f.size() == header.size() && f == header)) {
      const auto col = [&](const char* n) {
        auto it = std::find(f.begin(), f.end(), n);
        return it == f.end() ? -1 : static_cast<int>(it - f.begin());
      };
      if (col("Metric Name") < 0) continue;
      header = f;
      id = col("ID"), kname = col("Kernel Name"), mname = col("Metric Name"), munit = col("Metric Unit"),
      mvalue = col("Metric Value");
      if (kname < 0 || mvalue < 0) throw InputError("ncu CSV: the header has no \"Kernel Name\" or \"Metric Value\"");
      continue;
    }
    if (f.size() != header.size()) continue;
    const std::string launch = id >= 0 ? f[static_cast<std::size_t>(id)] : f[static_cast<std::size_t>(kname)];
    if (out.empty() || out.back().id != launch) out.push_back({launch, f[static_cast<std::size_t>(kname)], {}});
    if (auto v = base_value(f[static_cast<std::size_t>(mvalue)], munit >= 0 ? f[static_cast<std::size_t>(munit)] : ""))
      out.back().metrics[f[static_cast<std::size_t>(mname)]] = *v;
  }
  if (header.empty()) throw InputError("no ncu CSV table (\"Metric Name\" column) in the input");
  return out;
}

std::string kernel_base_name(const std::string& name) {
  // The signature's name (cupti::strip_signature), less its template arguments (nested ones too)
  // and its namespaces.
  const std::string s = cupti::strip_signature(name);
  std::string flat;
  int depth = 0;
  for (const char ch : s) {
    if (ch == '<') {
      ++depth;
    } else if (ch == '>') {
      --depth;
    } else if (depth == 0) {
      flat += ch;
    }
  }
  if (const auto colon = flat.rfind("::"); colon != std::string::npos) flat = flat.substr(colon + 2);
  while (!flat.empty() && flat.back() == ' ') flat.pop_back();
  return flat;
}

Crosscheck crosscheck(const Results& r, const std::string& benchmark, const std::vector<NcuKernel>& ncu) {
  const auto it = std::find_if(r.benchmarks.begin(), r.benchmarks.end(),
                               [&](const BenchmarkResult& b) { return b.name == benchmark; });
  if (it == r.benchmarks.end()) throw InputError("crosscheck: no benchmark " + benchmark + " in the results");
  const BenchmarkResult& b = *it;
  if (!b.counters || !b.counters->trace || !b.counters->trace->ok())
    throw InputError("crosscheck: " + benchmark + " has no kernel trace to tell its kernels (run it with --counters)");
  // One run of the benchmark: the first launches ncu profiled, one after another, that are its
  // kernels in launch order (the cache flush and the clock readings between runs are others).
  const std::vector<std::string>& want = b.counters->trace->kernels;
  Crosscheck c;
  c.benchmark = benchmark;
  Counters theirs;
  std::size_t first = ncu.size();
  for (std::size_t i = 0; i + want.size() <= ncu.size() && first == ncu.size(); ++i) {
    bool all = true;
    for (std::size_t k = 0; k < want.size() && all; ++k)
      all = kernel_base_name(ncu[i + k].name) == kernel_base_name(want[k]);
    if (all) first = i;
  }
  if (first == ncu.size())
    throw InputError(fmt::format("crosscheck: ncu profiled no whole run of {} ({} kernel{}, the first {})", benchmark,
                                 want.size(), want.size() == 1 ? "" : "s", kernel_base_name(want[0])));
  for (std::size_t k = 0; k < want.size(); ++k) {
    c.kernels.push_back(ncu[first + k].name);
    for (const auto& [m, v] : ncu[first + k].metrics) theirs.values[m] += v;
  }
  cupti::derive(theirs);
  const Counters& ours = *b.counters;
  auto at = [](const std::map<Level, double>& m, Level k) -> std::optional<double> {
    auto i = m.find(k);
    if (i == m.end()) return std::nullopt;
    return i->second;
  };
  // Time two ways: ncu's is each kernel's own (kernel replay), summed over the run. The kernel
  // trace's busy time (the time a kernel ran, its intervals joined) is the same thing; its span,
  // first start to last end, also holds the gaps of kernels launched as they come (25-55 us a
  // kernel under the Activity API on an H200). CUPTI's gpu__time_duration covers the profiled
  // range, which also holds the first launch and the synchronize before it closes
  // (docs/counters.md), so it reads longer by a few µs.
  std::optional<double> busy;
  if (!b.counters->trace->busy_s.empty()) busy = quantile(b.counters->trace->busy_s, 0.5);
  c.rows.push_back({"kernel time (CUPTI: the traced kernels' own time, median run)", "s", theirs.time_s, busy,
                    b.measurement ? std::optional<double>(b.measurement->stats.median) : std::nullopt});
  c.rows.push_back({"range time (CUPTI: the profiled range, launch and synchronize in it)", "s", theirs.time_s,
                    ours.time_s, c.rows.back().declared});
  c.rows.push_back({"HBM bytes (read + write)", "B", at(theirs.bytes, Level::dram), at(ours.bytes, Level::dram),
                    b.level == Level::dram ? std::optional<double>(b.bytes) : std::nullopt});
  c.rows.push_back({"FLOPs" + (theirs.flops_formula.empty() ? std::string() : " (" + theirs.flops_formula + ")"),
                    "FLOP", theirs.flops, ours.flops, b.flops > 0 ? std::optional<double>(b.flops) : std::nullopt});
  c.rows.push_back({"L2 bytes", "B", at(theirs.bytes, Level::l2), at(ours.bytes, Level::l2), std::nullopt});
  return c;
}

std::string render_crosscheck_markdown(const Crosscheck& c) {
  std::string s = fmt::format("#### {}: Nsight Compute beside roofbench\n\n", md_code(c.benchmark));
  s += "ncu launches taken (one run): ";
  for (std::size_t i = 0; i < c.kernels.size(); ++i) s += (i ? ", " : "") + md_code(kernel_base_name(c.kernels[i]));
  s += "\n\n| quantity | ncu | roofbench CUPTI | ncu / CUPTI | declared (time: CUDA-event median) | ncu / declared |\n";
  s += "|---|---:|---:|---:|---:|---:|\n";
  auto num = [](const std::optional<double>& v, const std::string& unit) {
    if (!v) return std::string("—");
    return unit == "s" ? duration(*v) : si(*v, unit);
  };
  auto ratio = [](const std::optional<double>& a, const std::optional<double>& b) {
    if (!a || !b || *b == 0) return std::string("—");
    return fmt::format("{:.3f}", *a / *b);
  };
  for (const auto& r : c.rows)
    s += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_cell(r.quantity), num(r.ncu, r.unit), num(r.cupti, r.unit),
                     ratio(r.ncu, r.cupti), num(r.declared, r.unit), ratio(r.ncu, r.declared));
  return s;
}

nlohmann::json crosscheck_json(const Crosscheck& c) {
  auto value = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"quantity", r.quantity}, {"unit", r.unit}, {"ncu", value(r.ncu)}, {"cupti", value(r.cupti)},
                    {"declared", value(r.declared)}});
  return {{"benchmark", c.benchmark}, {"kernels", c.kernels}, {"rows", std::move(rows)}};
}

}  // namespace roofbench
