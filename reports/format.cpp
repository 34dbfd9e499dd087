#include "reports/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "bench/host_contention.h"
#include "bench/stats.h"
#include "roofline/model.h"  // samples_clock_hz

namespace roofbench {

std::string intensity(double v) {
  if (!std::isfinite(v)) return "—";
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  if (v >= 0.1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\n':
      case '\r': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\\':
      case '`':
      case '[':
      case ']':
      case '|':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string md_code(const std::string& s) {
  std::string body;
  std::size_t run = 0, longest = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '\n' || c == '\r')
      body += ' ';
    else if (c == '|')
      body += "\\|";  // GFM splits table cells at a bare pipe even inside a code span
    else
      body += c;
  }
  const std::string fence(longest + 1, '`');
  // A span that starts or ends with a backtick needs a space between it and the fence (CommonMark
  // strips one space on each side).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`' || body.front() == ' ');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string ceiling_label(const Ceiling& c) {
  if (c.kind == CeilingKind::transcendental)  // "sin calls (simd)": a rate of one math function
    return c.function.value_or("?") + " calls" + (c.unit ? " (" + to_string(*c.unit) + ")" : std::string());
  if (c.kind == CeilingKind::launch)  // "omp_region launches": a rate of one launch path
    return c.function.value_or("?") + " launches";
  std::istringstream in(c.name);
  std::string tok, out;
  bool first = true;
  while (std::getline(in, tok, '_')) {
    if (first || tok == "fma" || tok == "l1" || tok == "l2" || tok == "l3" || tok == "dram" || tok == "hbm")
      for (auto& ch : tok) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out += (first ? "" : " ") + tok;
    first = false;
  }
  if (c.kind == CeilingKind::compute && c.unit) out += " (" + to_string(*c.unit) + ")";
  return out;
}

std::string ceiling_value(const Ceiling& c) {
  return si(c.value, c.value_unit);
}

std::string device_line(const Results& r) {
  const auto& d = r.device;
  std::string s = d.value("name", std::string("unknown device"));
  if (d.value("kind", "") == "cuda") {
    // The NVIDIA driver where NVML gave it (files from before it have the CUDA driver API's alone).
    const auto nvidia = d.find("nvidia_driver_version");
    const std::string driver = nvidia != d.end() && nvidia->is_string()
                                   ? fmt::format("driver {} (CUDA {})", nvidia->get<std::string>(),
                                                 d.value("driver_version", "?"))
                                   : fmt::format("driver {}", d.value("driver_version", "?"));
    s += fmt::format(" (cuda:{}, sm {}, {} SMs, {}, runtime {})", d.value("index", 0),
                     d.value("compute_capability", "?"), d.value("sm_count", 0), driver, d.value("runtime_version", "?"));
  }
  else
    s += fmt::format(" (cpu, {} threads, {})", d.value("threads", 0), d.value("isa", "?"));
  return s;
}

std::string provenance_line(const Results& r) {
  const auto& p = r.provenance;
  std::string commit = p.value("git_commit", "unknown");
  if (commit.size() > 12) commit = commit.substr(0, 12);
  if (p.value("git_dirty", false)) commit += " (dirty)";
  std::string line = fmt::format("roofbench {} · commit {} · {} · host {}", p.value("roofbench_version", "?"), commit,
                                 p.value("utc_time", "?"), p.value("host", "?"));
  if (const auto t = run_time(r)) {
    line += fmt::format(" · run {:.0f} s", t->wall_s);
    if (t->parts > 1) line += fmt::format(" in {} parts", t->parts);
    if (t->timed_s > 0)
      line += fmt::format(", {} of it in timed samples ({:.1f}×)", duration(t->timed_s), t->wall_s / t->timed_s);
    if (t->passes_s > 0)
      line += fmt::format(", {} in energy passes and sustained holds ({:.1f}× the two)", duration(t->passes_s),
                          t->wall_s / (t->timed_s + t->passes_s));
  }
  // What the host took from the run (bench/host_contention.h), or from each part of a merged one.
  if (const auto took = contention_text(p.value("host_contention", nlohmann::json()), 0.01, true))
    line += " · " + *took;
  if (const auto from = p.find("merged_from"); from != p.end() && from->is_array())
    for (std::size_t i = 0; i < from->size(); ++i)
      if ((*from)[i].is_object())
        if (const auto took = contention_text((*from)[i].value("host_contention", nlohmann::json()), 0.01, true))
          line += fmt::format(" · part {}: {}", i + 1, *took);
  if (r.partial) line += " · " + partial_text(*r.partial);
  return line;
}

std::string host_time_line(const Results& r, std::size_t top) {
  static const std::pair<const char*, const char*> kSteps[] = {
      {"sample", "sampling"},   {"verify", "verifying"}, {"recheck", "checking again"},
      {"prepare", "preparing"}, {"make", "making"},      {"after", "counters"}};
  std::map<std::string, double> sum;
  std::vector<std::pair<double, const BenchmarkResult*>> outside;  // each benchmark's time outside sampling
  for (const auto& b : r.benchmarks) {
    if (b.host_s.empty()) continue;
    double o = 0;
    for (const auto& [step, s] : b.host_s) {
      sum[step] += s;
      if (step != "sample") o += s;
    }
    outside.push_back({o, &b});
  }
  if (sum.empty()) return "";
  std::string s = "host time of the benchmarks' steps:";
  bool first = true;
  for (const auto& [step, label] : kSteps)
    if (const auto it = sum.find(step); it != sum.end()) {
      s += fmt::format("{} {} {}", first ? "" : ",", label, duration(it->second));
      first = false;
    }
  // Where the sampling went (Measurement::sampling_s), the largest part first.
  static const std::map<std::string, const char*> kParts = {
      {"hold", "holds"},        {"warmup", "warm-ups"}, {"inputs", "fresh inputs"},  {"flush", "flushes"},
      {"readings", "readings"}, {"runs", "runs"},       {"cooldown", "cool-downs"},  {"checks", "spot checks"},
      {"energy", "energy passes"}};
  std::map<std::string, double> parts;
  std::size_t samples = 0;
  for (const auto& b : r.benchmarks)
    if (b.measurement) {
      for (const auto& [part, t] : b.measurement->sampling_s) parts[part] += t;
      if (!b.measurement->sampling_s.empty()) samples += b.measurement->samples_s.size();
    }
  if (!parts.empty()) {
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [part, t] : parts) order.push_back({t, part});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    s += fmt::format("; of sampling ({} samples):", samples);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto it = kParts.find(order[i].second);
      s += fmt::format("{} {} {}", i ? "," : "", it == kParts.end() ? order[i].second.c_str() : it->second,
                       duration(order[i].first));
    }
  }
  std::stable_sort(outside.begin(), outside.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  s += "; the most outside sampling:";
  for (std::size_t i = 0; i < std::min(top, outside.size()); ++i) {
    const BenchmarkResult& b = *outside[i].second;
    // its largest step outside sampling
    std::string big;
    double big_s = -1;
    for (const auto& [step, t] : b.host_s)
      if (step != "sample" && t > big_s) big = step, big_s = t;
    s += fmt::format("{} {} ({} {})", i ? "," : "", b.name, big, duration(big_s));
  }
  return s;
}

