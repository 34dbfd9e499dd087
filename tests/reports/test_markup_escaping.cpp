// Results files come from other machines (CI artifacts, a colleague's run): every string a
// results file holds, and every key of its free-form objects, is set in turn to markup, and the
// HTML and SVG made from the file must show it as text, never as an element or an attribute; so
// must the Markdown (summary.md, and compare's Markdown of it against the original), where the
// payload starts with a backtick, to break out of a code span if it could.
// One case per field, over a results file the suite wrote (tests/fixtures).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/results.h"
#include "reports/compare.h"
#include "reports/svg.h"
#include "reports/format.h"
#include "reports/report.h"
#include "roofbench/version.h"

using namespace roofbench;
using json = nlohmann::json;

namespace {

const std::string kPayload = "<rb-injected a=\"q'\">";

json fixture() {
  std::ifstream in(std::string(ROOFBENCH_SOURCE_DIR) + "/tests/fixtures/cpu-quick-saxpy.results.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

// Every place in `j` where a string stands, as a JSON pointer, and every key of an object.
void strings_and_keys(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& values,
                      std::vector<std::pair<json::json_pointer, std::string>>& keys) {
  if (j.is_string()) {
    values.push_back(at);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      keys.emplace_back(at, it.key());
      strings_and_keys(it.value(), at / it.key(), values, keys);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) strings_and_keys(j[i], at / i, values, keys);
  }
}

// The HTML and SVG reports of `doc`, or nothing when the reader refuses the file.
std::vector<std::pair<std::string, std::string>> markup_of(const json& doc) {
  Results r;
  try {
    r = parse_results(doc.dump());
  } catch (const InputError&) {
    return {};
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [name, text] : render_reports(r))
    if (name.size() > 4 && (name.substr(name.size() - 5) == ".html" || name.substr(name.size() - 4) == ".svg"))
      out.emplace_back(name, text);
  // compare's roofline diff of the fixture against it: its SVG and its HTML page.
  static const Results original = parse_results(fixture().dump());
  CompareOptions opt;
  opt.allow_device_mismatch = true;
  opt.resamples = 20;  // the verdicts do not matter here, only the text they are written in
  try {
    const Comparison c = compare_results(original, r, opt, "base/results.json", "new/results.json");
    const RooflineDiff d = render_roofline_diff(c, original, r);
    out.emplace_back("compare --chart", d.svg);
    out.emplace_back("compare --html", roofline_diff_html(d, c));
  } catch (const InputError&) {
  }
  return out;
}

// The payload escaped leaves neither its element nor its attribute behind.
void expect_escaped(const std::vector<std::pair<std::string, std::string>>& files, const std::string& field) {
  for (const auto& [name, text] : files) {
    EXPECT_EQ(text.find("<rb-injected"), std::string::npos) << field << " reaches " << name << " as an element";
    EXPECT_EQ(text.find("a=\"q'"), std::string::npos) << field << " reaches " << name << " as an attribute";
  }
}

TEST(MarkupEscaping, EveryStringOfAResultsFileReachesHtmlAndSvgAsText) {
  const json base = fixture();
  std::vector<json::json_pointer> values;
  std::vector<std::pair<json::json_pointer, std::string>> keys;
  strings_and_keys(base, json::json_pointer(), values, keys);
  ASSERT_GT(values.size(), 20u);
  int accepted = 0;
  for (const auto& at : values) {
    json doc = base;
    doc[at] = kPayload + doc[at].get<std::string>();
    const auto files = markup_of(doc);
    if (files.empty()) continue;  // the reader refused the field's new value (an enum, a schema name)
    ++accepted;
    expect_escaped(files, at.to_string());
  }
  // Most strings are free text that the reader takes as it is (names, method, warnings, device,
  // provenance): if it refused most of them, this test would be checking nothing.
  EXPECT_GT(accepted, static_cast<int>(values.size()) / 2) << accepted << " of " << values.size();
}

// `line` with its code spans taken out (CommonMark: a run of n backticks opens a span that the
// next run of exactly n closes; a backslash escapes the character after it outside a span).
std::string outside_code_spans(const std::string& line) {
  std::string out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      out += line.substr(i, 2);
      i += 2;
      continue;
    }
    if (line[i] != '`') {
      out += line[i++];
      continue;
    }
    std::size_t n = 0;
    while (i + n < line.size() && line[i + n] == '`') ++n;
    std::size_t j = i + n, close = std::string::npos;
    while (j < line.size()) {
      if (line[j] != '`') {
        ++j;
        continue;
      }
      std::size_t m = 0;
      while (j + m < line.size() && line[j + m] == '`') ++m;
      if (m == n) {
        close = j;
        break;
      }
      j += m;
    }
    if (close == std::string::npos) {  // no closing run: the backticks are text
      out += line.substr(i, n);
      i += n;
    } else {
      i = close + n;
    }
  }
  return out;
}

