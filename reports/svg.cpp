#include "reports/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>
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

// An implausible kernel (above its roof by more than the run's noise) is no real point: it is
// listed under the legend instead, with its share of the roof.
bool plotted(const BenchmarkResult& b) {
  return b.placement && !b.placement->implausible && b.placement->intensity && *b.placement->intensity > 0 &&
         std::isfinite(*b.placement->intensity) && b.placement->flop_per_s > 0 &&
         std::isfinite(b.placement->flop_per_s);
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

// A point's label: its variant and size, "naive 512" for a square GEMM, "saxpy 2^26" for a
// power of two from 65536 up, else "blocked M:64/N:32/K:16" (the legend says the family).
std::string point_label(const BenchmarkResult& b) {
  auto number = [](std::int64_t v) {
    if (v >= 65536 && (v & (v - 1)) == 0) {
      int k = 0;
      while ((std::int64_t{1} << k) < v) ++k;
      return "2^" + std::to_string(k);
    }
    return std::to_string(v);
  };
  const std::string who = b.variant + (b.precision == Precision::fp32 ? "" : "/" + to_string(b.precision));
  std::set<std::int64_t> values;
  for (const auto& kv : b.params) values.insert(kv.second);
  if (values.size() == 1) return who + " " + number(*values.begin());
  std::string s;
  for (const auto& [k, v] : b.params) s += (s.empty() ? "" : "/") + k + ":" + number(v);
  return who + " " + s;
}

// The width a line of text takes: DejaVu Sans' advances (what Debian's fontconfig gives for
// "Helvetica, Arial, sans-serif"; Helvetica and Arial are narrower, so the estimate errs wide), in
// ems, by character; bold is about a tenth wider. The browser test measures the real text.
}  // namespace

double text_width(const std::string& utf8, double font_size, bool bold) {
  static const std::map<char, double> kEm = {
      {' ', 0.318}, {'.', 0.318}, {',', 0.318}, {':', 0.337}, {';', 0.337}, {'/', 0.337}, {'|', 0.337},
      {'(', 0.390}, {')', 0.390}, {'[', 0.390}, {']', 0.390}, {'-', 0.361}, {'_', 0.500}, {'^', 0.838},
      {'%', 0.950}, {'=', 0.838}, {'+', 0.838}, {'<', 0.838}, {'>', 0.838}, {'*', 0.500}, {'&', 0.780},
      {'\'', 0.275}, {'"', 0.460}, {'#', 0.838}, {'@', 1.000}, {'!', 0.400}, {'?', 0.531},
      {'a', 0.613}, {'b', 0.635}, {'c', 0.550}, {'d', 0.635}, {'e', 0.615}, {'f', 0.352}, {'g', 0.635},
      {'h', 0.634}, {'i', 0.278}, {'j', 0.278}, {'k', 0.579}, {'l', 0.278}, {'m', 0.974}, {'n', 0.634},
      {'o', 0.612}, {'p', 0.635}, {'q', 0.635}, {'r', 0.411}, {'s', 0.521}, {'t', 0.392}, {'u', 0.634},
      {'v', 0.592}, {'w', 0.818}, {'x', 0.592}, {'y', 0.592}, {'z', 0.525},
      {'A', 0.684}, {'B', 0.686}, {'C', 0.698}, {'D', 0.770}, {'E', 0.632}, {'F', 0.575}, {'G', 0.775},
      {'H', 0.752}, {'I', 0.295}, {'J', 0.295}, {'K', 0.656}, {'L', 0.557}, {'M', 0.863}, {'N', 0.748},
      {'O', 0.787}, {'P', 0.603}, {'Q', 0.787}, {'R', 0.695}, {'S', 0.635}, {'T', 0.611}, {'U', 0.732},
      {'V', 0.684}, {'W', 0.989}, {'X', 0.685}, {'Y', 0.611}, {'Z', 0.685}};
  double ems = 0;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: counted with its lead
    if (c >= '0' && c <= '9')
      ems += 0.636;
    else if (auto it = kEm.find(static_cast<char>(c)); it != kEm.end())
      ems += it->second;
    else
      ems += c < 0x80 ? 0.7 : 0.85;  // anything else, and any non-ASCII character (×, ², µ): wide
  }
  return ems * font_size * (bold ? 1.1 : 1.0);
}

