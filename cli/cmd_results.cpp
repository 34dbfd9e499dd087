// The commands that read results files only: report, merge, compare and history. None of them
// measures anything; each writes its files whole or not at all.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "bench/atomic_write.h"
#include "cli/commands.h"
#include "bench/merge.h"
#include "bench/provenance.h"
#include "reports/ab.h"
#include "reports/compare.h"
#include "reports/crosscheck.h"
#include "reports/evidence.h"
#include "reports/fleet.h"
#include "reports/format.h"
#include "reports/history.h"
#include "reports/report.h"
#include "reports/svg.h"
#include "roofline/model.h"

namespace roofbench::cli {

namespace fs = std::filesystem;

namespace {
// The report files of `r` in `dir`, written together (with results.json and `extra` files when
// given); prints their paths.
void write_reports(const Results& r, const fs::path& dir, bool with_results,
                   std::vector<std::pair<std::string, std::string>> extra = {}) {
  OutputFolder folder(dir.string());
  FileSet files(folder);
  if (with_results) files.add("results.json", dump_results(r));
  for (auto& [name, content] : extra) files.add(name, std::move(content));
  for (auto& [name, content] : render_reports(r)) files.add(name, std::move(content));
  files.commit();
  for (const auto& p : files.paths()) std::cout << p << "\n";
}
}  // namespace

int cmd_report(const std::vector<std::string>& paths, const std::string& out) {
  if (paths.size() > 1) {
    // Several machines on one chart: rooflines.svg, in --out or the current folder.
    std::vector<Results> runs;
    std::vector<std::string> labels;
    for (const auto& p : paths) {
      runs.push_back(read_results(results_path(p)));
      labels.push_back(runs.back().device.value("name", std::string("?")));
    }
    for (std::size_t i = 0; i < runs.size(); ++i)  // the same machine twice: tell the runs apart by time
      if (std::count(labels.begin(), labels.end(), labels[i]) > 1)
        labels[i] += " · " + runs[i].provenance.value("utc_time", std::string("?"));
    std::vector<const Results*> ptrs;
    for (auto& r : runs) ptrs.push_back(&r);
    const fs::path dir = out.empty() ? fs::path(".") : fs::path(out);
    ensure_writable_dir(dir.string());
    FileSet files;
    files.add((dir / "rooflines.svg").string(), render_svg_machines(ptrs, labels));
    files.commit();
    for (const auto& p : files.paths()) std::cout << p << "\n";
    return kExitOk;
  }
  const std::string path = results_path(paths[0]);
  const Results r = read_results(path);
  fs::path dir = !out.empty() ? fs::path(out) : fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  // Reports beside another run's results file would be a set that disagrees with itself. (The
  // same results stored compressed beside them are the same run: a committed baseline's.)
  std::error_code ec;
  if (const std::string there = results_file_in(dir.string()); !there.empty() && !fs::equivalent(there, path, ec)) {
    if (read_results_text(there) != read_results_text(path))
      throw InputError(dir.string() + " holds another run's " + fs::path(there).filename().string() +
                       ": the reports of " + path +
                       " there would not be of its results; give --out an empty folder, or that run's own");
  }
  write_reports(r, dir, false);
  if (const int n = count_implausible(r)) {
    std::cerr << implausible_text(n);
    return kExitFailed;
  }
  return kExitOk;
}

int cmd_merge(const std::vector<std::string>& paths, const std::string& out, int argc, char** argv) {
  if (out.empty()) throw InputError("merge needs --out DIR for the merged results and its reports");
  std::vector<Results> parts;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    files.push_back(results_path(p));
    parts.push_back(read_results(files.back()));
  }
  Results m = merge_results(parts, files);
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + quote_arg(argv[i]);
  m.provenance["merge_command_line"] = cmd;
  apply_model(m);
  // Google Benchmark's JSON of the parts, where each has one beside its results: one context,
  // every part's benchmarks.
  std::vector<std::pair<std::string, std::string>> extra;
  nlohmann::json gbench;
  for (const auto& f : files) {
    const fs::path g = fs::path(f).parent_path() / "gbench.json";
    std::ifstream in(g);
    nlohmann::json j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (!j.is_object() || !j.contains("benchmarks")) {
      gbench = nullptr;
      break;
    }
    if (gbench.is_null())
      gbench = j;
    else
      for (auto& b : j["benchmarks"]) gbench["benchmarks"].push_back(std::move(b));
  }
  if (!gbench.is_null()) extra.emplace_back("gbench.json", gbench.dump(2) + "\n");
  write_reports(m, fs::path(out), true, std::move(extra));
  std::cerr << fmt::format("merge: {} benchmarks and {} ceilings from {} files{}\n", m.benchmarks.size(),
                           m.ceilings.size(), parts.size(), m.partial ? " (partial)" : "");
  return kExitOk;
}

