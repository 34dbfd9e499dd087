#include "reports/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "reports/format.h"
#include "roofline/cupti/metrics.h"
#include "roofline/model.h"

namespace roofbench {

namespace {


double floor_decade(double v) {
  return std::pow(10.0, std::floor(std::log10(v) + 1e-9));
}
double ceil_decade(double v) {
  return std::pow(10.0, std::ceil(std::log10(v) - 1e-9));
}

bool plotted(const BenchmarkResult& b) {
  return b.placement && b.placement->intensity && b.placement->flop_per_s > 0;
}

std::string decade_label(double v, const std::string& unit) {
  // Intensity ticks as plain numbers; performance ticks with a prefix.
  if (unit.empty()) {
    if (v >= 1) return fmt::format("{:.0f}", v);
    return fmt::format("{:g}", v);
  }
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (v >= 999.5 && i < 6) v /= 1000, ++i;
  return fmt::format("{:.0f} {}{}", v, prefixes[i], unit);
}

// Compact point label (the colour already says which kernel): the size, "512" for a square
// GEMM, "2^26" for a power of two from 65536 up, else "M:64/N:32/K:16".
std::string short_label(const BenchmarkResult& b) {
  auto number = [](std::int64_t v) {
    if (v >= 65536 && (v & (v - 1)) == 0) {
      int k = 0;
      while ((std::int64_t{1} << k) < v) ++k;
      return "2^" + std::to_string(k);
    }
    return std::to_string(v);
  };
  std::set<std::int64_t> values;
  for (const auto& kv : b.params) values.insert(kv.second);
  if (values.size() == 1) return number(*values.begin());
  std::string s;
  for (const auto& [k, v] : b.params) s += (s.empty() ? "" : "/") + k + ":" + number(v);
  return s;
}

// Greedy label placement: the first candidate spot beside the point whose box overlaps no label
// placed before and stays inside the plot; no label (the tooltip remains) when none is free.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};
std::optional<std::pair<double, double>> place_label(double x, double y, double width, const ChartLayout& L,
                                                     std::vector<Box>& taken) {
  const double h = 10;
  const std::pair<double, double> offsets[] = {{8, 3},           {8, -7},          {8, 13},          {-8 - width, 3},
                                               {-8 - width, -7}, {-8 - width, 13}, {-width / 2, -9}, {-width / 2, 19}};
  for (const auto& [dx, dy] : offsets) {
    const Box b{x + dx, y + dy - h + 2, x + dx + width, y + dy + 2};
    if (b.x0 < L.left || b.x1 > L.right || b.y0 < L.top || b.y1 > L.bottom) continue;
    bool free = true;
    for (const auto& t : taken) free = free && !b.overlaps(t);
    if (!free) continue;
    taken.push_back(b);
    return std::make_pair(x + dx, y + dy);
  }
  return std::nullopt;
}

std::string shape(Precision p, double x, double y, const std::string& fill, const std::string& extra) {
  const double r = 5.5;
  switch (p) {
    case Precision::fp64:
      return fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}" {}/>)", x - r, y - r,
                         2 * r, 2 * r, fill, extra);
    case Precision::fp16:
      return fmt::format(R"(<polygon points="{:.2f},{:.2f} {:.2f},{:.2f} {:.2f},{:.2f}" fill="{}" {}/>)", x,
                         y - r * 1.2, x - r * 1.1, y + r * 0.8, x + r * 1.1, y + r * 0.8, fill, extra);
    case Precision::bf16:
      return fmt::format(R"(<polygon points="{:.2f},{:.2f} {:.2f},{:.2f} {:.2f},{:.2f} {:.2f},{:.2f}" fill="{}" {}/>)",
                         x, y - r * 1.3, x + r * 1.3, y, x, y + r * 1.3, x - r * 1.3, y, fill, extra);
    case Precision::fp32:
    default:
      return fmt::format(R"(<circle cx="{:.2f}" cy="{:.2f}" r="{:.2f}" fill="{}" {}/>)", x, y, r, fill, extra);
  }
}