namespace {
std::optional<double> wall_of(const nlohmann::json& provenance) {
  const auto w = provenance.find("wall_s");
  if (w == provenance.end() || !w->is_number() || w->get<double>() < 0) return std::nullopt;
  return w->get<double>();
}
double sum_of(const Measurement& m) {
  double s = 0;
  for (double x : m.samples_s) s += x;
  return s;
}
}  // namespace

std::optional<RunTime> run_time(const Results& r) {
  RunTime t;
  // Whether the ceilings' samples were taken by the runs this file stands for. A merged file keeps
  // one of each ceiling: where several parts measured them, the others' samples are gone and the
  // ratio errs high (the GPU visit's merge has one part that measures them, the others borrow).
  bool measured_ceilings = false;
  if (const auto from = r.provenance.find("merged_from"); from != r.provenance.end() && from->is_array()) {
    if (from->empty()) return std::nullopt;
    t.parts = from->size();
    for (const auto& part : *from) {
      const auto w = part.is_object() ? wall_of(part) : std::nullopt;
      if (!w) return std::nullopt;
      t.wall_s += *w;
      const auto settings = part.is_object() ? part.find("settings") : part.end();
      if (settings == part.end() || !settings->is_object() || !settings->contains("ceilings_from"))
        measured_ceilings = true;
    }
  } else {
    const auto w = wall_of(r.provenance);
    if (!w) return std::nullopt;
    t.wall_s = *w;
    measured_ceilings = !(r.settings.is_object() && r.settings.contains("ceilings_from"));
  }
  // A sustained hold (held_s, with or without an energy counter to read across it) and an energy
  // pass after the samples (a measurement has at most one energy_run: the hold's or the pass's).
  auto pass_of = [](const Measurement& m) {
    return m.held_s + (m.energy_run && m.energy_run->kind == "pass" ? m.energy_run->seconds : 0.0);
  };
  for (const auto& b : r.benchmarks)
    if (b.measurement) {
      t.timed_s += sum_of(*b.measurement);
      t.passes_s += pass_of(*b.measurement);
    }
  if (measured_ceilings)
    for (const auto& c : r.ceilings) {
      t.timed_s += sum_of(c.measurement);
      if (c.measurement_end) t.timed_s += sum_of(*c.measurement_end);
      for (const auto* m : {&c.measurement, c.measurement_end ? &*c.measurement_end : nullptr,
                            c.measurement_sustained ? &*c.measurement_sustained : nullptr,
                            c.measurement_again ? &*c.measurement_again : nullptr})
        if (m) t.passes_s += pass_of(*m);
    }
  return t;
}

