// libFuzzer target: a results.json from anywhere (a CI artifact, a colleague's run; plain, gzip or
// xz) read as
// report, compare, history, merge and ab read it, then every report printer and merge run over
// what the reader accepted. A reader may refuse (InputError, one line); anything else that
// escapes, and every sanitizer report, is a finding. Compare and history have a target of their
// own (fuzz_compare_history.cpp). Run: scripts/fuzz.sh
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/merge.h"
#include "bench/results.h"
#include "reports/report.h"

using namespace roofbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Results r;
  try {
    // Decompressed first where the bytes are gzip or xz (a committed baseline, a CI artifact),
    // with a limit of 64 MiB here (the reader's is 512 MiB) to stay within the fuzzer's memory.
    r = parse_results(results_text(std::string(reinterpret_cast<const char*>(data), size), "input", 64 << 20));
  } catch (const InputError&) {
    return 0;
  }
  // Accepted: every printer takes it whole.
  (void)render_reports(r);
  (void)render_console(r, /*verbose=*/true);
  // Two copies merged, as `merge` joins the parts of a split run.
  try {
    (void)merge_results({r, r}, {"a", "b"});
  } catch (const InputError&) {
  }
  return 0;
}