// The opening of every log-log chart: the <svg> element, its <title>, a white background, the
// headline and the grey line under it. Texts are given XML-escaped.
std::string chart_head(const ChartLayout& L, const std::string& title, const std::string& headline,
                       const std::string& subtitle) {
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                     R"(font-family="Helvetica, Arial, sans-serif" font-size="12">)"
                     "\n<title>{2}</title>\n"
                     R"(<rect width="{0}" height="{1}" fill="#ffffff"/>)"
                     "\n"
                     R"(<text x="{3}" y="24" font-size="16" font-weight="bold">{4}</text>)"
                     "\n"
                     R"(<text x="{3}" y="42" font-size="11" fill="#555555">{5}</text>)"
                     "\n",
                     L.width, L.height, title, L.left, headline, subtitle);
}

// A hierarchical-roofline marker centred on (x, y): a circle for L1, a square for L2, a
// triangle for HBM; `attrs` are added to the element.
std::string level_marker(Level level, double x, double y, const std::string& attrs) {
  if (level == Level::l1) return fmt::format(R"(<circle cx="{:.2f}" cy="{:.2f}" r="4.5" {}/>)", x, y, attrs);
  if (level == Level::l2) return fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="8" height="8" {}/>)", x - 4, y - 4, attrs);
  return fmt::format(R"(<path d="M {:.2f} {:.2f} l 5 9 l -10 0 z" {}/>)", x, y - 5, attrs);
}