CompareOptions compare_options(double threshold_pct, const std::vector<std::string>& threshold_for, double alpha) {
  CompareOptions opt;
  opt.threshold = threshold_pct / 100;
  opt.alpha = alpha;
  for (const auto& t : threshold_for) {
    const auto eq = t.rfind('=');
    double v = -1;
    if (eq != std::string::npos && eq > 0) {
      try {
        std::size_t used = 0;
        v = std::stod(t.substr(eq + 1), &used);
        if (used != t.size() - eq - 1) v = -1;
      } catch (const std::exception&) {
        v = -1;
      }
    }
    if (!(v > 0 && v < 1000))
      throw InputError("--threshold-for '" + t + "': expected REGEX=PERCENT, e.g. '^gemm/naive/=10'");
    opt.thresholds.push_back({t.substr(0, eq), v / 100});
  }
  (void)opt.threshold_for("");  // a bad pattern is an InputError now, before any file is read
  return opt;
}

namespace {

// Writes the optional --markdown and --json files, all or none; never over one of the inputs.
void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                   const std::vector<std::string>& inputs) {
  FileSet files;
  for (const auto& [path, content] : outputs) {
    if (path.empty()) continue;
    for (const auto& in : inputs) {
      std::error_code ec;
      if (fs::equivalent(path, in, ec)) throw InputError(path + ": is " + in + ", an input; write the verdicts elsewhere");
    }
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) ensure_writable_dir(parent.string());
    files.add(path, content);
  }
  files.commit();
}

}  // namespace

// `--json FILE`: the same rows for a script to judge (tests/python/gpu_visit.py), written whole or
// not at all, never over an input.
int cmd_crosscheck(const std::string& results, const std::string& ncu_csv, const std::vector<std::string>& benchmarks,
                   const std::string& json_out) {
  const std::string path = results_path(results);
  const Results r = read_results(path);
  std::error_code ec;
  if (fs::is_directory(ncu_csv, ec)) throw InputError(ncu_csv + ": is a folder, not the CSV that ncu --csv printed");
  std::ifstream in(ncu_csv, std::ios::binary);
  if (!in) throw InputError(ncu_csv + ": cannot open for reading");
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<NcuKernel> ncu = parse_ncu_csv(text.str());
  // Each benchmark's table as it comes (a refused one ends the command, the earlier tables shown);
  // the JSON only when every benchmark is in it.
  nlohmann::json j = {{"results", path}, {"ncu_csv", ncu_csv}, {"benchmarks", nlohmann::json::array()}};
  for (const auto& b : benchmarks) {
    const Crosscheck c = crosscheck(r, b, ncu);
    std::cout << render_crosscheck_markdown(c) << "\n" << std::flush;
    j["benchmarks"].push_back(crosscheck_json(c));
  }
  write_outputs({{json_out, j.dump(2) + "\n"}}, {path, ncu_csv});
  return kExitOk;
}