namespace {

// Greedy label placement: the first candidate spot beside the point whose box overlaps no label
// placed before and stays inside the plot; no label (the tooltip remains) when none is free.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};
// The box a text takes, drawn at (x, y) (its baseline's start) rotated by `degrees`.
Box text_box(double x, double y, double width, double font_size, double degrees = 0) {
  const double a = degrees * M_PI / 180, h = font_size;
  const double xs[] = {x, x + width * std::cos(a), x - h * std::sin(-a), x + width * std::cos(a) - h * std::sin(-a)};
  const double ys[] = {y, y + width * std::sin(a), y - h * std::cos(a), y + width * std::sin(a) - h * std::cos(a)};
  return {*std::min_element(xs, xs + 4), *std::min_element(ys, ys + 4), *std::max_element(xs, xs + 4),
          *std::max_element(ys, ys + 4) + 2};
}

// A rotated text as the boxes of its short pieces: one box around the whole would claim a square
// the diagonal text mostly leaves empty, and near-parallel roof labels would never fit.
std::vector<Box> text_boxes(double x, double y, double width, double font_size, double degrees) {
  const double a = degrees * M_PI / 180, piece = font_size;
  std::vector<Box> out;
  for (double d = 0; d < width; d += piece)
    out.push_back(text_box(x + d * std::cos(a), y + d * std::sin(a), std::min(piece, width - d), font_size, degrees));
  return out;
}

std::optional<std::pair<double, double>> place_label(double x, double y, double width, const ChartLayout& L,
                                                     std::vector<Box>& taken) {
  const double h = 11;  // a 9 or 10 px text's ascent and descent
  // Beside the point, right then left, one text height apart; then above and below it.
  const std::pair<double, double> offsets[] = {{8, 4},           {8, -8},          {8, 16},          {-8 - width, 4},
                                               {-8 - width, -8}, {-8 - width, 16}, {-width / 2, -10}, {-width / 2, 20}};
  for (const auto& [dx, dy] : offsets) {
    const Box b{x + dx, y + dy - h + 2.5, x + dx + width, y + dy + 2.5};
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

// A chart's head and body, the chart as tall and wide as its legend needs (down to `bottom`,
// across to `right`): a long legend is never cut off.
std::string sized_chart(ChartLayout L, double bottom, double right, const std::string& title,
                        const std::string& headline, const std::string& subtitle, const std::string& body,
                        std::pair<double, double>* size = nullptr) {
  L.height = std::max(L.height, bottom + 24);
  L.width = std::max({L.width, right + 16, L.left + text_width(headline, 16, true) + 16, L.left + text_width(subtitle, 11) + 16});
  if (size) *size = {L.width, L.height};
  return chart_head(L, title, headline, subtitle) + body;
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
  out(fmt::format(R"(<defs><clipPath id="{}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>)",
                  L.clip_id, L.left, L.top, L.right - L.left, L.bottom - L.top));
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
    out(fmt::format(R"(<text x="{:.2f}" y="{}" text-anchor="middle">{}</text>)", L.px_x(d), L.bottom + 20,
                    decade_label(d, "")));
  for (double d = L.y_min; d <= L.y_max * 1.0001; d *= 10)
    out(fmt::format(R"(<text x="{}" y="{:.2f}" text-anchor="end">{}</text>)", L.left - 6, L.px_y(d) + 4,
                    decade_label(d, "FLOP/s")));
  out(fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (L.left + L.right) / 2, L.bottom + 44,
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
  // Log axes: only positive finite values (the reader refuses files whose rates are not finite;
  // this keeps a decade loop from running forever on one that slipped through).
  const auto off_axis = [](double v) { return !(v > 0) || !std::isfinite(v); };
  xs.erase(std::remove_if(xs.begin(), xs.end(), off_axis), xs.end());
  ys.erase(std::remove_if(ys.begin(), ys.end(), off_axis), ys.end());
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

namespace {
// The layout around the kernels that `keep` selects (placed ones only), every ridge point and
// every compute ceiling.
template <typename Keep>
ChartLayout layout_of(const Results& r, Keep keep) {
  std::vector<double> xs, ys;
  for (const auto& b : r.benchmarks)
    if (plotted(b) && keep(b)) {
      xs.push_back(*b.placement->intensity);
      ys.push_back(b.placement->flop_per_s);
      if (b.placement->transcendental_flop_per_s) ys.push_back(*b.placement->transcendental_flop_per_s);
      if (b.placement->launch_time_s > 0 && b.flops > 0) ys.push_back(b.flops / b.placement->launch_time_s);
      if (b.pipeline_chunks > 0 && b.flops > 0 && b.placement->model_time_s > 0)
        ys.push_back(b.flops / b.placement->model_time_s);
    }
  for (const auto& rp : r.ridge_points) xs.push_back(rp.intensity);
  for (const auto& c : r.ceilings)
    if (c.kind == CeilingKind::compute && c.value > 0) ys.push_back(c.value);
  return layout_around(std::move(xs), std::move(ys));
}
}  // namespace

ChartLayout layout_chart(const Results& r) {
  return layout_of(r, [](const BenchmarkResult&) { return true; });
}

// Okabe-Ito (colour-blind safe): series i has colour i mod 8; the second eight are drawn hollow,
// so that up to 16 series never share a look.
const char* series_colour(std::size_t i) {
  static constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                             "#E69F00", "#56B4E9", "#000000", "#7F3C8D"};
  return kPalette[i % (sizeof kPalette / sizeof *kPalette)];
}
bool series_hollow(std::size_t i) {
  return (i / 8) % 2 == 1;
}

namespace {
// How a sustained roof is drawn, and its legend line.
constexpr const char* kSustainedStroke = R"(stroke="#B35806" stroke-width="1.6" stroke-dasharray="2 3")";

// Each roof measured sustained as well (CeilingSpec::sustained) as a dotted line under it, where
// the clock settles under the power cap, with its value and clock on the right for a compute roof
// and in its title for a bandwidth roof. Returns the lines and the labels.
std::pair<std::string, std::string> sustained_roofs(const ChartLayout& L, const Roofs& roofs, double top_peak,
                                                    double top_bw, std::vector<Box>& taken) {
  std::string lines, labels;
  const char* style = kSustainedStroke;
  for (const auto& [burst, view] : roofs.sustained) {
    const Ceiling& c = *view;
    const std::optional<double> hz = samples_clock_hz(c.measurement);
    const std::string text = fmt::format("{} sustained {}{}", ceiling_label(c), ceiling_value(c),
                                         hz ? fmt::format(" at {:.2f} GHz", *hz / 1e9) : std::string());
    if (c.kind == CeilingKind::bandwidth) {
      const double x_end = top_peak > 0 ? std::min(L.x_max, top_peak / c.value) : L.x_max;
      lines += fmt::format(
          R"(<line class="sustained-roof" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" {}>)"
          "<title>{}</title></line>\n",
          xml_escape(c.name), L.px_x(L.x_min), L.px_y(c.value * L.x_min), L.px_x(x_end), L.px_y(c.value * x_end), style,
          xml_escape(text));
      continue;
    }
    const double x_start = top_bw > 0 ? std::max(L.x_min, c.value / top_bw) : L.x_min;
    const double y = L.px_y(c.value);
    lines += fmt::format(
        R"(<line class="sustained-roof" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" {}>)"
        "<title>{}</title></line>\n",
        xml_escape(c.name), L.px_x(x_start), y, L.px_x(L.x_max), y, style, xml_escape(text));
    const double width = text_width(text, 10);
    for (double ly : {y + 13, y - 5, y + 26, y - 18}) {
      const Box b = text_box(L.right - 6 - width, ly, width, 10);
      if (b.y0 < L.top || b.y1 > L.bottom) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const Box& t) { return t.overlaps(b); })) continue;
      taken.push_back(b);
      labels += fmt::format(
          R"(<text class="sustained-roof-label" x="{:.2f}" y="{:.2f}" text-anchor="end" fill="#B35806" )"
          R"(font-size="10">{}</text>)"
          "\n",
          L.right - 6, ly, xml_escape(text));
      break;
    }
  }
  return {lines, labels};
}
}  // namespace

namespace {
// The roofline chart of one run, drawn in named steps, each a layer over the ones before: the
// machine's ceilings, the kernels' own roofs, the ridge points, the kernels, and the legend. Every
// label takes the first free spot: `taken` holds what is drawn so far.
class RooflineChart {
 public:
  // The whole run's chart, or panel `index` of `count`, holding the kernels of `keys` (family/variant).
  RooflineChart(const Results& results, const std::vector<std::string>& keys, std::size_t index, std::size_t count)
      : r(results),
        L(panel_layout(results, keys, index)),
        roofs(select_roofs(results.ceilings)),
        keys(keys.begin(), keys.end()),
        index(index),
        count(count) {
    s += plot_frame(L, true);
    // The points are known before any label is placed: no label may cover a point.
    for (const auto& b : r.benchmarks)
      if (here(b)) {
        const double x = L.px_x(*b.placement->intensity), y = L.px_y(b.placement->flop_per_s);
        taken.push_back({x - 7, y - 7, x + 7, y + 7});
      }
  }