// The plot area's clip path, grid (a line per decade, and with `minor` light lines at 2..9),
// frame, decade labels and axis titles: shared by every log-log chart.
std::string plot_frame(const ChartLayout& L, bool minor,
                       const std::string& x_title = "Arithmetic intensity (FLOP/byte, declared)") {
  std::string s;
  auto out = [&s](const std::string& line) {
    s += line;
    s += '\n';
  };
  const int steps = minor ? 9 : 1;
  out(fmt::format(R"(<defs><clipPath id="plot-area"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>)",
                  L.left, L.top, L.right - L.left, L.bottom - L.top));
  out(R"(<g class="grid" stroke="#e4e4e4" stroke-width="1">)");
  for (double d = L.x_min; d <= L.x_max * 1.0001; d *= 10)
    for (int m = 1; m <= steps; ++m) {
      const double v = d * m;
      if (v > L.x_max * 1.0001) break;
      out(fmt::format(R"(<line x1="{0:.2f}" y1="{1}" x2="{0:.2f}" y2="{2}"{3}/>)", L.px_x(v), L.top, L.bottom,
                      m == 1 ? R"( stroke="#c8c8c8")" : ""));
    }
  for (double d = L.y_min; d <= L.y_max * 1.0001; d *= 10)
    for (int m = 1; m <= steps; ++m) {
      const double v = d * m;
      if (v > L.y_max * 1.0001) break;
      out(fmt::format(R"(<line x1="{1}" y1="{0:.2f}" x2="{2}" y2="{0:.2f}"{3}/>)", L.px_y(v), L.left, L.right,
                      m == 1 ? R"( stroke="#c8c8c8")" : ""));
    }
  out("</g>");
  out(fmt::format(R"(<rect class="axes" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333333"/>)", L.left,
                  L.top, L.right - L.left, L.bottom - L.top));
  for (double d = L.x_min; d <= L.x_max * 1.0001; d *= 10)
    out(fmt::format(R"(<text x="{:.2f}" y="{}" text-anchor="middle">{}</text>)", L.px_x(d), L.bottom + 16,
                    decade_label(d, "")));
  for (double d = L.y_min; d <= L.y_max * 1.0001; d *= 10)
    out(fmt::format(R"(<text x="{}" y="{:.2f}" text-anchor="end">{}</text>)", L.left - 6, L.px_y(d) + 4,
                    decade_label(d, "FLOP/s")));
  out(fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (L.left + L.right) / 2, L.bottom + 40,
                  xml_escape(x_title)));
  out(fmt::format(
      R"svg(<text transform="translate(18 {}) rotate(-90)" text-anchor="middle">Performance (FLOP/s)</text>)svg",
      (L.top + L.bottom) / 2));
  return s;
}

}  // namespace

double ChartLayout::px_x(double v) const {
  const double f = (std::log10(v) - std::log10(x_min)) / (std::log10(x_max) - std::log10(x_min));
  return left + f * (right - left);
}

double ChartLayout::px_y(double v) const {
  const double f = (std::log10(v) - std::log10(y_min)) / (std::log10(y_max) - std::log10(y_min));
  return bottom - f * (bottom - top);
}

namespace {
// Decade-aligned ranges around the given intensities and rates, at least 3 decades each way.
ChartLayout layout_around(std::vector<double> xs, std::vector<double> ys) {
  ChartLayout L;
  if (xs.empty()) xs = {0.1, 10};
  if (ys.empty()) ys = {1e9, 1e12};
  L.x_min = floor_decade(*std::min_element(xs.begin(), xs.end()) / 2);
  L.x_max = ceil_decade(*std::max_element(xs.begin(), xs.end()) * 3);
  for (bool low = true; std::log10(L.x_max / L.x_min) < 3 - 1e-9; low = !low) (low ? L.x_min /= 10 : L.x_max *= 10);

  L.y_max = ceil_decade(*std::max_element(ys.begin(), ys.end()) * 1.5);
  L.y_min = floor_decade(*std::min_element(ys.begin(), ys.end()) / 3);
  if (std::log10(L.y_max / L.y_min) < 3 - 1e-9) L.y_min = L.y_max / 1e3;
  if (std::log10(L.y_max / L.y_min) > 8 + 1e-9) L.y_min = L.y_max / 1e8;  // keep the top readable
  return L;
}
}  // namespace

ChartLayout layout_chart(const Results& r) {
  std::vector<double> xs, ys;
  for (const auto& b : r.benchmarks)
    if (plotted(b)) {
      xs.push_back(*b.placement->intensity);
      ys.push_back(b.placement->flop_per_s);
    }
  for (const auto& rp : r.ridge_points) xs.push_back(rp.intensity);
  for (const auto& c : r.ceilings)
    if (c.kind == CeilingKind::compute && c.value > 0) ys.push_back(c.value);
  return layout_around(std::move(xs), std::move(ys));
}

const char* series_colour(std::size_t i) {
  // Okabe-Ito (colour-blind safe) first, then darker extras for long ladders.
  static constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                                             "#000000", "#7F3C8D", "#A5AA99", "#11A579", "#3969AC", "#E73F74"};
  return kPalette[i % (sizeof kPalette / sizeof *kPalette)];
}

std::string render_svg(const Results& r) {
  const ChartLayout L = layout_chart(r);
  const Roofs roofs = select_roofs(r.ceilings);
  std::string s;
  auto out = [&s](const std::string& line) {
    s += line;
    s += '\n';
  };

  s += chart_head(L, "Roofline: " + xml_escape(r.device.value("name", "device")),
                  "Roofline: " + xml_escape(device_line(r)), xml_escape(provenance_line(r)));
  s += plot_frame(L, true);

  // Ceilings. The bandwidth lines rise until they meet the highest compute roof; compute roofs
  // start where they meet the highest bandwidth roof.
  double top_peak = 0, top_bw = 0;
  for (const auto& [k, c] : roofs.compute) top_peak = std::max(top_peak, c->value);
  for (const auto& [k, c] : roofs.bandwidth) top_bw = std::max(top_bw, c->value);
  auto is_roof = [&](const Ceiling& c) {
    for (const auto& [k, p] : roofs.compute)
      if (p == &c) return true;
    for (const auto& [k, p] : roofs.bandwidth)
      if (p == &c) return true;
    return false;
  };
  const double slope_deg = -std::atan((L.bottom - L.top) / std::log10(L.y_max / L.y_min) /
                                      ((L.right - L.left) / std::log10(L.x_max / L.x_min))) *
                           180.0 / M_PI;
  out(R"svg(<g class="ceilings" clip-path="url(#plot-area)" fill="none" stroke-linecap="round">)svg");
  std::string labels;
  int bw_index = 0;
  std::vector<double> compute_label_y;
  std::vector<const Ceiling*> by_value;
  for (const auto& c : r.ceilings)
    if (c.value > 0) by_value.push_back(&c);
  std::stable_sort(by_value.begin(), by_value.end(), [](auto* a, auto* b) { return a->value > b->value; });
  for (const Ceiling* cp : by_value) {
    const Ceiling& c = *cp;
    const bool roof = is_roof(c);
    const std::string style = roof ? R"(stroke="#222222" stroke-width="2.2")"
                                   : R"(stroke="#777777" stroke-width="1.2" stroke-dasharray="6 4")";
    if (c.kind == CeilingKind::bandwidth) {
      const double x_end = top_peak > 0 ? std::min(L.x_max, top_peak / c.value) : L.x_max;
      out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" {}/>)",
                      xml_escape(c.name), L.px_x(L.x_min), L.px_y(c.value * L.x_min), L.px_x(x_end),
                      L.px_y(c.value * x_end), style));
      // The roof carries its full label on the line; a lower ceiling a short tag, staggered along
      // its line so that near-parallel neighbours do not overlap (full values are in the legend).
      const double x_first = std::max(L.x_min * 1.25, 1.6 * L.y_min / c.value);
      double x_lab = roof ? x_first : x_first * std::pow(10.0, 0.45 * (1 + bw_index++));
      x_lab = std::max(L.x_min * 1.1, std::min(x_lab, x_end / 2));
      const std::string text = roof ? ceiling_label(c) + " " + ceiling_value(c) : c.name.substr(c.name.find('_') + 1);
      labels += fmt::format(
          R"svg(<text class="ceiling-label" x="{0:.2f}" y="{1:.2f}" transform="rotate({2:.2f} {0:.2f} {1:.2f})" )svg"
          R"(fill="{3}" font-size="{4}">{5}</text>)",
          L.px_x(x_lab), L.px_y(c.value * x_lab) - 5, slope_deg, roof ? "#222222" : "#666666", roof ? 11 : 9,
          xml_escape(text));
      labels += '\n';
    } else {
      const double x_start = top_bw > 0 ? std::max(L.x_min, c.value / top_bw) : L.x_min;
      const double y = L.px_y(c.value);
      out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" {}/>)",
                      xml_escape(c.name), L.px_x(x_start), y, L.px_x(L.x_max), y, style));
      double ly = y - 5;
      for (double prev : compute_label_y)
        if (std::fabs(prev - ly) < 13) ly = prev + 14;
      compute_label_y.push_back(ly);
      labels += fmt::format(
          R"(<text class="ceiling-label" x="{:.2f}" y="{:.2f}" text-anchor="end" fill="{}" font-size="11">{} {}</text>)",
          L.right - 6, ly, roof ? "#222222" : "#666666", xml_escape(ceiling_label(c)), xml_escape(ceiling_value(c)));
      labels += '\n';
    }
  }
  out("</g>");
  s += labels;

  // Ridge points: where each compute roof meets each bandwidth roof.
  auto find_ceiling = [&r](const std::string& name) -> const Ceiling* {
    for (const auto& c : r.ceilings)
      if (c.name == name) return &c;
    return nullptr;
  };
  // With a roof per cache level there are many; only those against DRAM (where the kernels' bytes
  // are declared) carry a label, the others a tooltip.
  for (const auto& rp : r.ridge_points) {
    const Ceiling* peak = find_ceiling(rp.compute_ceiling);
    const Ceiling* bw = find_ceiling(rp.bandwidth_ceiling);
    if (!peak) continue;
    const double x = L.px_x(rp.intensity), y = L.px_y(peak->value);
    out(fmt::format(
        R"(<g class="ridge" data-compute="{}" data-bandwidth="{}"><title>ridge {} FLOP/B: {} meets {}</title>)"
        R"(<path d="M {:.2f} {:.2f} l 5 5 l -5 5 l -5 -5 z" fill="#ffffff" stroke="#222222" stroke-width="1.5"/>)",
        xml_escape(rp.compute_ceiling), xml_escape(rp.bandwidth_ceiling), intensity(rp.intensity),
        xml_escape(rp.compute_ceiling), xml_escape(rp.bandwidth_ceiling), x, y - 5));
    if (!bw || bw->level == Level::dram)
      out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="10" fill="#222222">ridge {} FLOP/B</text>)", x + 7,
                      y + 14, intensity(rp.intensity)));
    out("</g>");
  }

  // Points, coloured by kernel (family/variant, in the order they ran), shaped by precision.
  std::vector<std::pair<std::string, std::string>> series;  // (family/variant, colour)
  auto colour_of = [&series](const BenchmarkResult& b) {
    const std::string key = b.family + "/" + b.variant;
    for (const auto& [k, c] : series)
      if (k == key) return c;
    series.emplace_back(key, series_colour(series.size()));
    return series.back().second;
  };
  std::set<Precision> precisions;
  for (const auto& b : r.benchmarks)
    if (plotted(b)) {
      colour_of(b);
      precisions.insert(b.precision);
    }
  // Points claim their own spots first, so that no label covers a point.
  std::vector<Box> taken;
  for (const auto& b : r.benchmarks)
    if (plotted(b)) {
      const double x = L.px_x(*b.placement->intensity), y = L.px_y(b.placement->flop_per_s);
      taken.push_back({x - 6, y - 6, x + 6, y + 6});
    }
  out(R"(<g class="points">)");
  for (const auto& b : r.benchmarks) {
    if (!plotted(b)) continue;
    const Placement& p = *b.placement;
    const double x = L.px_x(*p.intensity), y = L.px_y(p.flop_per_s);
    const bool above_roof = p.roof_pct > 100.0 * (1.0 + kRoofTolerance);
    out(fmt::format(R"(<g class="point" data-name="{}" data-x="{:.2f}" data-y="{:.2f}">)", xml_escape(b.name), x, y));
    out(fmt::format("<title>{}: {}, {}, I = {} FLOP/B, {:.0f}% of roof ({}-bound)</title>", xml_escape(b.name),
                    si(p.flop_per_s, "FLOP/s"), si(p.bytes_per_s, "B/s"), intensity(*p.intensity), p.roof_pct,
                    p.bound));
    out(shape(b.precision, x, y, colour_of(b),
              above_roof ? R"(stroke="#d00000" stroke-width="2.5")" : R"(stroke="#ffffff" stroke-width="1")"));
    const std::string label = short_label(b);
    if (auto at = place_label(x, y, 5.2 * static_cast<double>(label.size()), L, taken))
      out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="9" fill="#333333">{}</text>)", at->first, at->second,
                      xml_escape(label)));
    out("</g>");
  }
  out("</g>");

  // Legend.
  double ly = L.top + 4;
  const double lx = L.right + 24;
  out(R"(<g class="legend">)");
  out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Kernel (family/variant)</text>)", lx, ly));
  for (const auto& [key, colour] : series) {
    ly += 18;
    out(fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>)", lx,
                    ly - 10, colour, lx + 18, ly, xml_escape(key)));
  }
  ly += 30;
  out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Precision</text>)", lx, ly));
  for (Precision p : precisions) {
    ly += 18;
    out(shape(p, lx + 6, ly - 4, "#555555", ""));
    out(fmt::format(R"(<text x="{}" y="{}">{}</text>)", lx + 18, ly, to_string(p)));
  }
  ly += 30;
  out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Ceilings</text>)", lx, ly));
  out(fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#222222" stroke-width="2.2"/>)", lx, ly + 14,
                  lx + 14, ly + 14));
  out(fmt::format(R"(<text x="{}" y="{}">roof (best measured)</text>)", lx + 18, ly + 18));
  out(fmt::format(
      R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#777777" stroke-width="1.2" stroke-dasharray="6 4"/>)", lx,
      ly + 32, lx + 14, ly + 32));
  out(fmt::format(R"(<text x="{}" y="{}">lower ceiling</text>)", lx + 18, ly + 36));
  out(fmt::format(R"(<path d="M {} {} l 5 5 l -5 5 l -5 -5 z" fill="#ffffff" stroke="#222222"/>)", lx + 7, ly + 44));
  out(fmt::format(R"(<text x="{}" y="{}">ridge point</text>)", lx + 18, ly + 54));
  out(fmt::format(R"(<circle cx="{}" cy="{}" r="5" fill="#ffffff" stroke="#d00000" stroke-width="2.5"/>)", lx + 7,
                  ly + 68));
  out(fmt::format(R"(<text x="{}" y="{}">above its roof</text>)", lx + 18, ly + 72));
  ly += 100;
  out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Measured in this run</text>)", lx, ly));
  for (const Ceiling* c : by_value) {
    ly += 15;
    out(fmt::format(R"(<text x="{}" y="{}" font-size="11"{}>{} {}</text>)", lx, ly,
                    is_roof(*c) ? R"( font-weight="bold")" : "", xml_escape(ceiling_label(*c)),
                    xml_escape(ceiling_value(*c))));
  }
  out("</g>");
  if (series.empty())
    out(fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" fill="#888888">no verified kernel to place</text>)",
                    (L.left + L.right) / 2, (L.top + L.bottom) / 2));
  out("</svg>");
  return s;
}

