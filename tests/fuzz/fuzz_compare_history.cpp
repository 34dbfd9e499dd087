// libFuzzer target: a results.json from anywhere, as `compare` and `history` read it, with the
// reader's limits (bench/results.h) and the statistics' caps (kMaxComparedSamples, and
// kMaxComparedTotal over the comparison) in place. What the reader accepts is compared with
// itself and with a copy whose every sample is 10% slower, and made a history of six runs (three
// of it, then three of the slower copy: change points are sought), then every compare and history
// printer runs over it. A reader
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
  // draws and fewer shuffles than change points' 499: under the sanitizers, 2,000 resamples for
  // each of the H200 seed's 237 kernels take the whole 1 s limit, and their number changes how
  // long a loop runs, not which code runs.
  CompareOptions opt;
  opt.resamples = 50;
  opt.change_point_permutations = 39;  // likewise; with alpha 0.05 a change point can still be found
  opt.alpha = 0.05;
  try {
    const Comparison c = compare_results(r, slower, opt, "base.json", "new.json");
    (void)render_compare_text(c);
    (void)render_compare_markdown(c);
    (void)compare_json(c).dump();
  } catch (const InputError&) {
  }
  try {
    // Six runs, three each side of a step: enough for change points (3 runs a side) to be sought.
    std::vector<HistoryRun> runs;
    for (int i = 0; i < 6; ++i) runs.push_back({"run" + std::to_string(i) + ".json", "", "", i < 3 ? r : slower});
    const History h = build_history(std::move(runs), opt);
    (void)render_history_text(h);
    (void)render_history_markdown(h);
    (void)render_history_svgs(h);
  } catch (const InputError&) {
  }
  return 0;
}