int cmd_compare(const CompareArgs& a) {
  CompareOptions opt = compare_options(a.threshold_pct, a.threshold_for, a.alpha);
  opt.allow_device_mismatch = a.allow_device_mismatch;
  opt.by_roof = a.by_roof;
  const std::string bp = results_path(a.base), np = results_path(a.fresh);
  // Both files at once: reading a large one is most of the time compare takes.
  auto reading_base = std::async(std::launch::async, [&bp] { return read_results(bp); });
  const Results fresh = read_results(np), base = reading_base.get();
  if (!a.noise.empty()) opt.noise = load_noise(a.noise, device_id(fresh));
  const Comparison c = compare_results(base, fresh, opt, bp, np);
  std::vector<std::string> inputs = {bp, np};
  if (!a.noise.empty()) inputs.push_back(a.noise);
  std::string markdown = render_compare_markdown(c), chart, html;
  if (!a.chart.empty() || !a.html.empty()) {
    const RooflineDiff diff = render_roofline_diff(c, base, fresh);
    chart = diff.svg;
    html = roofline_diff_html(diff, c);
    // The Markdown links the chart by its path from the Markdown's folder (or the page, without one).
    const std::string target = a.chart.empty() ? a.html : a.chart;
    const fs::path from = fs::absolute(a.markdown.empty() ? "." : a.markdown).parent_path();
    markdown += roofline_diff_markdown(diff, fs::absolute(target).lexically_relative(from).generic_string());
  }
  write_outputs({{a.markdown, markdown}, {a.json, compare_json(c).dump(2) + "\n"}, {a.chart, chart}, {a.html, html}},
                inputs);
  std::cout << render_compare_text(c);
  return c.exit_code();
}

int cmd_history(const HistoryArgs& a) {
  CompareOptions opt = compare_options(a.threshold_pct, a.threshold_for, a.alpha);
  opt.by_roof = a.by_roof;
  std::optional<OutputFolder> folder;  // before reading every file, not after
  if (!a.out.empty()) folder.emplace(a.out);
  std::vector<HistoryRun> runs = load_history(a.paths);
  if (!a.noise.empty()) opt.noise = load_noise(a.noise, device_id(runs.back().results));
  const History h = build_history(std::move(runs), opt);
  if (folder) {
    FileSet files(*folder);
    files.add("history.md", render_history_markdown(h));
    for (auto& [name, svg] : render_history_svgs(h)) files.add(name, std::move(svg));
    files.commit();
  }
  std::cout << render_history_text(h);
  return h.exit_code();
}

int cmd_fleet(const FleetArgs& a) {
  FleetOptions opt;
  opt.threshold = a.threshold_pct / 100;
  opt.mad_k = a.mad_k;
  std::optional<OutputFolder> folder;  // before reading every file, not after
  if (!a.out.empty()) folder.emplace(a.out);
  const Fleet f = build_fleet(load_fleet(a.paths), opt);
  if (folder) {
    FileSet files(*folder);
    files.add("fleet.json", fleet_json(f).dump(2) + "\n");
    files.add("fleet.md", render_fleet_markdown(f));
    files.add("fleet.html", render_fleet_html(f));
    files.commit();
  }
  std::cout << render_fleet_text(f);
  return f.exit_code();
}

int cmd_evidence(const EvidenceArgs& a) {
  EvidenceOptions opt;
  opt.lesson_tolerance = a.lesson_tolerance_pct / 100;
  opt.share_drop = a.share_drop_pct / 100;
  std::vector<std::string> files;
  for (const auto& p : a.paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec) && results_file_in(p).empty()) {
      const auto under = results_files_under(p);
      if (under.empty()) throw InputError(p + ": holds no results.json (nor results.json.xz or .gz)");
      files.insert(files.end(), under.begin(), under.end());
    } else {
      files.push_back(results_path(p));
    }
  }
  const std::vector<BaselineEvidence> e = check_evidence(files, opt);
  write_outputs({{a.markdown, render_evidence_markdown(e)}, {a.json, evidence_json(e, opt).dump(2) + "\n"}}, files);
  std::cout << render_evidence_text(e);
  return std::all_of(e.begin(), e.end(), [](const BaselineEvidence& b) { return b.ok(); }) ? kExitOk : kExitFailed;
}

}  // namespace roofbench::cli