std::string render_svg_machines(const std::vector<const Results*>& runs, const std::vector<std::string>& labels) {
  // One layout that holds every machine: its kernels, its ridge points and its roofs.
  ChartLayout L;
  L.right = 700;
  std::vector<double> xs, ys;
  for (const Results* r : runs) {
    const ChartLayout one = layout_chart(*r);
    xs.push_back(one.x_min);
    xs.push_back(one.x_max);
    ys.push_back(one.y_min);
    ys.push_back(one.y_max);
  }
  L.x_min = *std::min_element(xs.begin(), xs.end());
  L.x_max = *std::max_element(xs.begin(), xs.end());
  L.y_max = *std::max_element(ys.begin(), ys.end());
  L.y_min = std::max(*std::min_element(ys.begin(), ys.end()), L.y_max / 1e8);

  std::string s;
  auto out = [&s](const std::string& line) {
    s += line;
    s += '\n';
  };
  s += chart_head(L, "Rooflines of several machines", fmt::format("Rooflines: {} machines on one chart", runs.size()),
                  "each machine's ceilings as measured in its own run; ◇ ridge points: the intensity a kernel needs "
                  "before it is compute-bound");
  s += plot_frame(L, false);

  double ly = L.top + 4;
  const double lx = L.right + 24;
  std::string legend;
  for (std::size_t m = 0; m < runs.size(); ++m) {
    const Results& r = *runs[m];
    const char* colour = series_colour(m);
    const Roofs roofs = select_roofs(r.ceilings);
    const Ceiling* bw = nullptr;  // the DRAM (HBM) roof: machine balance is against memory
    for (const auto& [level, c] : roofs.bandwidth)
      if (!bw || level == Level::dram) bw = c;
    const Ceiling* top = nullptr;
    for (const auto& [key, c] : roofs.compute)
      if (!top || c->value > top->value) top = c;
    out(fmt::format(R"svg(<g class="machine" data-machine="{}" clip-path="url(#plot-area)">)svg", xml_escape(labels[m])));
    if (bw) {
      const double x_end = top ? std::min(L.x_max, top->value / bw->value) : L.x_max;
      out(fmt::format(R"(<line class="ceiling" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" )"
                      R"(stroke-width="2.4"/>)",
                      L.px_x(L.x_min), L.px_y(bw->value * L.x_min), L.px_x(x_end), L.px_y(bw->value * x_end), colour));
    }
    for (const auto& [key, c] : roofs.compute) {
      const double x_start = bw ? std::max(L.x_min, c->value / bw->value) : L.x_min;
      out(fmt::format(R"(<line class="ceiling" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" {}/>)",
                      L.px_x(x_start), L.px_y(c->value), L.px_x(L.x_max), L.px_y(c->value), colour,
                      c == top ? R"(stroke-width="2.4")" : R"(stroke-width="1.2" stroke-dasharray="6 4")"));
      if (bw) {
        const double x = L.px_x(c->value / bw->value), y = L.px_y(c->value);
        out(fmt::format(R"(<path class="ridge" d="M {:.2f} {:.2f} l 5 5 l -5 5 l -5 -5 z" fill="#ffffff" stroke="{}" )"
                        R"(stroke-width="1.5"/>)",
                        x, y - 5, colour));
        if (c == top)
          out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="10" fill="{}">ridge {} FLOP/B</text>)", x + 7, y + 14,
                          colour, intensity(c->value / bw->value)));
      }
    }
    for (const auto& b : r.benchmarks)
      if (plotted(b))
        out(fmt::format("<g class=\"point\"><title>{}: {}</title>{}</g>", xml_escape(labels[m] + " " + b.name),
                        si(b.placement->flop_per_s, "FLOP/s"),
                        shape(b.precision, L.px_x(*b.placement->intensity), L.px_y(b.placement->flop_per_s), colour,
                              R"(stroke="#ffffff" stroke-width="1" fill-opacity="0.8")")));
    out("</g>");

    legend += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)", lx, ly - 10, colour);
    legend += fmt::format(R"(<text x="{}" y="{}" font-weight="bold">{}</text>)", lx + 18, ly, xml_escape(labels[m]));
    legend += "\n";
    const auto line = [&](const std::string& t) {
      ly += 15;
      legend += fmt::format(R"(<text x="{}" y="{}" font-size="11">{}</text>)", lx + 18, ly, xml_escape(t)) + "\n";
    };
    line(device_line(r));
    if (bw) line(ceiling_label(*bw) + " " + ceiling_value(*bw));
    if (top) line(ceiling_label(*top) + " " + ceiling_value(*top));
    if (bw && top) line("balance: " + intensity(top->value / bw->value) + " FLOP per byte");
    ly += 26;
  }
  out(R"(<g class="legend">)");
  s += legend;
  out("</g>");
  out("</svg>");
  return s;
}

