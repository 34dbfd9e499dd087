// libFuzzer target: a results.json from anywhere, as `compare` and `history` read it, with the
// reader's limits (bench/results.h) and the statistics' caps (kMaxComparedSamples, and
// kMaxComparedTotal over the comparison) in place. What the reader accepts is compared with
// itself and with a copy whose every sample is 10% slower, and made a history of three runs
// (itself, the slower copy, itself), then every compare and history printer runs over it. A reader
// or a comparison may refuse (InputError, one line); anything else that escapes, and every
// sanitizer report, is a finding. Run: scripts/fuzz.sh
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/results.h"
#include "reports/compare.h"
#include "reports/history.h"
#include "roofline/model.h"

using namespace roofbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Results r;
  try {
    r = parse_results(std::string(reinterpret_cast<const char*>(data), size));
    apply_model(r);  // as read_results does
  } catch (const InputError&) {
    return 0;
  }
  Results slower = r;
  for (auto& b : slower.benchmarks)
    if (b.measurement)
      for (double& s : b.measurement->samples_s) s *= 1.1;
  // Every path of the statistics, with fewer bootstrap resamples than the 2,000 a real comparison
  // draws: under the sanitizers 2,000 for each of the H200 seed's 237 kernels take the whole 1 s
  // limit, and the number of resamples changes how long a loop runs, not which code runs.
  CompareOptions opt;
  opt.resamples = 50;
  try {
    const Comparison c = compare_results(r, slower, opt, "base.json", "new.json");
    (void)render_compare_text(c);
    (void)render_compare_markdown(c);
    (void)compare_json(c).dump();
  } catch (const InputError&) {
  }
  try {
    const History h = build_history({{"a.json", "", "", r}, {"b.json", "", "", slower}, {"c.json", "", "", r}}, opt);
    (void)render_history_text(h);
    (void)render_history_markdown(h);
    (void)render_history_svgs(h);
  } catch (const InputError&) {
  }
  return 0;
}
