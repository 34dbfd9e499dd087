#include "reports/report.h"
#include "reports/svg.h"

namespace roofbench {

std::vector<std::pair<std::string, std::string>> render_reports(const Results& r) {
  return {{"roofline.svg", render_svg(r)}, {"report.html", render_html(r)}, {"summary.md", render_markdown(r)}};
}

}  // namespace roofbench