std::string partial_text(const Partial& p) {
  return fmt::format("PARTIAL: {} of {} benchmarks finished ({})", p.completed, p.planned,
                     p.reason == "running" ? "the run had not ended when this was written" : p.reason);
}

int count_implausible(const Results& r) {
  return static_cast<int>(std::count_if(r.benchmarks.begin(), r.benchmarks.end(),
                                        [](const BenchmarkResult& b) { return b.implausible(); }));
}

std::string implausible_text(int n) {
  return fmt::format(
      "roofbench: {} benchmark(s) IMPLAUSIBLE: above their roof by more than the run's own noise, faster than this "
      "machine goes. Each warning names the likely cause: work declared above what the kernel does, a timer that was "
      "fooled, a kernel that skipped work, or a ceiling too weak for its shape. Their numbers are kept in results.json "
      "but drawn as no "
      "point and never called FASTER.\n",
      n);
}

std::string flop_rate_text(const BenchmarkResult& b) {
  if (!b.measurement || b.flops <= 0) return "—";
  return si(b.flops / b.measurement->stats.median, "FLOP/s");
}

std::string byte_rate_text(const BenchmarkResult& b) {
  if (!b.measurement || b.bytes <= 0) return "—";
  return si(b.bytes / b.measurement->stats.median, "B/s");
}

std::string status_text(const BenchmarkResult& b) {
  if (!b.measured()) return "FAILED: " + b.error;
  if (b.implausible()) return fmt::format("IMPLAUSIBLE: {:.0f}% of its roof", b.placement->roof_pct);
  if (b.timing_only) return "UNVERIFIED (timing only)";
  if (!b.warnings.empty()) return "ok, " + std::to_string(b.warnings.size()) + " warning(s)";
  return "ok";
}

std::string ceiling_passes(const Ceiling& c) {
  if (!c.value_end && !c.value_sustained) return "";
  // The numbers in the prefix of the largest, so that they read side by side.
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  for (double big = std::max({c.value_start, c.value_end.value_or(0), c.value_sustained.value_or(0)});
       big >= 999.5 && i < 6; big /= 1000)
    ++i;
  const double scale = std::pow(1000.0, i);
  std::string text = fmt::format("{:.3g}", c.value_start / scale);
  if (c.value_end) text += fmt::format(" / {:.3g}", *c.value_end / scale);
  if (c.value_sustained) text += fmt::format(", sustained {:.3g}", *c.value_sustained / scale);
  return text + fmt::format(" {}{}", prefixes[i], c.value_unit);
}

CeilingReference ceiling_reference(const Ceiling& c) {
  CeilingReference out;
  auto add = [&](const std::optional<ReferenceValue>& rv, const char* what) {
    if (!rv || rv->value <= 0) return;
    const char* sep = out.value.empty() ? "" : ", ";
    out.value += sep + si(rv->value, c.value_unit) + " (" + what + ")";
    out.ratio += sep + fmt::format("{:.1f}%", 100 * c.value / rv->value);
  };
  add(c.datasheet, "datasheet");
  add(c.theoretical, "theoretical");
  return out;
}

