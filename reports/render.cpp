#include "reports/report.h"
#include "reports/svg.h"

namespace roofbench {

std::vector<std::pair<std::string, std::string>> render_reports(const Results& r) {
  std::vector<std::pair<std::string, std::string>> files = {
      {"roofline.svg", render_svg(r)}, {"report.html", render_html(r)}, {"summary.md", render_markdown(r)}};
  // The hierarchical roofline only when the run read counters.
  if (std::string h = render_svg_hierarchy(r); !h.empty()) files.insert(files.begin() + 1, {"hierarchy.svg", std::move(h)});
  return files;
}

}  // namespace roofbench
