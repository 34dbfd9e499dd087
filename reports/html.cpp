#include <fmt/format.h>

#include <algorithm>

#include "reports/format.h"
#include "reports/tables.h"
#include "reports/report.h"
#include "reports/svg.h"

namespace roofbench {

namespace {
std::string td(const std::string& s, bool num = false) {
  return fmt::format("<td{}>{}</td>", num ? R"( class="num")" : "", xml_escape(s));
}
}  // namespace

std::string render_html(const Results& r) {
  std::string s;
  s += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  s += fmt::format("<title>roofbench: {}</title>\n", xml_escape(r.device.value("name", "device")));
  s += R"(<style>
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0 2em; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td { color: #b00000; }
.meta { color: #555; font-size: 13px; }
code { font-size: 12px; }
</style>
</head>
<body>
)";
  s += fmt::format("<h1>roofbench: {}</h1>\n", xml_escape(device_line(r)));
  s += fmt::format("<p class=\"meta\">{}<br>command: <code>{}</code>{}</p>\n", xml_escape(provenance_line(r)),
                   xml_escape(r.provenance.value("command_line", "")),
                   host_time_line(r).empty() ? "" : "<br>" + xml_escape(host_time_line(r)));
  s += render_svg(r);

  // Everything the run recorded about the machine and the method, as recorded.
  auto kv_table = [&s](const char* title, const nlohmann::json& obj) {
    s += fmt::format("<h2>{}</h2>\n<table>\n", title);
    for (const auto& [k, v] : obj.items())
      s += "<tr>" + td(k) + td(v.is_string() ? v.get<std::string>() : v.dump()) + "</tr>\n";
    s += "</table>\n";
  };

  s += "<h2>Ceilings (measured in this run)</h2>\n<table>\n<tr><th>ceiling</th><th>measured</th><th>datasheet</th>"
       "<th>theoretical</th><th>measured / datasheet, theoretical</th><th>start / end of run</th><th>median "
       "time</th><th>method</th></tr>\n";
  for (const auto& c : r.ceilings) {
    const CeilingReference ref = ceiling_reference(c);
    s += "<tr>" + td(ceiling_label(c)) + td(ceiling_value(c), true) +
         td(c.datasheet ? si(c.datasheet->value, c.value_unit) : "—", true) +
         td(c.theoretical ? si(c.theoretical->value, c.value_unit) : "—", true) +
         td(ref.ratio.empty() ? "—" : ref.ratio, true) + td(ceiling_passes(c).empty() ? "—" : ceiling_passes(c), true) +
         td(duration(c.measurement.stats.median), true) + td(c.method) + "</tr>\n";
  }
  s += "</table>\n";
  for (const auto& line : vendor_reference_lines(r))
    s += fmt::format("<p class=\"meta\">Against the vendor's own, in the same run: {}</p>\n", xml_escape(line));
  for (const auto& line : sustained_lines(r))
    s += fmt::format("<p class=\"meta sustained\">Burst and sustained: {}</p>\n", xml_escape(line));
  for (const auto& c : r.ceilings)
    if (c.theoretical)
      s += fmt::format("<p class=\"meta\">{} theoretical peak: {} ({})</p>\n", xml_escape(ceiling_label(c)),
                       xml_escape(si(c.theoretical->value, c.value_unit)), xml_escape(c.theoretical->source));

  kv_table("Device", r.device);
  kv_table("Settings", r.settings);
  // Variants declared warm are never flushed, whatever cold_cache says: name them under it.
  std::vector<std::string> warm;
  auto note_warm = [&warm](const std::string& name, const Measurement& m) {
    if (!m.cold_cache && std::find(warm.begin(), warm.end(), name) == warm.end()) warm.push_back(name);
  };
  if (r.settings.value("cold_cache", false)) {
    for (const auto& c : r.ceilings) note_warm("ceiling " + c.name, c.measurement);
    for (const auto& b : r.benchmarks)
      if (b.measurement) note_warm(b.base_name(), *b.measurement);
  }
  if (!warm.empty()) {
    s += "<p class=\"meta\">Timed warm (declared so: their subject is not memory), no flush before a sample:";
    for (std::size_t i = 0; i < warm.size(); ++i) s += (i ? ", " : " ") + ("<code>" + xml_escape(warm[i]) + "</code>");
    s += "</p>\n";
  }

  const LadderTable ladder = gemm_ladder(r);
  if (!ladder.rows.empty()) {
    s += fmt::format("<h2>GEMM ladder</h2>\n<p>FLOP/s, and the ratio to <code>{}</code> at the same precision and "
                     "size, measured in this run.</p>\n<table>\n<tr><th>variant</th><th>precision</th><th>unit</th>",
                     xml_escape(ladder.reference));
    for (const auto& size : ladder.sizes) s += "<th>" + xml_escape(size) + "</th>";
    s += "</tr>\n";
    for (const auto& row : ladder.rows) {
      s += "<tr>" + td(row.variant) + td(row.precision) + td(row.unit);
      for (const auto& cell : row.cells) s += td(cell.empty() ? "—" : cell, true);
      s += "</tr>\n";
    }
    s += "</table>\n";
  }

  if (const auto rows = lessons(r); !rows.empty()) {
    s += "<h2>Lessons</h2>\n<p>Each kernel against the form it improves on, at the same size; bytes as "
         "declared; predicted: the speedup the model expects from this run's roofs, and what binds each "
         "form.</p>\n<table>\n<tr><th>benchmark</th><th>against</th><th>time</th><th>against</th>"
         "<th>speedup</th><th>predicted</th><th>bound</th><th>bytes</th><th>against</th><th>% of roof</th></tr>\n";
    for (const auto& l : rows)
      s += "<tr><td><code>" + xml_escape(l.name) + "</code></td><td><code>" + xml_escape(l.against) + "</code></td>" +
           td(l.time, true) + td(l.against_time, true) + td(l.speedup, true) + td(l.predicted, true) + td(l.bounds) +
           td(l.bytes, true) + td(l.against_bytes, true) + td(l.roof_pct, true) + "</tr>\n";
    s += "</table>\n";
  }

  if (!r.counters.is_null() && !r.counters.value("available", false))
    s += fmt::format("<h2>Counters</h2>\n<p>None: {}{}</p>\n", xml_escape(r.counters.value("reason", std::string("unavailable"))),
                     r.counters.contains("hint") ? " To fix: " + xml_escape(r.counters.value("hint", std::string())) : "");
  if (const auto rows = counter_rows(r); !rows.empty()) {
    // No chart when no benchmark has counters (a run with the kernel trace only).
    if (std::string chart = render_svg_hierarchy(r); !chart.empty())
      s += "<h2>Counters and the hierarchical roofline</h2>\n<p>CUPTI counters from a separate pass after the timed "
           "samples, beside the declared work. Each kernel has one point per memory level: its measured FLOPs over "
           "the bytes counted at that level, at the FLOP rate of its timed median.</p>\n" +
           chart;
    else
      s += "<h3>Kernel trace</h3>\n<p>CUPTI's Activity API, without counters: each benchmark's kernels from the "
           "first one's start to the last one's end (where gaps lie between them, the time they ran and that span), "
           "beside "
           "the CUDA events' median.</p>\n";
    s += "<table>\n<tr><th>benchmark</th><th>passes</th><th>FLOPs</th><th>÷ declared</th><th>HBM bytes</th>"
         "<th>÷ declared</th><th>L2 bytes</th><th>L1 bytes</th><th>FLOP/B L1</th><th>FLOP/B L2</th><th>FLOP/B HBM</th>"
         "<th>threads/inst</th><th>uniform branches</th><th>kernel time (trace)</th></tr>\n";
    for (const auto& c : rows) {
      s += "<tr><td><code>" + xml_escape(c.name) + "</code></td>" + td(c.passes, true);
      if (!c.error.empty()) {
        s += "<td colspan=\"11\">" + xml_escape(c.error) + "</td>" + td(c.trace, true) + "</tr>\n";
        continue;
      }
      for (const std::string* cell : {&c.flops, &c.flops_ratio, &c.dram, &c.dram_ratio, &c.l2, &c.l1, &c.ai_l1,
                                      &c.ai_l2, &c.ai_dram, &c.threads_per_instruction, &c.branch_uniformity, &c.trace})
        s += td(*cell, true);
      s += "</tr>\n";
    }
    s += "</table>\n";
  }

  s += "<h2>Benchmarks</h2>\n<table>\n<tr><th>benchmark</th><th>median</th><th>IQR</th><th>samples</th>"
       "<th>FLOP/s</th><th>bytes/s</th><th>FLOP/byte</th><th>attainable</th><th>% of roof</th><th>bound</th>"
       "<th>waves (efficiency)</th><th>clock</th><th>verified</th><th>work</th></tr>\n";
  for (const auto& b : r.benchmarks) {
    const bool ok = b.measured();
    s += ok ? "<tr>" : "<tr class=\"failed\">";
    s += "<td><code>" + xml_escape(b.name) + "</code></td>";
    const BenchmarkCells c = benchmark_cells(b, "—");
    for (const std::string* cell :
         {&c.median, &c.rel_iqr, &c.samples, &c.flop_rate, &c.byte_rate, &c.intensity, &c.attainable, &c.roof_pct})
      s += td(*cell, true);
    s += td(c.bound) + td(c.waves, true) + td(c.clock);
    s += td(!ok              ? "FAILED: " + b.error
            : b.timing_only ? std::string("NO: timing only, no reference")
                            : fmt::format("yes ({} checked)", b.verification.checked));
    s += td(b.work) + "</tr>\n";
  }
  s += "</table>\n";
  if (const auto spread = spread_of(r))
    s += "<p class=\"meta\">Spread: " + xml_escape(spread_text(*spread)) + "</p>\n";
  if (const EnergyTable e = energy_table(r); !e.unavailable.empty()) {
    s += "<h2>Energy</h2>\n<p class=\"meta\">Unavailable: " + xml_escape(e.unavailable) + "</p>\n";
  } else {
    s += "<h2>Energy</h2>\n<p class=\"meta\">" +
         xml_escape(fmt::format("{}: the mean power over the samples' windows, or where they are briefer than 10 "
                                "updates of the counter over a back-to-back run (hold) or (pass), times the median "
                                "time. Best ceilings: {}{}, {}{}.",
                                e.source, e.best_flop_per_j, e.best_flop_ceiling.empty() ? "" : " by " + e.best_flop_ceiling,
                                e.best_bytes_per_j, e.best_bytes_ceiling.empty() ? "" : " by " + e.best_bytes_ceiling)) +
         "</p>\n<table>\n<tr><th>benchmark</th><th>J a run</th><th>mean power</th><th>hottest</th><th>FLOP/J</th>"
         "<th>of the best</th><th>B/J</th><th>of the best</th></tr>\n";
    for (const auto* rows : {&e.ceilings, &e.benchmarks})
      for (const EnergyRow& row : *rows)
        s += "<tr><td><code>" + xml_escape(row.name) + "</code></td>" + td(row.joules, true) + td(row.watts, true) +
             td(row.temperature, true) + td(row.flop_per_j, true) + td(row.flop_share, true) +
             td(row.bytes_per_j, true) + td(row.bytes_share, true) + "</tr>\n";
    s += "</table>\n";
  }
  const auto warnings = all_warnings(r);
  if (!warnings.empty()) s += "<h2>Warnings</h2>\n<ul>\n";
  for (const auto& [what, warning] : warnings)
    s += fmt::format("<li><code>{}</code>: {}</li>\n", xml_escape(what), xml_escape(warning));
  if (!warnings.empty()) s += "</ul>\n";
  s += "</body>\n</html>\n";
  return s;
}

}  // namespace roofbench