std::vector<HierarchyPoint> hierarchy_points(const Results& r) {
  std::vector<HierarchyPoint> out;
  for (const auto& b : r.benchmarks) {
    if (!b.verified() || !b.measurement || !b.counters || !b.counters->ok() || !b.counters->flops) continue;
    const auto ai = b.counters->intensity();
    if (ai.empty()) continue;
    HierarchyPoint p;
    p.benchmark = &b;
    p.flop_per_s = *b.counters->flops / b.measurement->stats.median;
    p.intensity = ai;
    out.push_back(std::move(p));
  }
  return out;
}

static const Ceiling* level_roof(const Roofs& roofs, Level level) {
  if (auto it = roofs.bandwidth.find(level); it != roofs.bandwidth.end()) return it->second;
  // L1 and shared memory are one SRAM on the SM: the shared-memory ceiling stands in for L1.
  if (level == Level::l1)
    if (auto it = roofs.bandwidth.find(Level::smem); it != roofs.bandwidth.end()) return it->second;
  return nullptr;
}

std::string render_svg_hierarchy(const Results& r) {
  const std::vector<HierarchyPoint> points = hierarchy_points(r);
  if (points.empty()) return "";
  const Roofs roofs = select_roofs(r.ceilings);
  static const std::vector<std::pair<Level, std::string>> kLevels = {
      {Level::l1, "L1"}, {Level::l2, "L2"}, {Level::dram, "HBM"}};

  std::vector<double> xs, ys;
  for (const auto& p : points) {
    ys.push_back(p.flop_per_s);
    for (const auto& [level, ai] : p.intensity) xs.push_back(ai);
  }
  for (const auto& [key, c] : roofs.compute) ys.push_back(c->value);
  const ChartLayout L = layout_around(std::move(xs), std::move(ys));

  std::string s;
  auto out = [&s](const std::string& line) {
    s += line;
    s += '\n';
  };
  s += chart_head(L, "Hierarchical roofline: " + xml_escape(r.device.value("name", "device")),
                  "Hierarchical roofline: " + xml_escape(device_line(r)),
                  "one point per memory level: measured FLOPs over the bytes counted there (CUPTI), at the FLOP rate "
                  "of the timed median; roofs measured in the same run");
  s += plot_frame(L, true, "Arithmetic intensity (FLOP/byte, measured by counters)");

  // A bandwidth roof per level, in that level's colour, up to the highest compute roof.
  double top_peak = 0;
  for (const auto& [k, c] : roofs.compute) top_peak = std::max(top_peak, c->value);
  static const char* kLevelColour[] = {"#0072B2", "#009E73", "#D55E00"};
  out(R"svg(<g class="ceilings" clip-path="url(#plot-area)" fill="none">)svg");
  std::string labels;
  for (std::size_t i = 0; i < kLevels.size(); ++i) {
    const Ceiling* c = level_roof(roofs, kLevels[i].first);
    if (!c) continue;
    const double x_end = top_peak > 0 ? std::min(L.x_max, top_peak / c->value) : L.x_max;
    out(fmt::format(R"(<line class="ceiling" data-level="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" )"
                    R"(stroke="{}" stroke-width="2"/>)",
                    to_string(kLevels[i].first), L.px_x(L.x_min), L.px_y(c->value * L.x_min), L.px_x(x_end),
                    L.px_y(c->value * x_end), kLevelColour[i]));
    const double x_lab = std::max(L.x_min * 1.2, 2 * L.y_min / c->value);
    labels += fmt::format(R"(<text class="ceiling-label" x="{:.2f}" y="{:.2f}" fill="{}" font-size="10">{} {}</text>)",
                          L.px_x(x_lab), L.px_y(c->value * x_lab) - 6, kLevelColour[i], kLevels[i].second,
                          xml_escape(ceiling_value(*c)));
    labels += '\n';
  }
  for (const auto& [key, c] : roofs.compute) {
    const bool top = c->value == top_peak;
    out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{}" y1="{:.2f}" x2="{}" y2="{:.2f}" stroke="#222222" {}/>)",
                    xml_escape(c->name), L.left, L.px_y(c->value), L.right, L.px_y(c->value),
                    top ? R"(stroke-width="2")" : R"(stroke-width="1" stroke-dasharray="6 4")"));
    labels += fmt::format(R"(<text class="ceiling-label" x="{}" y="{:.2f}" text-anchor="end" fill="#444444" font-size="9">{} {}</text>)",
                          L.right - 4, L.px_y(c->value) - 3, xml_escape(ceiling_label(*c)), xml_escape(ceiling_value(*c)));
    labels += '\n';
  }
  out("</g>");
  s += labels;

  // Each kernel: its levels joined by a line, a marker per level (circle L1, square L2, triangle HBM).
  std::map<std::string, std::size_t> family_index;
  out(R"svg(<g class="kernels" clip-path="url(#plot-area)">)svg");
  for (const auto& p : points) {
    const auto [it, added] = family_index.emplace(p.benchmark->family, family_index.size());
    const char* colour = series_colour(it->second);
    const double y = L.px_y(p.flop_per_s);
    double x_lo = 1e300, x_hi = 0;
    for (const auto& [level, ai] : p.intensity) x_lo = std::min(x_lo, ai), x_hi = std::max(x_hi, ai);
    out(fmt::format(R"(<g class="kernel" data-benchmark="{}">)", xml_escape(p.benchmark->name)));
    out(fmt::format(R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="1" opacity="0.6"/>)",
                    L.px_x(x_lo), y, L.px_x(x_hi), y, colour));
    for (const auto& [level, ai] : p.intensity) {
      out(fmt::format(R"(<g class="point" data-level="{}"><title>{} at {}: {} FLOP/B, {}</title>{}</g>)",
                      to_string(level), xml_escape(p.benchmark->name), to_string(level), intensity(ai),
                      si(p.flop_per_s, "FLOP/s"),
                      level_marker(level, L.px_x(ai), y, fmt::format(R"(fill="{}" stroke="#ffffff")", colour))));
    }
    out("</g>");
  }
  out("</g>");

  // Legend: the level markers, then the families.
  double ly = L.top + 4;
  const double lx = L.right + 24;
  out(R"(<g class="legend">)");
  out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Levels</text>)", lx, ly));
  for (const auto& [level, label] : kLevels) {
    ly += 16;
    out(level_marker(level, lx + 5, ly - 4, R"(fill="#555555")") +
        fmt::format(R"(<text x="{}" y="{}">{}</text>)", lx + 16, ly, label));
  }
  ly += 26;
  out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Families</text>)", lx, ly));
  std::vector<std::pair<std::size_t, std::string>> fams;
  for (const auto& [f, i] : family_index) fams.push_back({i, f});
  std::sort(fams.begin(), fams.end());
  for (const auto& [i, f] : fams) {
    ly += 16;
    out(fmt::format(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)", lx, ly - 9,
                    series_colour(i), lx + 16, ly, xml_escape(f)));
  }
  out("</g>");
  out("</svg>");
  return s;
}

}  // namespace roofbench