  // The chart, and its width and height in pixels.
  std::string draw(std::pair<double, double>* size = nullptr) {
    ceilings();
    own_roofs();
    ridge_points();
    points();
    legend();
    measured();
    std::string headline = "Roofline: " + device_line(r);
    if (count > 1) {
      std::set<std::string> families;
      std::string names;
      for (const auto& k : keys_in_order())
        if (families.insert(k.substr(0, k.find('/'))).second) names += (names.empty() ? "" : ", ") + k.substr(0, k.find('/'));
      headline = fmt::format("Roofline ({} of {}: {}): {}", index + 1, count, names, device_line(r));
    }
    return sized_chart(L, std::max(ly, below), lx + widest, "Roofline: " + xml_escape(r.device.value("name", "device")),
                       xml_escape(headline), xml_escape(provenance_line(r)), s, size);
  }

 private:
  // One series per kernel (family/variant, in the order they ran): its colour, the second eight
  // hollow.
  struct Series {
    std::string key;
    const char* colour;
    bool hollow;
  };

  const Results& r;
  const ChartLayout L;
  const Roofs roofs;
  const std::set<std::string> keys;      // the panel's series; empty: every kernel
  const std::size_t index, count;        // which panel, of how many
  double below = 0;                      // the bottom of what is drawn under the plot
  std::string s;                         // all after the head, whose size is known only at the end
  std::vector<Box> taken;                // every label and point drawn so far: no label may cover another
  std::vector<const Ceiling*> by_value;  // the measured ceilings, highest first
  std::vector<Series> series;
  std::set<Precision> precisions;
  const double lx = L.right + 24;  // the legend's left edge
  double ly = 0, widest = 0;       // its next line, and its widest text so far

  // A panel's axes hold its own kernels (and every roof's ridge and top).
  static ChartLayout panel_layout(const Results& r, const std::vector<std::string>& keys, std::size_t index) {
    const std::set<std::string> mine(keys.begin(), keys.end());
    ChartLayout L = layout_of(r, [&](const BenchmarkResult& b) { return mine.empty() || mine.count(b.family + "/" + b.variant) > 0; });
    if (index > 0) L.clip_id = fmt::format("plot-area-{}", index + 1);
    return L;
  }
  // A placed kernel of this panel.
  bool here(const BenchmarkResult& b) const {
    return plotted(b) && (keys.empty() || keys.count(b.family + "/" + b.variant) > 0);
  }
  std::vector<std::string> keys_in_order() const {
    std::vector<std::string> v;
    for (const auto& b : r.benchmarks)
      if (here(b) && std::find(v.begin(), v.end(), b.family + "/" + b.variant) == v.end())
        v.push_back(b.family + "/" + b.variant);
    return v;
  }
  void out(const std::string& line) {
    s += line;
    s += '\n';
  }
  bool is_roof(const Ceiling& c) const {
    for (const auto& [k, p] : roofs.compute)
      if (p == &c) return true;
    for (const auto& [k, p] : roofs.bandwidth)
      if (p == &c) return true;
    return false;
  }
  const Series& series_of(const BenchmarkResult& b) {
    const std::string key = b.family + "/" + b.variant;
    for (const auto& x : series)
      if (x.key == key) return x;
    series.push_back({key, series_colour(series.size()), series_hollow(series.size())});
    return series.back();
  }
  std::string legend_text(double x, const std::string& text, const std::string& attrs, double size = 12) {
    widest = std::max(widest, x - lx + text_width(text, size, attrs.find("bold") != std::string::npos));
    return fmt::format(R"(<text x="{}" y="{}"{}>{}</text>)", x, ly, attrs, xml_escape(text));
  }
  // A legend line: a short stroke drawn in `style`, then its text on the next line's baseline.
  void legend_line(const std::string& style, const std::string& text) {
    out(fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" {}/>)", lx, ly + 14, lx + 14, ly + 14, style));
    ly += 18;
    out(legend_text(lx + 18, text, ""));
  }

