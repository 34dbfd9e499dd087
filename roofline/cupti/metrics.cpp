#include "roofline/cupti/metrics.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <unordered_set>
#include <utility>

#include "bench/stats.h"
#include "roofbench/types.h"

namespace roofbench::cupti {
namespace {

const char* kTime = "gpu__time_duration.sum";                 // ns
const char* kCycles = "sm__cycles_elapsed.avg";               // per SM
const char* kClock = "sm__cycles_elapsed.avg.per_second";     // Hz
const char* kDramRead = "dram__bytes_read.sum";
const char* kDramWrite = "dram__bytes_write.sum";
const char* kL2Sectors = "lts__t_sectors_srcunit_tex.sum";    // 32-byte sectors
const char* kL1Bytes = "l1tex__t_bytes.sum";
// TMA's bulk copies into shared memory bypass the LSU path that l1tex__t_bytes counts (reference
// §8 item 7): a wgmma GEMM fed by TMA would show almost no L1 traffic without them.
const char* kTmaReadBytes = "l1tex__m_xbar2l1tex_read_bytes_pipe_tma.sum";
const char* kThreadInst = "smsp__thread_inst_executed.sum";
const char* kWarpInst = "smsp__inst_executed.sum";
const char* kBranchTargets = "smsp__sass_branch_targets.sum";
const char* kBranchUniform = "smsp__sass_branch_targets_threads_uniform.sum";

std::string sass_op(char prefix, const char* op) {
  return fmt::format("smsp__sass_thread_inst_executed_op_{}{}_pred_on.sum", prefix, op);
}

char sass_prefix(Precision p) {
  switch (p) {
    case Precision::fp64: return 'd';
    case Precision::fp32: return 'f';
    case Precision::fp16:
    case Precision::bf16: return 'h';  // HADD2/HMUL2/HFMA2 and their .BF16 forms
  }
  return 'f';
}

// The tensor path's ops by input type. FP16 counts both FP16 and FP32 accumulation.
std::string tensor_ops(Precision input) {
  return input == Precision::bf16 ? "sm__ops_path_tensor_src_bf16_dst_fp32.sum" : "sm__ops_path_tensor_src_fp16.sum";
}

// The ops a tensor-path counter counts, by CUPTI's naming:
// sm__ops_path_tensor_[op_<instruction>_]src_<type>[_dst_<type>][_sparsity_<on|off>].sum, each part
// left out meaning all of them (src_fp16 counts HMMA's and HGMMA's, to FP16 and to FP32, sparse
// or not). A name of another shape counts only what it names. Other rollups than .sum are not
// counts of ops.
struct TensorPath {
  std::array<std::string, 4> parts;  // op, src, dst, sparsity; "" for all
  bool shaped() const { return !parts[1].empty(); }  // every name of the shape above has a src
};

std::optional<TensorPath> tensor_path(const std::string& name) {
  static const std::string prefix = "sm__ops_path_tensor_", suffix = ".sum";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  TensorPath t;
  // Cut "_<key>_<value>" off the end, last key first.
  auto take = [&rest](const std::string& key, std::string& into) {
    const std::size_t at = rest.rfind("_" + key + "_");
    if (at == std::string::npos) return;
    into = rest.substr(at + key.size() + 2);
    rest.erase(at);
  };
  take("sparsity", t.parts[3]);
  take("dst", t.parts[2]);
  if (rest.rfind("op_", 0) == 0) {
    const std::size_t end = rest.find("_src_");
    t.parts[0] = rest.substr(3, end == std::string::npos ? std::string::npos : end - 3);
    rest.erase(0, end == std::string::npos ? rest.size() : end + 1);
  }
  if (rest.rfind("src_", 0) == 0) t.parts[1] = rest.substr(4);
  return t;
}

// Whether `outer` counts every op `inner` does (two different names).
bool holds(const TensorPath& outer, const TensorPath& inner) {
  if (!outer.shaped() || !inner.shaped()) return false;
  for (std::size_t i = 0; i < 4; ++i)
    if (!outer.parts[i].empty() && outer.parts[i] != inner.parts[i]) return false;
  return true;
}

// Whether some op is counted by both (two different names, neither holding the other: for
// op_hmma_src_fp16 and src_fp16_dst_fp32, HMMA's FP16 to FP32).
bool overlap(const TensorPath& a, const TensorPath& b) {
  if (!a.shaped() || !b.shaped()) return false;
  for (std::size_t i = 0; i < 4; ++i)
    if (!a.parts[i].empty() && !b.parts[i].empty() && a.parts[i] != b.parts[i]) return false;
  return true;
}

std::optional<double> value(const Counters& c, const std::string& name) {
  auto it = c.values.find(name);
  if (it == c.values.end()) return std::nullopt;
  return it->second;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

// Edit distance of a and b when it is at most `limit`, else limit + 1. Only the band |i - j| <=
// limit is computed, and a row whose every cell is over the limit ends it (Ukkonen's cut-off), so
// a long or unrelated name costs next to nothing: a user's --metrics can be any text.
std::size_t bounded_edit_distance(const std::string& a, const std::string& b, std::size_t limit) {
  const std::size_t over = limit + 1;
  const std::size_t la = a.size(), lb = b.size();
  if ((la > lb ? la - lb : lb - la) > limit) return over;
  std::vector<std::size_t> prev(lb + 1), cur(lb + 1);
  for (std::size_t j = 0; j <= lb; ++j) prev[j] = std::min(j, over);
  for (std::size_t i = 1; i <= la; ++i) {
    const std::size_t lo = i > limit ? i - limit : 1;
    const std::size_t hi = std::min(lb, i + limit);
    cur[lo - 1] = lo == 1 ? std::min(i, over) : over;
    std::size_t row_min = cur[lo - 1];
    for (std::size_t j = lo; j <= hi; ++j) {
      std::size_t v = std::min(prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1), cur[j - 1] + 1);
      if (j + 1 <= i + limit) v = std::min(v, prev[j] + 1);  // prev[j] lies inside the last row's band
      cur[j] = std::min(v, over);
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min >= over) return over;
    std::swap(prev, cur);
  }
  return prev[lb];
}

std::vector<std::string> default_metrics(const BenchmarkResult& b) {
  std::vector<std::string> m = {kTime, kCycles, kClock, kDramRead, kDramWrite, kL2Sectors, kL1Bytes};
  if (b.unit == Unit::tensor) {
    m.push_back(tensor_ops(b.precision));
    m.push_back(kTmaReadBytes);
  } else {
    const char x = sass_prefix(b.roof_precision());
    for (const char* op : {"add", "mul", "fma"}) m.push_back(sass_op(x, op));
  }
  if (b.family == "divergence") {
    for (const char* name : {kThreadInst, kWarpInst, kBranchTargets, kBranchUniform}) m.push_back(name);
  }
  return m;
}

std::vector<std::string> parse_metric_list(const std::string& csv) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = csv.find(',', start);
    const std::string name = trim(csv.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (name.empty()) throw InputError("--metrics: empty metric name at character " + std::to_string(start + 1) +
                                       " (expected a,b,c)");
    if (name.size() > kMaxMetricName)
      throw InputError(fmt::format("--metrics: a name of {} characters at character {} (the longest a metric can be "
                                   "is {}): '{}...'",
                                   name.size(), start + 1, kMaxMetricName, name.substr(0, 40)));
    if (seen.insert(name).second) out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> near_names(const std::string& name, const std::vector<std::string>& known, std::size_t n) {
  // The base name is what users misspell; the rollup (.sum, .avg.per_second) is kept as typed.
  const std::size_t dot = name.find('.');
  const std::string base = name.substr(0, dot);
  const std::string rollup = dot == std::string::npos ? "" : name.substr(dot);
  const std::size_t limit = near_limit(base.size());
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& k : known) {
    const std::size_t d = bounded_edit_distance(base, k, limit);
    if (d > limit) continue;
    std::size_t prefix = 0;
    while (prefix < k.size() && prefix < base.size() && k[prefix] == base[prefix]) ++prefix;
    // Distance first; among equals, the longer shared prefix (same unit and counter family).
    scored.push_back({d * 1000 + (1000 - std::min<std::size_t>(prefix, 999)), k});
  }
  const std::size_t keep = std::min(n, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < keep; ++i) out.push_back(scored[i].second + rollup);
  return out;
}

void derive(Counters& c) {
  c.flops.reset();
  c.flops_formula.clear();
  c.bytes.clear();
  c.time_s = c.sm_clock_hz = c.threads_per_instruction = c.branch_uniformity = std::nullopt;
  if (c.values.empty()) return;

  // FLOPs: every FP family present, each as add + mul + 2·fma thread instructions. Half
  // precision counts HADD2/HMUL2/HFMA2 instructions, two lanes each (as Nsight Compute's half
  // roofline does): 2·hadd + 2·hmul + 4·hfma. Tensor ops are the tensor path's math ops.
  double flops = 0;
  bool any = false;
  std::string formula;
  const auto add_term = [&](double v, const std::string& what) {
    flops += v;
    any = true;
    formula += (formula.empty() ? "" : " + ") + what;
  };
  for (const char x : {'d', 'f', 'h'}) {
    const auto a = value(c, sass_op(x, "add")), m = value(c, sass_op(x, "mul")), f = value(c, sass_op(x, "fma"));
    if (!a && !m && !f) continue;
    const double lanes = x == 'h' ? 2 : 1;
    add_term(lanes * (a.value_or(0) + m.value_or(0) + 2 * f.value_or(0)),
             x == 'h' ? "2·hadd + 2·hmul + 4·hfma (SASS, per thread)"
                      : fmt::format("{0}add + {0}mul + 2·{0}fma (SASS, per thread)", x));
  }
  // Tensor ops: each counter that no other listed one holds, so that a list with an aggregate
  // and its parts (a user's --metrics) counts each op once. Two left that count some of the
  // same ops without either holding the other leave FLOPs underived, and say why.
  std::vector<std::pair<const std::string*, TensorPath>> tensor, counted;
  for (const auto& [name, v] : c.values)
    if (auto t = tensor_path(name)) tensor.emplace_back(&name, std::move(*t));
  for (const auto& e : tensor) {
    const bool held = std::any_of(tensor.begin(), tensor.end(),
                                  [&](const auto& o) { return o.first != e.first && holds(o.second, e.second); });
    if (!held) counted.push_back(e);
  }
  std::string overlapping;
  for (std::size_t i = 0; i < counted.size() && overlapping.empty(); ++i)
    for (std::size_t j = i + 1; j < counted.size() && overlapping.empty(); ++j)
      if (overlap(counted[i].second, counted[j].second))
        overlapping = fmt::format("not derived: {} and {} count some of the same tensor ops", *counted[i].first,
                                  *counted[j].first);
  for (const auto& [name, t] : counted) add_term(c.values.at(*name), *name + " (tensor ops)");
  if (!overlapping.empty()) {
    c.flops_formula = overlapping;
  } else if (any) {
    c.flops = flops;
    c.flops_formula = formula;
  }

  const auto rd = value(c, kDramRead), wr = value(c, kDramWrite);
  if (rd || wr) c.bytes[Level::dram] = rd.value_or(0) + wr.value_or(0);
  if (const auto s = value(c, kL2Sectors)) c.bytes[Level::l2] = 32 * *s;
  if (const auto b = value(c, kL1Bytes)) c.bytes[Level::l1] = *b + value(c, kTmaReadBytes).value_or(0);

  if (const auto t = value(c, kTime)) c.time_s = *t * 1e-9;
  if (const auto hz = value(c, kClock)) c.sm_clock_hz = *hz;
  const auto ti = value(c, kThreadInst), wi = value(c, kWarpInst);
  if (ti && wi && *wi > 0) c.threads_per_instruction = *ti / *wi;
  const auto bt = value(c, kBranchTargets), bu = value(c, kBranchUniform);
  if (bt && bu && *bt > 0) c.branch_uniformity = *bu / *bt;
}

Concurrency concurrency(const std::vector<Interval>& intervals) {
  Concurrency c;
  if (intervals.empty()) return c;
  // A sweep over the starts (+1) and ends (-1), ends first at a tie: back-to-back is not at once.
  std::vector<std::pair<std::uint64_t, int>> edges;
  std::uint64_t first = intervals.front().start, last = intervals.front().end;
  for (const auto& iv : intervals) {
    const std::uint64_t end = std::max(iv.start, iv.end);
    edges.emplace_back(iv.start, +1);
    edges.emplace_back(end, -1);
    first = std::min(first, iv.start);
    last = std::max(last, end);
  }
  std::sort(edges.begin(), edges.end());
  int active = 0;
  std::uint64_t busy = 0, overlap = 0, at = first;
  for (const auto& [t, step] : edges) {
    if (active >= 1) busy += t - at;
    if (active >= 2) overlap += t - at;
    at = t;
    active += step;
  }
  c.span_s = static_cast<double>(last - first) * 1e-9;
  c.busy_s = static_cast<double>(busy) * 1e-9;
  c.overlap_s = static_cast<double>(overlap) * 1e-9;
  return c;
}

std::optional<TraceCheck> trace_check(const Counters& c, const Measurement& m) {
  if (!c.trace || !c.trace->ok() || m.samples_s.empty()) return std::nullopt;
  TraceCheck t;
  t.events_s = m.stats.median;
  t.span_s = summarize(c.trace->span_s).median;
  t.busy_s = summarize(c.trace->busy_s).median;
  return t;
}

std::string trace_warning(const TraceCheck& t) {
  const double diff = t.outside_s();
  const double slack = std::max(kTraceTolerance * t.events_s, kTraceFloorS);
  if (std::abs(diff) <= slack) return "";
  auto us = [](double s) { return fmt::format("{:.1f} us", s * 1e6); };
  if (diff < 0) {
    // The traced runs are launched from the host as they come (the timed samples queue behind a
    // held stream), so their span may hold the host's launch gaps: only events shorter than the
    // time the kernels themselves ran are off.
    if (t.events_s >= t.busy_s - slack) return "";
    return fmt::format(
        "timing: the CUDA events' median ({}) is shorter than the time the kernels ran in CUPTI's trace ({}); "
        "event timing is off here (another stream or process on the GPU?)",
        us(t.events_s), us(t.busy_s));
  }
  std::string gaps;
  if (t.gaps_s() > kTraceFloorS) gaps = fmt::format(", and {} of the span lies between its kernels", us(t.gaps_s()));
  return fmt::format(
      "timing: the CUDA events' median ({}) is {:.0f}% above the kernels' own span in CUPTI's trace ({}): {} of each "
      "sample is launch overhead outside the kernels{}; the rates use the event time",
      us(t.events_s), 100 * diff / t.span_s, us(t.span_s), us(diff), gaps);
}

std::string flops_warning(const Counters& c, double declared_flops) {
  if (!c.ok() || !c.flops || *c.flops != 0 || !(declared_flops > 0)) return "";
  double moved = 0;
  for (const Level l : {Level::l1, Level::l2})
    if (const auto it = c.bytes.find(l); it != c.bytes.end()) moved += it->second;
  if (!(moved > 0)) return "";
  return fmt::format(
      "counters: no FLOPs counted where {:.4g} are declared, though the kernels moved {:.4g} bytes through L1 and L2: "
      "the counters count {}, so work of another kind (a compare, as relu's) reads 0, and so do kernels launched from "
      "a CUDA graph, whose SASS instruction counts they miss; the counted FLOPs of this benchmark are no measurement",
      declared_flops, moved, c.flops_formula.empty() ? "FP instructions (SASS) and tensor ops" : c.flops_formula);
}

std::string kernel_name(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return strip_signature(status == 0 && d ? d.get() : mangled);
}

std::string strip_signature(const std::string& demangled) {
  std::string s = demangled;
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  // The parameter list: the first "(" outside template arguments that does not open
  // "(anonymous namespace)".
  static const std::string anon = "(anonymous namespace)";
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '<') {
      ++depth;
    } else if (ch == '>') {
      depth = std::max(0, depth - 1);
    } else if (ch == '(' && depth == 0) {
      if (s.compare(i, anon.size(), anon) == 0) {
        i += anon.size() - 1;
        continue;
      }
      s.erase(i);
      break;
    }
  }
  return s;
}

}  // namespace roofbench::cupti
