#pragma once
// Printers over the results model. Each returns text; render.cpp writes the files.
#include <string>
#include <vector>

#include "bench/results.h"

namespace roofbench {

std::string render_markdown(const Results& r);  // summary.md: tables fit for a PR comment
std::string render_markdown_ladder(const Results& r);  // its GEMM-ladder table alone ("" without GEMMs)
std::string render_markdown_counters(const Results& r);  // its counters table alone ("" without counters)
std::string render_html(const Results& r);      // report.html: chart and tables, self-contained
// The table printed at the end of a run, then its warnings: every one with `verbose`, else a
// count of each kind (noise, clock, roofline, ...) with what it means; the reports list them all.
std::string render_console(const Results& r, bool verbose = false);

// The report files of a results model, as (file name, content), in the order written.
std::vector<std::pair<std::string, std::string>> render_reports(const Results& r);

}  // namespace roofbench