void expect_markdown_escaped(const std::string& name, const std::string& text, const std::string& field) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string open = outside_code_spans(line);
    EXPECT_EQ(open.find("<rb-injected"), std::string::npos) << field << " reaches " << name << " as HTML: " << line;
  }
}

TEST(MarkupEscaping, EveryStringOfAResultsFileReachesMarkdownAsText) {
  const json base = fixture();
  const Results original = parse_results(base.dump());
  std::vector<json::json_pointer> values;
  std::vector<std::pair<json::json_pointer, std::string>> keys;
  strings_and_keys(base, json::json_pointer(), values, keys);
  int accepted = 0;
  for (const auto& at : values) {
    json doc = base;
    doc[at] = "`" + kPayload + doc[at].get<std::string>();
    Results r;
    try {
      r = parse_results(doc.dump());
    } catch (const InputError&) {
      continue;  // the reader refused the field's new value
    }
    ++accepted;
    for (auto& [name, text] : render_reports(r))
      if (name.size() > 3 && name.substr(name.size() - 3) == ".md") expect_markdown_escaped(name, text, at.to_string());
    CompareOptions opt;
    opt.allow_device_mismatch = true;
    opt.resamples = 20;  // the verdicts do not matter here, only the text they are written in
    try {
      const Comparison c = compare_results(original, r, opt, "base/results.json", "new/results.json");
      expect_markdown_escaped("compare --markdown", render_compare_markdown(c), at.to_string());
      expect_markdown_escaped("compare --markdown (the diff)",
                              roofline_diff_markdown(render_roofline_diff(c, original, r), "diff.svg"), at.to_string());
    } catch (const InputError&) {
      // compare refuses some pairs (another schema, another device id): nothing rendered
    }
  }
  EXPECT_GT(accepted, static_cast<int>(values.size()) / 2) << accepted << " of " << values.size();
}

TEST(MarkupEscaping, AMarkdownCodeSpanHoldsAnyBackticks) {
  for (const std::string s : {"a", "`", "a`b", "``x``", " lead", "trail`", "a|b"}) {
    const std::string span = md_code(s);
    EXPECT_EQ(outside_code_spans(span), "") << s << " -> " << span;
  }
  EXPECT_EQ(md_cell("<b>x</b> & [l](u) | `c` \\ a_b"), "&lt;b&gt;x&lt;/b&gt; &amp; \\[l\\](u) \\| \\`c\\` \\\\ a_b");
}

TEST(MarkupEscaping, EveryKeyOfAFreeFormObjectReachesHtmlAndSvgAsText) {
  const json base = fixture();
  std::vector<json::json_pointer> values;
  std::vector<std::pair<json::json_pointer, std::string>> keys;
  strings_and_keys(base, json::json_pointer(), values, keys);
  int accepted = 0;
  for (const auto& [at, key] : keys) {
    json doc = base;
    json& parent = doc[at];
    json v = parent[key];
    parent.erase(key);
    parent[kPayload + key] = v;
    const auto files = markup_of(doc);
    if (files.empty()) continue;  // a key the reader needs: it refuses the file without it
    ++accepted;
    expect_escaped(files, (at / key).to_string() + " (as a key)");
  }
  EXPECT_GT(accepted, 0);  // the device and provenance objects take any key
}

}  // namespace