  // The machine's ceilings. The bandwidth lines rise until they meet the highest compute roof;
  // compute roofs start where they meet the highest bandwidth roof; a sustained roof is dotted
  // under its burst roof.
  void ceilings() {
    double top_peak = 0, top_bw = 0;
    for (const auto& [k, c] : roofs.compute) top_peak = std::max(top_peak, c->value);
    for (const auto& [k, c] : roofs.bandwidth) top_bw = std::max(top_bw, c->value);
    const double slope_deg = -std::atan((L.bottom - L.top) / std::log10(L.y_max / L.y_min) /
                                        ((L.right - L.left) / std::log10(L.x_max / L.x_min))) *
                             180.0 / M_PI;
    out(fmt::format(R"svg(<g class="ceilings" clip-path="url(#{})" fill="none" stroke-linecap="round">)svg", L.clip_id));
    std::string labels;
    for (const auto& c : r.ceilings)
      if (c.value > 0) by_value.push_back(&c);
    std::stable_sort(by_value.begin(), by_value.end(), [](auto* a, auto* b) { return a->value > b->value; });
    int bw_label = 0;
    for (const Ceiling* cp : by_value) {
      const Ceiling& c = *cp;
      // calls/s and launches/s: each kernel's math or launch roof is drawn below, at its own FLOPs
      if (c.kind == CeilingKind::transcendental || c.kind == CeilingKind::launch) continue;
      const bool roof = is_roof(c);
      const std::string style = roof ? R"(stroke="#222222" stroke-width="2.2")"
                                     : R"(stroke="#777777" stroke-width="1.2" stroke-dasharray="6 4")";
      if (c.kind == CeilingKind::bandwidth) {
        const double x_end = top_peak > 0 ? std::min(L.x_max, top_peak / c.value) : L.x_max;
        out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" {}/>)",
                        xml_escape(c.name), L.px_x(L.x_min), L.px_y(c.value * L.x_min), L.px_x(x_end),
                        L.px_y(c.value * x_end), style));
        // A roof carries its full label on its line, a lower ceiling a short tag (its value is in
        // the legend); each takes the first spot along its line that no label took before.
        const std::string text = roof ? ceiling_label(c) + " " + ceiling_value(c) : c.name.substr(c.name.find('_') + 1);
        const double size = roof ? 11 : 9, width = text_width(text, size);
        const double x_first = std::max(L.x_min * 1.25, 1.6 * L.y_min / c.value);
        for (int tries = 0; tries < 40; ++tries) {
          const double x_lab = x_first * std::pow(10.0, 0.1 * ((3 * bw_label + tries) % 40));
          if (x_lab > x_end / 2.5) continue;  // not up against the compute roofs
          const double px = L.px_x(x_lab), py = L.px_y(c.value * x_lab) - 5;
          const Box whole = text_box(px, py, width, size, slope_deg);
          if (whole.x0 < L.left || whole.x1 > L.right || whole.y0 < L.top || whole.y1 > L.bottom) continue;
          const std::vector<Box> pieces = text_boxes(px, py, width, size, slope_deg);
          const bool free = std::none_of(pieces.begin(), pieces.end(), [&](const Box& b) {
            return std::any_of(taken.begin(), taken.end(), [&](const Box& t) { return t.overlaps(b); });
          });
          if (!free) continue;
          taken.insert(taken.end(), pieces.begin(), pieces.end());
          labels += fmt::format(
              R"svg(<text class="ceiling-label" x="{0:.2f}" y="{1:.2f}" transform="rotate({2:.2f} {0:.2f} {1:.2f})" )svg"
              R"(fill="{3}" font-size="{4}">{5}</text>)",
              px, py, slope_deg, roof ? "#222222" : "#666666", size, xml_escape(text));
          labels += '\n';
          break;
        }
        ++bw_label;
      } else {
        const double x_start = top_bw > 0 ? std::max(L.x_min, c.value / top_bw) : L.x_min;
        const double y = L.px_y(c.value);
        out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" {}/>)",
                        xml_escape(c.name), L.px_x(x_start), y, L.px_x(L.x_max), y, style));
        // Right-aligned above its line, or below it, or lower still: the first free spot.
        const std::string text = ceiling_label(c) + " " + ceiling_value(c);
        const double width = text_width(text, 11);
        for (double ly : {y - 5, y + 14, y - 19, y + 28}) {
          const Box b = text_box(L.right - 6 - width, ly, width, 11);
          if (b.y0 < L.top || b.y1 > L.bottom) continue;
          if (std::any_of(taken.begin(), taken.end(), [&](const Box& t) { return t.overlaps(b); })) continue;
          taken.push_back(b);
          labels += fmt::format(
              R"(<text class="ceiling-label" x="{:.2f}" y="{:.2f}" text-anchor="end" fill="{}" font-size="11">{}</text>)",
              L.right - 6, ly, roof ? "#222222" : "#666666", xml_escape(text));
          labels += '\n';
          break;
        }
      }
    }
    const auto [held_lines, held_labels] = sustained_roofs(L, roofs, top_peak, top_bw, taken);
    if (!held_lines.empty()) s += held_lines;
    out("</g>");
    s += labels + held_labels;
  }

  void own_roofs() {
    // A kernel's own roofs, beside the machine's lines: its math roof (FLOPs / Σ calls_f / rate_f,
    // from the transcendental ceilings), its launch roof (FLOPs / Σ launches_p / rate_p, from
    // the launch ceilings) and a pipelined form's overlap roof. Each depends on the kernel's mix of calls (launches) and FLOPs, so it
    // is drawn as a dashed segment across the kernel's own intensity (±4×), once per kernel and mix,
    // labelled with the ceilings whose rates make it; thicker where it binds.
    struct OwnRoof {
      const char* kind;  // "math", "launch": the classes math-roofs, math-roof, math-roof-label
      const char *colour, *dash, *bound;
      std::optional<double> (*roof)(const BenchmarkResult&);  // the FLOP rate it allows, if any
      const std::string Placement::*ceiling;
    };
    const OwnRoof own_roofs[] = {
        {"math", "#7F3C8D", "3 3", "transcendental",
         [](const BenchmarkResult& b) { return b.placement->transcendental_flop_per_s; },
         &Placement::transcendental_ceiling},
        {"launch", "#B8860B", "2 4", "launch",
         [](const BenchmarkResult& b) {
           return b.placement->launch_time_s > 0 && b.flops > 0
                      ? std::optional<double>(b.flops / b.placement->launch_time_s)
                      : std::nullopt;
         },
         &Placement::launch_ceiling},
        // A pipelined form (copies and kernels overlapped over chunks): the FLOP rate its pipeline
        // model allows, FLOPs / (Σ t_k / C + (C - 1) / C · max t_k), labelled with its passes' ceilings.
        {"pipeline", "#2E8B57", "6 3", "memory",
         [](const BenchmarkResult& b) {
           return b.pipeline_chunks > 0 && b.flops > 0 && b.placement->model_time_s > 0
                      ? std::optional<double>(b.flops / b.placement->model_time_s)
                      : std::nullopt;
         },
         &Placement::bandwidth_ceiling},
    };
    for (const OwnRoof& own : own_roofs) {
      out(fmt::format(R"svg(<g class="{}-roofs" clip-path="url(#{})" fill="none">)svg", own.kind, L.clip_id));
      std::set<std::tuple<std::string, long long, long long>> drawn;
      for (const auto& b : r.benchmarks) {
        if (!here(b)) continue;
        const std::optional<double> roof = own.roof(b);
        if (!roof) continue;
        const Placement& p = *b.placement;
        const std::string& ceiling = p.*own.ceiling;
        const double x = *p.intensity;
        if (!drawn.insert({ceiling, std::llround(std::log10(*roof) * 200), std::llround(std::log10(x) * 20)}).second)
          continue;
        const double x0 = std::max(L.x_min, x / 4), x1 = std::min(L.x_max, x * 4), y = L.px_y(*roof);
        out(fmt::format(R"(<line class="{}-roof" data-ceiling="{}" data-benchmark="{}" x1="{:.2f}" y1="{:.2f}" )"
                        R"(x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="{}" stroke-dasharray="{}"/>)",
                        own.kind, xml_escape(ceiling), xml_escape(b.name), L.px_x(x0), y, L.px_x(x1), y, own.colour,
                        p.bound == own.bound ? "2" : "1.2", own.dash));
        const std::string text = std::string(own.kind) + ": " + ceiling;
        if (auto at = place_label(L.px_x(x1), y, text_width(text, 9), L, taken))
          out(fmt::format(R"(<text class="{}-roof-label" x="{:.2f}" y="{:.2f}" font-size="9" fill="{}">{}</text>)",
                          own.kind, at->first, at->second, own.colour, xml_escape(text)));
      }
      out("</g>");
    }
  }

  void ridge_points() {
    // Ridge points: where each compute roof meets each bandwidth roof. With a roof per cache level
    // there are many; only those against DRAM (where the kernels' bytes are declared) carry a
    // label, the others a tooltip.
    auto find_ceiling = [this](const std::string& name) -> const Ceiling* {
      for (const auto& c : r.ceilings)
        if (c.name == name) return &c;
      return nullptr;
    };
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
      taken.push_back({x - 6, y - 6, x + 6, y + 6});
      if (!bw || bw->level == Level::dram) {
        const std::string text = "ridge " + intensity(rp.intensity) + " FLOP/B";
        if (auto at = place_label(x, y, text_width(text, 10), L, taken))
          out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="10" fill="#222222">{}</text>)", at->first,
                          at->second, xml_escape(text)));
      }
      out("</g>");
    }
  }

  void points() {
    // Points: one series per kernel (family/variant, in the order they ran), its colour (the second
    // eight hollow), its precisions' shapes, its sizes joined by a thin line in order of work.
    std::map<std::pair<std::string, Precision>, std::vector<const BenchmarkResult*>> lines;
    for (const auto& b : r.benchmarks)
      if (here(b)) {
        series_of(b);
        precisions.insert(b.precision);
        lines[{b.family + "/" + b.variant, b.precision}].push_back(&b);
      }
    out(fmt::format(R"svg(<g class="series" clip-path="url(#{})" fill="none" stroke-width="1" opacity="0.55">)svg",
                    L.clip_id));
    for (auto& [key, pts] : lines) {
      if (pts.size() < 2) continue;
      std::stable_sort(pts.begin(), pts.end(), [](auto* a, auto* b) { return a->flops < b->flops; });
      std::string d;
      for (const auto* b : pts)
        d += fmt::format("{} {:.2f} {:.2f} ", d.empty() ? "M" : "L", L.px_x(*b->placement->intensity),
                         L.px_y(b->placement->flop_per_s));
      out(fmt::format(R"(<path d="{}" stroke="{}"/>)", d, series_of(*pts.front()).colour));
    }
    out("</g>");
    out(R"(<g class="points">)");
    for (const auto& b : r.benchmarks) {
      if (!here(b)) continue;
      const Placement& p = *b.placement;
      const Series& ser = series_of(b);
      const double x = L.px_x(*p.intensity), y = L.px_y(p.flop_per_s);
      const bool above_roof = p.roof_pct > 100.0 * (1.0 + kRoofSlack);
      // A timing-only kernel (its author declared no reference) is placed but says so, in its
      // tooltip and its label: nothing checked that its number comes from a right answer.
      out(fmt::format(R"(<g class="point" data-name="{}" data-x="{:.2f}" data-y="{:.2f}"{}>)", xml_escape(b.name), x, y,
                      b.timing_only ? R"( data-unverified="timing only")" : ""));
      out(fmt::format("<title>{}: {}, {}, I = {} FLOP/B, {:.0f}% of roof ({}-bound){}</title>", xml_escape(b.name),
                      si(p.flop_per_s, "FLOP/s"), si(p.bytes_per_s, "B/s"), intensity(*p.intensity), p.roof_pct,
                      xml_escape(p.bound), b.timing_only ? "; UNVERIFIED: timing only, no reference" : ""));
      const std::string stroke = above_roof ? R"(stroke="#d00000" stroke-width="2.5")"
                                            : ser.hollow ? fmt::format(R"(stroke="{}" stroke-width="2")", ser.colour)
                                                         : R"(stroke="#ffffff" stroke-width="1")";
      out(shape(b.precision, x, y, ser.hollow ? "#ffffff" : ser.colour, stroke));
      const std::string label = point_label(b) + (b.timing_only ? " (unverified)" : "");
      if (auto at = place_label(x, y, text_width(label, 9), L, taken))
        out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="9" fill="#333333">{}</text>)", at->first, at->second,
                        xml_escape(label)));
      out("</g>");
    }
    out("</g>");
  }

  void legend() {
    // Legend, right of the plot; the chart grows to hold it.
    ly = L.top + 4;
    widest = 0;
    out(R"(<g class="legend">)");
    out(legend_text(lx, "Kernel (family/variant)", R"( font-weight="bold")"));
    for (const auto& ser : series) {
      ly += 18;
      out(fmt::format(R"(<rect x="{}" y="{}" width="11" height="11" fill="{}" stroke="{}" stroke-width="{}"/>)", lx + 0.5,
                      ly - 9.5, ser.hollow ? "#ffffff" : ser.colour, ser.colour, ser.hollow ? 2 : 0) +
          legend_text(lx + 18, ser.key, ""));
    }
    ly += 30;
    out(legend_text(lx, "Precision", R"( font-weight="bold")"));
    for (Precision p : precisions) {
      ly += 18;
      out(shape(p, lx + 6, ly - 4, "#555555", "") + legend_text(lx + 18, to_string(p), ""));
    }
    ly += 30;
    out(legend_text(lx, "Ceilings", R"( font-weight="bold")"));
    legend_line(R"(stroke="#222222" stroke-width="2.2")", "roof (best measured)");
    legend_line(R"(stroke="#777777" stroke-width="1.2" stroke-dasharray="6 4")", "lower ceiling");
    if (!roofs.sustained.empty())
      legend_line(kSustainedStroke, "sustained roof (held under load)");
    legend_line(R"(stroke="#7F3C8D" stroke-width="2" stroke-dasharray="3 3")", "a kernel's math roof (its calls)");
    out(fmt::format(R"(<path d="M {} {} l 5 5 l -5 5 l -5 -5 z" fill="#ffffff" stroke="#222222"/>)", lx + 7, ly + 8));
    ly += 18;
    out(legend_text(lx + 18, "ridge point", ""));
    out(fmt::format(R"(<circle cx="{}" cy="{}" r="5" fill="#ffffff" stroke="#d00000" stroke-width="2.5"/>)", lx + 7,
                    ly + 14));
    ly += 18;
    out(legend_text(lx + 18, "above its roof, within the noise", ""));
    std::vector<const BenchmarkResult*> refused;
    for (const auto& b : r.benchmarks)
      if (b.implausible() && index == 0) refused.push_back(&b);  // the run's, in its first panel
    if (!refused.empty()) {
      ly += 30;
      out(legend_text(lx, fmt::format("IMPLAUSIBLE, not drawn ({})", refused.size()),
                      R"( font-weight="bold" fill="#d00000" class="implausible")"));
      for (std::size_t i = 0; i < refused.size() && i < 8; ++i) {
        ly += 15;
        out(legend_text(lx, fmt::format("{}: {:.0f}% of its roof", refused[i]->name, refused[i]->placement->roof_pct),
                        R"( font-size="11" fill="#d00000")", 11));
      }
      if (refused.size() > 8) {
        ly += 15;
        out(legend_text(lx, fmt::format("and {} more (report.html)", refused.size() - 8), R"( font-size="11")", 11));
      }
    }
    if (index > 0) {
      ly += 30;
      out(legend_text(lx, "Each ceiling's value: under panel 1", R"( font-size="11")", 11));
    }
    out("</g>");
    if (series.empty())
      out(fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" fill="#888888">no verified kernel to place</text>)",
                      (L.left + L.right) / 2, (L.top + L.bottom) / 2));
  }

  // Every ceiling measured in this run, under the first panel's plot in columns as wide as the
  // plot, highest first, the roofs in bold.
  void measured() {
    if (index > 0 || by_value.empty()) {
      out("</svg>");
      return;
    }
    double y = L.bottom + 76, col_width = 0;
    for (const Ceiling* c : by_value)
      col_width = std::max(col_width, text_width(ceiling_label(*c) + " " + ceiling_value(*c), 11, true) + 24);
    const std::size_t cols = std::max<std::size_t>(1, static_cast<std::size_t>((L.right - L.left) / col_width));
    const std::size_t rows = (by_value.size() + cols - 1) / cols;
    out(R"(<g class="measured">)");
    out(fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Measured in this run</text>)", L.left, y));
    for (std::size_t i = 0; i < by_value.size(); ++i) {
      const Ceiling& c = *by_value[i];
      const double x = L.left + static_cast<double>(i / rows) * col_width, yy = y + 17 + 15 * static_cast<double>(i % rows);
      out(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11"{}>{}</text>)", x, yy,
                      is_roof(c) ? R"( font-weight="bold")" : "", xml_escape(ceiling_label(c) + " " + ceiling_value(c))));
    }
    out("</g>");
    below = y + 17 + 15 * static_cast<double>(rows);
    out("</svg>");
  }
};
}  // namespace

std::vector<std::vector<std::string>> chart_panels(const Results& r) {
  // Each family's series (family/variant) in the order they ran.
  std::vector<std::pair<std::string, std::vector<std::string>>> families;
  for (const auto& b : r.benchmarks) {
    if (!plotted(b)) continue;
    const std::string key = b.family + "/" + b.variant;
    auto f = std::find_if(families.begin(), families.end(), [&](const auto& x) { return x.first == b.family; });
    if (f == families.end()) f = families.insert(families.end(), {b.family, std::vector<std::string>{}});
    if (std::find(f->second.begin(), f->second.end(), key) == f->second.end()) f->second.push_back(key);
  }
  std::vector<std::vector<std::string>> panels(1);
  for (const auto& [family, keys] : families) {
    if (panels.back().size() + keys.size() > kPanelSeries && !panels.back().empty()) panels.emplace_back();
    for (const auto& k : keys) {  // a family larger than a panel fills panels of its own
      if (panels.back().size() == kPanelSeries) panels.emplace_back();
      panels.back().push_back(k);
    }
  }
  return panels;
}

std::string render_svg(const Results& r) {
  const auto panels = chart_panels(r);
  if (panels.size() == 1) return RooflineChart(r, {}, 0, 1).draw();
  // The panels stacked in one image: each a whole chart, nested at its offset.
  std::string body;
  double width = 0, height = 0;
  for (std::size_t i = 0; i < panels.size(); ++i) {
    std::pair<double, double> size;
    std::string panel = RooflineChart(r, panels[i], i, panels.size()).draw(&size);
    panel.replace(0, 4, fmt::format(R"(<svg x="0" y="{}" class="panel" data-panel="{}")", height, i + 1));
    body += panel;
    width = std::max(width, size.first);
    height += size.second;
  }
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                     R"(font-family="Helvetica, Arial, sans-serif" font-size="12">)"
                     "\n<title>Roofline: {2}</title>\n"
                     R"(<rect width="{0}" height="{1}" fill="#ffffff"/>)"
                     "\n{3}</svg>\n",
                     width, height, xml_escape(r.device.value("name", "device")), body);
}

std::string render_svg_machines(const std::vector<const Results*>& runs, const std::vector<std::string>& labels) {
  // One layout that holds every machine: its kernels, its ridge points and its roofs.
  ChartLayout L;
  L.width = 980, L.height = 600, L.right = 700, L.bottom = 530;
  L.clip_id = "plot-area-machines";
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
  s += plot_frame(L, false);

  double ly = L.top + 4, widest = 0;
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
    out(fmt::format(R"svg(<g class="machine" data-machine="{}" clip-path="url(#{})">)svg", xml_escape(labels[m]),
                    L.clip_id));
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
    widest = std::max(widest, 18 + text_width(labels[m], 12));
    const auto line = [&](const std::string& t) {
      ly += 15;
      widest = std::max(widest, 18 + text_width(t, 11));
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
  return sized_chart(L, ly, lx + widest, "Rooflines of several machines",
                     fmt::format("Rooflines: {} machines on one chart", runs.size()),
                     "each machine's ceilings as measured in its own run; ◇ ridge points: the intensity a kernel needs "
                     "before it is compute-bound",
                     s);
}

std::vector<HierarchyPoint> hierarchy_points(const Results& r) {
  std::vector<HierarchyPoint> out;
  for (const auto& b : r.benchmarks) {
    if (!b.measured() || !b.measurement || !b.counters || !b.counters->ok() || !b.counters->flops) continue;
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
  ChartLayout L = layout_around(std::move(xs), std::move(ys));
  L.clip_id = "plot-area-hierarchy";

  std::string s;
  auto out = [&s](const std::string& line) {
    s += line;
    s += '\n';
  };
  s += plot_frame(L, true, "Arithmetic intensity (FLOP/byte, measured by counters)");

  // A bandwidth roof per level, in that level's colour, up to the highest compute roof.
  double top_peak = 0;
  for (const auto& [k, c] : roofs.compute) top_peak = std::max(top_peak, c->value);
  static const char* kLevelColour[] = {"#0072B2", "#009E73", "#D55E00"};
  out(fmt::format(R"svg(<g class="ceilings" clip-path="url(#{})" fill="none">)svg", L.clip_id));
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
  out(fmt::format(R"svg(<g class="kernels" clip-path="url(#{})">)svg", L.clip_id));
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
  double widest = text_width("Families", 12);
  for (const auto& [i, f] : fams) {
    ly += 16;
    widest = std::max(widest, 16 + text_width(f, 12));
    out(fmt::format(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)", lx, ly - 9,
                    series_colour(i), lx + 16, ly, xml_escape(f)));
  }
  out("</g>");
  out("</svg>");
  return sized_chart(L, ly, lx + widest, "Hierarchical roofline: " + xml_escape(r.device.value("name", "device")),
                     "Hierarchical roofline: " + xml_escape(device_line(r)),
                     "one point per memory level: measured FLOPs over the bytes counted there (CUPTI), at the FLOP "
                     "rate of the timed median; roofs measured in the same run",
                     s);
}

}  // namespace roofbench

namespace roofbench {

const char* verdict_colour(Verdict v) {
  switch (v) {
    case Verdict::slower: return "#d00000";
    case Verdict::faster: return "#009E73";
    case Verdict::unsure: return "#E69F00";
    case Verdict::same: return "#888888";
    default: return "#000000";
  }
}

RooflineDiff render_roofline_diff(const Comparison& c, const Results& base, const Results& fresh) {
  RooflineDiff d;
  std::map<std::string, const BenchmarkResult*> in_base, in_new;
  for (const auto& b : base.benchmarks) in_base[b.name] = &b;
  for (const auto& b : fresh.benchmarks) in_new[b.name] = &b;
  for (const auto& row : c.kernels) {
    const auto a = in_base.find(row.name), b = in_new.find(row.name);
    const BenchmarkResult* x = a == in_base.end() ? nullptr : a->second;
    const BenchmarkResult* y = b == in_new.end() ? nullptr : b->second;
    if (!x || !y || !plotted(*x) || !plotted(*y)) {
      auto why = [](const BenchmarkResult* b, const char* side) -> std::string {
        if (!b || !b->placement) return fmt::format("no number in {}", side);
        if (b->flops == 0) return "no FLOPs to place on a roofline";
        if (b->placement->implausible) return fmt::format("implausible in {} (above its roof)", side);
        return fmt::format("not placed in {}", side);
      };
      d.not_drawn.push_back({row.name, !x || !plotted(*x) ? why(x, "BASE") : why(y, "NEW")});
      continue;
    }
    d.arrows.push_back({row.name, row.verdict, *x->placement->intensity, *y->placement->intensity,
                        x->placement->flop_per_s, y->placement->flop_per_s, x->placement->roof_pct,
                        y->placement->roof_pct});
  }
  const Roofs roofs = select_roofs(fresh.ceilings);
  std::vector<double> xs, ys;
  for (const auto& a : d.arrows) xs.insert(xs.end(), {a.base_intensity, a.new_intensity}), ys.insert(ys.end(), {a.base_rate, a.new_rate});
  double top_peak = 0, top_bw = 0;
  for (const auto& [k, p] : roofs.compute) top_peak = std::max(top_peak, p->value), ys.push_back(p->value);
  for (const auto& [k, p] : roofs.bandwidth) top_bw = std::max(top_bw, p->value);
  if (top_peak > 0 && top_bw > 0) xs.push_back(top_peak / top_bw);
  ChartLayout L = layout_around(xs, ys);
  L.clip_id = "plot-area-diff";
  std::string s;
  auto out = [&s](const std::string& line) {
    s += line;
    s += '\n';
  };
  s += plot_frame(L, true, "Arithmetic intensity (FLOP/byte, declared or counted)");
  out("<defs>");
  for (Verdict v : kVerdicts)
    out(fmt::format(R"(<marker id="arrow-{}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" )"
                    R"(orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{}"/></marker>)",
                    to_string(v), verdict_colour(v)));
  out("</defs>");
  // NEW's roofs: the bandwidth roofs up to the highest compute roof, the compute roofs from the highest bandwidth roof.
  out(fmt::format(R"svg(<g class="ceilings" clip-path="url(#{})" fill="none" stroke="#222222" stroke-width="1.6">)svg", L.clip_id));
  for (const auto& [k, p] : roofs.bandwidth) {
    const double x_end = top_peak > 0 ? std::min(L.x_max, top_peak / p->value) : L.x_max;
    out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}"><title>{}</title></line>)",
                    xml_escape(p->name), L.px_x(L.x_min), L.px_y(p->value * L.x_min), L.px_x(x_end), L.px_y(p->value * x_end),
                    xml_escape(ceiling_label(*p) + " " + ceiling_value(*p))));
  }
  for (const auto& [k, p] : roofs.compute) {
    const double x_start = top_bw > 0 ? std::max(L.x_min, p->value / top_bw) : L.x_min;
    out(fmt::format(R"(<line class="ceiling" data-ceiling="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}"><title>{}</title></line>)",
                    xml_escape(p->name), L.px_x(x_start), L.px_y(p->value), L.px_x(L.x_max), L.px_y(p->value),
                    xml_escape(ceiling_label(*p) + " " + ceiling_value(*p))));
  }
  out("</g>");
  // Every end is reserved before any label is placed: no label covers a point.
  std::vector<Box> taken;
  for (const auto& a : d.arrows)
    for (const auto& [x, y] : {std::pair{a.base_intensity, a.base_rate}, std::pair{a.new_intensity, a.new_rate}})
      taken.push_back({L.px_x(x) - 5, L.px_y(y) - 5, L.px_x(x) + 5, L.px_y(y) + 5});
  // Each compute roof's name and value, right-aligned above its line (or below it), where free.
  for (const auto& [k, p] : roofs.compute) {
    const std::string label = ceiling_label(*p) + " " + ceiling_value(*p);
    const double width = text_width(label, 10), y = L.px_y(p->value);
    for (double ly : {y - 5, y + 14}) {
      const Box b = text_box(L.right - 6 - width, ly, width, 10);
      if (b.y0 < L.top || b.y1 > L.bottom) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const Box& t) { return t.overlaps(b); })) continue;
      taken.push_back(b);
      out(fmt::format(R"(<text class="ceiling-label" x="{:.2f}" y="{:.2f}" text-anchor="end" font-size="10" fill="#222222">{}</text>)",
                      L.right - 6, ly, xml_escape(label)));
      break;
    }
  }
  // SAME first, so that the changed arrows are drawn over them.
  std::vector<const DiffArrow*> order;
  for (const auto& a : d.arrows) order.push_back(&a);
  std::stable_sort(order.begin(), order.end(), [](auto* l, auto* r) { return (l->verdict == Verdict::same) > (r->verdict == Verdict::same); });
  out(fmt::format(R"svg(<g class="diff-arrows" clip-path="url(#{})">)svg", L.clip_id));
  for (const DiffArrow* a : order) {
    const char* colour = verdict_colour(a->verdict);
    const double x0 = L.px_x(a->base_intensity), y0 = L.px_y(a->base_rate), x1 = L.px_x(a->new_intensity), y1 = L.px_y(a->new_rate);
    out(fmt::format(R"(<g class="diff-arrow" data-name="{}" data-verdict="{}">)", xml_escape(a->name), to_string(a->verdict)));
    out(fmt::format("<title>{}: {}, {} → {}, I = {} → {} FLOP/B, {:.0f}% → {:.0f}% of its roof</title>", xml_escape(a->name),
                    to_string(a->verdict), si(a->base_rate, "FLOP/s"), si(a->new_rate, "FLOP/s"), intensity(a->base_intensity),
                    intensity(a->new_intensity), a->base_roof_pct, a->new_roof_pct));
    out(fmt::format(R"(<circle class="diff-base" cx="{:.2f}" cy="{:.2f}" r="3.5" fill="#ffffff" stroke="{}" stroke-width="1.5"/>)", x0, y0, colour));
    if (std::hypot(x1 - x0, y1 - y0) >= 8)  // shorter: the two dots say it
      out(fmt::format(R"(<line class="diff-line" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="1.8" )"
                      R"svg(marker-end="url(#arrow-{})"/>)svg",
                      x0, y0, x1 - 4 * (x1 - x0) / std::hypot(x1 - x0, y1 - y0), y1 - 4 * (y1 - y0) / std::hypot(x1 - x0, y1 - y0),
                      colour, to_string(a->verdict)));
    out(fmt::format(R"(<circle class="diff-new" cx="{:.2f}" cy="{:.2f}" r="3.5" fill="{}" stroke="{}"/>)", x1, y1, colour, colour));
    if (a->verdict != Verdict::same) {
      const std::string label = a->name;
      if (auto at = place_label(x1, y1, text_width(label, 9), L, taken))
        out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="9" fill="{}">{}</text>)", at->first, at->second, colour,
                        xml_escape(label)));
    }
    out("</g>");
  }
  out("</g>");
  // The legend, right of the plot.
  const double lx = L.right + 24;
  double ly = L.top + 4, widest = 0;
  auto text = [&](double x, const std::string& t, const std::string& attrs, double size = 12) {
    widest = std::max(widest, x - lx + text_width(t, size, attrs.find("bold") != std::string::npos));
    out(fmt::format(R"(<text x="{}" y="{}"{}>{}</text>)", x, ly, attrs, xml_escape(t)));
  };
  out(R"(<g class="legend">)");
  text(lx, "BASE → NEW, by verdict", R"( font-weight="bold")");
  for (Verdict v : {Verdict::slower, Verdict::faster, Verdict::unsure, Verdict::same}) {
    const auto n = std::count_if(d.arrows.begin(), d.arrows.end(), [v](const DiffArrow& a) { return a.verdict == v; });
    ly += 18;
    out(fmt::format(R"svg(<line class="legend-verdict" data-verdict="{}" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.8" marker-end="url(#arrow-{})"/>)svg",
                    to_string(v), lx, ly - 4, lx + 14, ly - 4, verdict_colour(v), to_string(v)));
    text(lx + 20, fmt::format("{} ({})", to_string(v), n), "");
  }
  ly += 18;
  out(fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="#ffffff" stroke="#555555" stroke-width="1.5"/>)", lx + 4, ly - 4));
  text(lx + 20, "BASE's point", "");
  ly += 18;
  out(fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="#555555"/>)", lx + 4, ly - 4));
  text(lx + 20, "NEW's point", "");
  ly += 18;
  text(lx, "sideways: its FLOPs per byte changed", R"( font-size="11")", 11);
  ly += 15;
  text(lx, "lines: NEW's roofs (each value: its tooltip)", R"( font-size="11")", 11);
  if (!d.not_drawn.empty()) {
    ly += 30;
    text(lx, fmt::format("Not drawn ({})", d.not_drawn.size()), R"( font-weight="bold")");
    for (std::size_t i = 0; i < d.not_drawn.size() && i < 12; ++i) {
      ly += 15;
      text(lx, d.not_drawn[i].first + ": " + d.not_drawn[i].second, R"( font-size="11")", 11);
    }
    if (d.not_drawn.size() > 12) {
      ly += 15;
      text(lx, fmt::format("and {} more", d.not_drawn.size() - 12), R"( font-size="11")", 11);
    }
  }
  out("</g>");
  out("</svg>");
  const std::string headline = fmt::format("Roofline diff: BASE {} → NEW {}", c.base.commit, c.fresh.commit);
  const std::string sub = fmt::format("{} · {} kernels drawn", c.fresh.device, d.arrows.size());
  d.svg = sized_chart(L, ly, lx + widest, "Roofline diff", xml_escape(headline), xml_escape(sub), s);
  return d;
}

std::string roofline_diff_markdown(const RooflineDiff& d, const std::string& link) {
  std::string url;  // a Markdown link target: percent-encoded where a space or bracket would end it
  for (unsigned char ch : link)
    url += std::isalnum(ch) || std::string_view("/._-~").find(static_cast<char>(ch)) != std::string_view::npos
               ? std::string(1, static_cast<char>(ch))
               : fmt::format("%{:02X}", ch);
  std::string out = fmt::format("\n**Roofline diff**: each kernel from BASE to NEW on NEW's roofs ([chart]({})).\n\n", url);
  out += "| verdict | kernels drawn | toward their roof | away from it |\n|---|--:|--:|--:|\n";
  for (Verdict v : {Verdict::slower, Verdict::faster, Verdict::unsure, Verdict::same}) {
    int n = 0, toward = 0, away = 0;
    for (const auto& a : d.arrows)
      if (a.verdict == v) ++n, toward += a.new_roof_pct > a.base_roof_pct, away += a.new_roof_pct < a.base_roof_pct;
    out += fmt::format("| {} | {} | {} | {} |\n", to_string(v), n, toward, away);
  }
  if (!d.not_drawn.empty()) out += fmt::format("\n{} not drawn (not placed in both runs).\n", d.not_drawn.size());
  return out;
}

std::string roofline_diff_html(const RooflineDiff& d, const Comparison& c) {
  return fmt::format("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>roofbench {}: BASE {} → NEW {}</title>"
                     "<style>body{{font-family:Helvetica,Arial,sans-serif;margin:16px}}pre{{font-size:12px}}</style>"
                     "</head><body>\n<h1>roofbench {}: BASE {} → NEW {}</h1>\n{}\n<pre>{}</pre>\n</body></html>\n",
                     c.rounds > 0 ? "ab" : "compare", xml_escape(c.base.commit), xml_escape(c.fresh.commit),
                     c.rounds > 0 ? "ab" : "compare", xml_escape(c.base.commit), xml_escape(c.fresh.commit), d.svg,
                     xml_escape(render_compare_text(c)));
}

}  // namespace roofbench