// The suite's ceiling a vendor routine is the reference for, and its other forms: ceilings named
// after it with a suffix (`dram_copy_bulk`, the copy by TMA bulk copies, beside `dram_copy`).
std::vector<std::string> vendor_reference_lines(const Results& r) {
  std::vector<std::string> lines;
  for (const auto& vendor : r.ceilings) {
    if (!vendor.reference_for || vendor.value <= 0) continue;
    const std::string& name = *vendor.reference_for;
    for (const auto& ours : r.ceilings) {
      const bool form = ours.name == name || (ours.name.size() > name.size() + 1 &&
                                              ours.name.compare(0, name.size() + 1, name + "_") == 0);
      if (!form || ours.value_unit != vendor.value_unit) continue;  // no ratio of unlike rates
      lines.push_back(fmt::format("{} {} is {:.2f}× {} {}", ceiling_label(ours), ceiling_value(ours),
                                  ours.value / vendor.value, ceiling_label(vendor), ceiling_value(vendor)));
    }
  }
  return lines;
}

std::vector<std::string> sustained_lines(const Results& r) {
  std::vector<std::string> lines;
  auto ghz = [](const std::optional<double>& hz) {
    return hz ? fmt::format(" at {:.2f} GHz", *hz / 1e9) : std::string(" (clock not read)");
  };
  for (const auto& c : r.ceilings) {
    if (!c.value_sustained || !c.measurement_sustained) continue;
    const Measurement& held = *c.measurement_sustained;
    std::string watts;
    for (auto w = held.sample_power_w.rbegin(); w != held.sample_power_w.rend() && watts.empty(); ++w)
      if (*w > 0) watts = fmt::format(", {:.0f} W at its end", *w);
    const double burst = c.value_end ? std::max(c.value_start, *c.value_end) : c.value_start;
    lines.push_back(fmt::format("{}: burst {}{}; held {:.3g} s, {} ({:.0f}% of the burst){}{}", ceiling_label(c),
                                si(burst, c.value_unit), ghz(samples_clock_hz(c.measurement)), held.held_s,
                                si(*c.value_sustained, c.value_unit), burst > 0 ? 100 * *c.value_sustained / burst : 0.0,
                                ghz(samples_clock_hz(held)), watts));
  }
  return lines;
}

std::optional<Spread> spread_of(const Results& r, double min_median_s, double target) {
  Spread s;
  s.min_median_s = min_median_s;
  s.target = target;
  std::vector<double> rel;
  for (const auto& b : r.benchmarks) {
    if (!b.measurement || b.measurement->stats.median < min_median_s) continue;
    const double x = b.measurement->stats.rel_iqr();
    rel.push_back(x);
    if (x <= target) ++s.within;
    if (rel.size() == 1 || x > s.widest_rel_iqr) {
      s.widest_rel_iqr = x;
      s.widest = b.name;
    }
  }
  if (rel.empty()) return std::nullopt;
  s.kernels = rel.size();
  s.median_rel_iqr = quantile(rel, 0.5);
  return s;
}

std::string spread_text(const Spread& s) {
  return fmt::format("of the {} kernel{} with a median of at least {}, {} {} an IQR within {:.1f}% of the median "
                     "(median {:.2f}%; widest {:.1f}%, {})",
                     s.kernels, s.kernels == 1 ? "" : "s", duration(s.min_median_s), s.within,
                     s.within == 1 ? "has" : "have", 100 * s.target, 100 * s.median_rel_iqr, 100 * s.widest_rel_iqr,
                     s.widest);
}

std::string ratio_text(double measured, double declared) {
  return declared > 0 ? fmt::format("{:.2f}×", measured / declared) : "—";
}

std::string counter_line(const Counters& c, double declared_flops, double declared_bytes) {
  std::vector<std::string> parts;
  if (c.flops)
    parts.push_back(fmt::format("FLOPs {} (declared {})", si(*c.flops, ""), si(declared_flops, "")));
  if (auto it = c.bytes.find(Level::dram); it != c.bytes.end())
    parts.push_back(fmt::format("HBM {} (declared {}, {})", si(it->second, "B"), si(declared_bytes, "B"),
                                ratio_text(it->second, declared_bytes)));
  if (auto it = c.bytes.find(Level::l2); it != c.bytes.end()) parts.push_back("L2 " + si(it->second, "B"));
  if (auto it = c.bytes.find(Level::l1); it != c.bytes.end()) parts.push_back("L1 " + si(it->second, "B"));
  if (c.threads_per_instruction) parts.push_back(fmt::format("{:.1f} threads/instruction", *c.threads_per_instruction));
  if (c.branch_uniformity) parts.push_back(fmt::format("branches {:.0f}% uniform", 100 * *c.branch_uniformity));
  if (parts.empty()) return fmt::format("{} metrics", c.values.size());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace roofbench
