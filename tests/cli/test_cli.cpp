// The roofbench binary end to end: bad input gets one line on stderr, exit code 2 and no files;
// a real (quick, filtered) CPU run writes every output and `report` re-renders from it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <chrono>
#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/cpu_info.h"
#include "bench/openblas_core.h"
#include "bench/registry.h"
#include "bench/results.h"
#include "reports/format.h"
#include "roofbench/version.h"
#include "tests/cli/cli_testing.h"
#include "tests/testing.h"

namespace fs = std::filesystem;

using namespace roofbench::testing::cli;

TEST(Cli, UnknownDevice) {
  const fs::path d = fresh("rb_cli_dev");
  expect_usage_error(rb("run --device tpu:0 --out " + d.string()), "unknown device 'tpu:0'");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, AGpuThatIsNotThereSaysWhatCudaAnswered) {
  const fs::path d = fresh("rb_cli_gpu");
  const CmdResult r = rb("run --quick --device cuda:99 --out " + d.string());
  expect_usage_error(r, "cuda:99");
  EXPECT_TRUE(empty_or_missing(d));
  // Without any GPU, the line carries CUDA's own answer (no driver, a driver too old, no device)
  // instead of a bare count; with GPUs, it says how many there are; without CUDA, it says so.
  if (r.err.find(": 0 CUDA GPU(s) visible") != std::string::npos)
    EXPECT_NE(r.err.find("(CUDA says cuda"), std::string::npos) << r.err;
  else
    EXPECT_TRUE(r.err.find("CUDA GPU(s) visible") != std::string::npos ||
                r.err.find("built without CUDA") != std::string::npos)
        << r.err;
}

TEST(Cli, FilterThatMatchesNothing) {
  const fs::path d = fresh("rb_cli_filter");
  expect_usage_error(rb("run --device cpu --filter no-such-kernel --out " + d.string()), "matches no benchmark");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, InvalidFilterRegex) {
  const fs::path d = fresh("rb_cli_re");
  expect_usage_error(rb("run --device cpu --filter '([' --out " + d.string()), "not a valid regular expression");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, InvalidSkipRegexAndASkipThatLeavesNothing) {
  const fs::path d = fresh("rb_cli_skip_re");
  const std::string run = "run --device cpu --quick --out " + d.string();
  expect_usage_error(rb(run + " --skip '('"), "--skip '(' is not a valid regular expression");
  expect_usage_error(rb(run + " --filter gemm/naive --skip naive"),
                     "--skip 'naive' leaves none of the 1 benchmark that --filter 'gemm/naive' matches");
  expect_usage_error(rb(run + " --filter 'gemm/(naive|blocked)' --skip 'gemm'"), "leaves none of the 3 benchmarks that");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, SkipLeavesOutCeilingsAndSizesAndListsThemAsNotRun) {
  // The way around a benchmark that takes the device down: leave it out, ceilings included (all
  // but the two this test looks for and the FMA peak, so that it stays short).
  const fs::path out = fresh("rb_skip");
  const std::string skip = "ceiling/(l[123]_read|fp64_fma|dram_(read|write|memcpy|triad|update)|math_|launch_)|M:512";
  const CmdResult r =
      rb("run --device cpu --quick --budget 0.2 --filter gemm/blocked --skip '" + skip + "' --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("left out: ceiling/l1_read/fp32 (skipped by --skip"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(out / "results.json"));
  EXPECT_EQ(j.at("settings").at("skip"), skip);
  std::map<std::string, std::string> not_run;
  for (const auto& n : j.at("not_run")) not_run[n.at("benchmark")] = n.at("why");
  for (const char* c :
       {"ceiling/l1_read/fp32", "ceiling/l2_read/fp32", "ceiling/l3_read/fp32", "ceiling/fp64_fma/fp64"})
    EXPECT_EQ(not_run[c], "skipped by --skip '" + skip + "'") << c;
  EXPECT_EQ(not_run["gemm/blocked/fp32"],
            "skipped by --skip '" + skip + "' at 1 of its 2 sizes");
  std::vector<std::string> ran;
  for (const auto& b : j.at("benchmarks")) ran.push_back(b.at("name"));
  EXPECT_EQ(ran, std::vector<std::string>{"gemm/blocked/fp32/M:256/N:256/K:256"});
  std::vector<std::string> ceilings;
  for (const auto& c : j.at("ceilings")) ceilings.push_back(c.at("name"));
  EXPECT_EQ(std::count(ceilings.begin(), ceilings.end(), "l1_read"), 0);
  EXPECT_EQ(std::count(ceilings.begin(), ceilings.end(), "dram_copy"), 1);
}

TEST(Cli, UnwritableOutputFolder) {
  const fs::path d = fresh("rb_cli_unwritable");
  fs::create_directories(d);
  std::ofstream(d / "file") << "x";
  expect_usage_error(rb("run --device cpu --quick --out " + (d / "file" / "out").string()),
                     "cannot create output folder");
}

TEST(Cli, NumbersThatAreNotNumbersAreRefused) {
  // NaN passes a plain range check (every comparison with it is false): a threshold or alpha of
  // NaN would make every verdict UNSURE, and no gate could fail.
  const fs::path d = fresh("rb_cli_nan");
  for (const char* opt : {"--budget nan", "--noise-target nan", "--budget inf", "--seed -1",
                          "--seed 18446744073709551616", "--seed 1e3"})
    expect_usage_error(rb("run --device cpu --quick --filter saxpy " + std::string(opt) + " --out " + d.string()),
                       std::string(opt).substr(0, std::string(opt).find(' ')));
  EXPECT_TRUE(empty_or_missing(d));
  const std::string f = std::string(ROOFBENCH_SOURCE_DIR) + "/tests/fixtures/cpu-quick-saxpy.results.json";
  for (const char* opt : {"--threshold nan", "--alpha nan", "--alpha NaN"})
    expect_usage_error(rb("compare " + f + " " + f + " " + opt), std::string(opt).substr(0, std::string(opt).find(' ')));
  expect_usage_error(rb("history " + f + " " + f + " --threshold nan"), "--threshold");
  expect_usage_error(rb("fleet " + f + " " + f + " --mad nan"), "--mad");
  EXPECT_EQ(rb("compare " + f + " " + f + " --threshold 5 --alpha 0.01").code, 0);  // numbers still are
}

TEST(Cli, AnEmptyPathIsRefusedNotTakenForTheDefault) {
  // "--out $UNSET" in a script: an empty path would fall back to a default folder unnoticed.
  const std::string f = std::string(ROOFBENCH_SOURCE_DIR) + "/tests/fixtures/cpu-quick-saxpy.results.json";
  expect_usage_error(rb("run --device cpu --quick --filter saxpy --out ''"), "--out: an empty path");
  expect_usage_error(rb("compare " + f + " " + f + " --json ''"), "--json: an empty path");
  const fs::path d = fresh("rb_cli_empty_ceilings_from");
  expect_usage_error(rb("run --device cpu --quick --filter saxpy --ceilings-from '' --out " + d.string()),
                     "--ceilings-from: an empty path");
  EXPECT_TRUE(empty_or_missing(d));
  // And a folder where ncu's CSV is expected says so.
  expect_usage_error(rb("crosscheck " + f + " " + ROOFBENCH_SOURCE_DIR + "/tests --benchmark x"),
                     "is a folder, not the CSV that ncu --csv printed");
}

TEST(CliAb, ABinaryThatWritesNoResultsIsNamed) {
  const fs::path out = fresh("rb_ab_true");
  expect_usage_error(rb("ab /bin/true " + std::string(ROOFBENCH_BIN) + " --rounds 1 --out " + out.string() +
                        " -- --device cpu --quick --filter saxpy"),
                     "`/bin/true ceilings` exited 0 but wrote no");
}

TEST(Cli, VersionNamesTheCommitTheBinaryWasBuiltFrom) {
  const CmdResult r = rb("--version");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(ROOFBENCH_VERSION, 0), 0u) << r.out;
  EXPECT_NE(r.out.find(std::string(" commit ") + ROOFBENCH_GIT_COMMIT), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(with uncommitted changes)") != std::string::npos, ROOFBENCH_GIT_DIRTY == 1) << r.out;
}

TEST(Cli, CeilingsWithASkipThatLeavesNoneAreRefused) {
  const fs::path d = fresh("rb_cli_ceil_skip");
  expect_usage_error(rb("ceilings --device cpu --quick --skip '.*' --out " + d.string()), "leaves no ceiling");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, UnknownOptionAndMissingSubcommand) {
  EXPECT_EQ(rb("run --device cpu --bogus").code, 2);
  EXPECT_EQ(rb("").code, 2);
  EXPECT_EQ(rb("frobnicate").code, 2);
}

TEST(Cli, ReportOfAMissingFile) {
  const fs::path d = fresh("rb_cli_missing");
  expect_usage_error(rb("report /nonexistent/results.json --out " + d.string()), "cannot open");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, ReportOfMalformedAndWrongSchemaFiles) {
  const fs::path d = fresh("rb_cli_bad");
  fs::create_directories(d);
  std::ofstream(d / "truncated.json") << R"({"schema": "roofbench.results.v1", "benchmarks": [)";
  std::ofstream(d / "schema.json") << R"({"schema": "something-else", "benchmarks": []})";
  std::ofstream(d / "fields.json") << R"({"schema": "roofbench.results.v1"})";
  expect_usage_error(rb("report " + (d / "truncated.json").string()), "not valid JSON");
  expect_usage_error(rb("report " + (d / "schema.json").string()), "unsupported schema 'something-else'");
  expect_usage_error(rb("report " + (d / "fields.json").string()), "malformed results");
  // Nothing but the three inputs: no report was written beside them.
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 3);
}

TEST(Cli, ReportIntoAnotherRunsFolderIsRefusedAndIntoACopyOfItsOwnIsNot) {
  const std::string fixture = std::string(ROOFBENCH_SOURCE_DIR) + "/tests/fixtures/cpu-quick-saxpy.results.json";
  const fs::path other = fresh("rb_cli_report_other");
  fs::create_directories(other);
  std::ofstream(other / "results.json") << "another run's";
  expect_usage_error(rb("report " + fixture + " --out " + other.string()), "holds another run's results.json");
  EXPECT_EQ(std::distance(fs::directory_iterator(other), fs::directory_iterator()), 1);  // nothing written
  const fs::path copy = fresh("rb_cli_report_copy");
  fs::create_directories(copy);
  fs::copy_file(fixture, copy / "results.json");
  const CmdResult r = rb("report " + fixture + " --out " + copy.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(copy / "summary.md"));
}

TEST(Cli, ListNamesEveryRegisteredBenchmark) {
  const CmdResult r = rb("list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("gemm/naive/fp32"), std::string::npos);
  EXPECT_NE(r.out.find("ceiling/fp32_fma/fp32 [ceiling]"), std::string::npos);
  // Every variant the binary registers, on a line of its own under its backend, and nothing else.
  std::map<std::string, int> listed;  // "backend name" -> lines
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string dev, name, tag;
    words >> dev >> name >> tag;
    ++listed[dev + " " + name + (tag == "[ceiling]" ? " [ceiling]" : "")];
  }
  std::size_t registered = 0;
  for (const auto& v : roofbench::registry()) {
    ++registered;
    const std::string key = to_string(v.backend) + " " + v.base_name() + (v.ceiling ? " [ceiling]" : "");
    EXPECT_EQ(listed[key], 1) << key;
  }
  EXPECT_EQ(listed.size(), registered);
}

TEST(Cli, GoogleBenchmarkFlagsPassThrough) {
  const fs::path d = fresh("rb_cli_gbench");
  const CmdResult r = rb("run --device cpu --quick --filter saxpy --benchmark_filter=saxpy --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto gb = nlohmann::json::parse(slurp(d / "gbench.json"));
  ASSERT_EQ(gb.at("benchmarks").size(), 1u);
  EXPECT_EQ(r.out.find("[1/1] stream/saxpy") != std::string::npos, true) << r.out;
  // A bad flag, or a filter of Google Benchmark's that leaves nothing to run: refused before any
  // folder is made or anything measured.
  const fs::path bogus = fresh("rb_g2");
  expect_usage_error(rb("run --device cpu --quick --benchmark_bogus=1 --out " + bogus.string()),
                     "unknown Google Benchmark flag");
  EXPECT_TRUE(empty_or_missing(bogus));
  const fs::path none = fresh("rb_g3");
  expect_usage_error(rb("run --device cpu --quick --filter saxpy --benchmark_filter=nomatch --out " + none.string()),
                     "--benchmark_filter=nomatch matches none of the");
  EXPECT_TRUE(empty_or_missing(none));
}

// ---------------------------------------------------------------- compare

namespace {

// A results file with two kernels; kernel "a" takes `a_scale` ms per run, "b" 1 ms, 1% noise.
fs::path write_results(const std::string& dir_name, double a_scale, std::uint64_t seed,
                       const std::string& device = "Test CPU") {
  using namespace roofbench::testing;
  roofbench::Results r = sample_results();
  r.device["name"] = device;
  for (const auto& [name, ms] : {std::pair<std::string, double>{"a", a_scale}, {"b", 1.0}}) {
    roofbench::BenchmarkResult b = kernel(name, 0.5e9, 1e6, 1e-3);  // half the 1 TFLOP/s roof at 1 ms
    b.measurement = measurement_of(noisy_samples(ms * 1e-3, 0.01, 30, seed++));
    r.benchmarks.push_back(b);
  }
  const fs::path d = fresh(dir_name);
  fs::create_directories(d);
  std::ofstream(d / "results.json") << roofbench::dump_results(r);
  return d / "results.json";
}

}  // namespace

TEST(CliCompare, SameFileIsSameAndExitsZero) {
  const fs::path a = write_results("rb_cmp_aa", 1.0, 1);
  const CmdResult r = rb("compare " + a.string() + " " + a.parent_path().string());  // a folder works too
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 SLOWER, 0 UNSURE, 2 SAME"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliCompare, ASlowdownExitsOneAndWritesMarkdownAndJson) {
  const fs::path base = write_results("rb_cmp_base", 1.0, 1), slow = write_results("rb_cmp_slow", 1.1, 100);
  const fs::path out = fresh("rb_cmp_out");
  const CmdResult r = rb("compare " + base.string() + " " + slow.string() + " --markdown " +
                         (out / "summary.md").string() + " --json " + (out / "verdicts.json").string());
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("SLOWER  gemm/a/fp32/n:1"), std::string::npos) << r.out;
  EXPECT_NE(slurp(out / "summary.md").find("| **SLOWER** | `gemm/a/fp32/n:1`"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(out / "verdicts.json"));
  EXPECT_EQ(j.at("summary").at("exit_code"), 1);
  EXPECT_EQ(j.at("benchmarks")[0].at("verdict"), "SLOWER");
}

TEST(CliCompare, AnImprovementExitsZero) {
  const fs::path base = write_results("rb_cmp_base2", 1.0, 1), fast = write_results("rb_cmp_fast", 0.8, 100);
  const CmdResult r = rb("compare " + base.string() + " " + fast.string());
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("FASTER  gemm/a/fp32/n:1"), std::string::npos) << r.out;
}

TEST(CliCompare, BadInputExitsTwoWithOneLine) {
  const fs::path good = write_results("rb_cmp_good", 1.0, 1);
  const fs::path d = fresh("rb_cmp_bad");
  fs::create_directories(d);
  std::ofstream(d / "malformed.json") << "{not json";
  const std::string text = slurp(good);
  std::ofstream(d / "truncated.json") << text.substr(0, text.size() / 2);
  std::ofstream(d / "verdicts.json") << R"({"schema": "roofbench.compare.v1", "benchmarks": []})";
  expect_usage_error(rb("compare " + good.string() + " " + (d / "malformed.json").string()), "malformed.json");
  expect_usage_error(rb("compare " + (d / "truncated.json").string() + " " + good.string()), "truncated.json");
  expect_usage_error(rb("compare " + good.string() + " " + (d / "verdicts.json").string()), "verdicts.json");
  expect_usage_error(rb("compare " + good.string() + " " + (d / "missing.json").string()), "missing.json");
  expect_usage_error(rb("compare " + good.string() + " " + d.string()), "holds no results.json");
  expect_usage_error(rb("compare " + good.string()), "new is required");
  expect_usage_error(rb("compare " + good.string() + " " + good.string() + " --threshold-for nopercent"),
                     "expected REGEX=PERCENT");
  expect_usage_error(rb("compare " + good.string() + " " + good.string() + " --threshold-for '([=5'"),
                     "not a valid regular expression");
  expect_usage_error(rb("compare " + good.string() + " " + good.string() + " --threshold 0"), "--threshold");
}

TEST(CliCompare, DifferentDevicesAreRefusedUnlessAllowed) {
  const fs::path a = write_results("rb_cmp_dev_a", 1.0, 1), b = write_results("rb_cmp_dev_b", 1.0, 50, "Other CPU");
  expect_usage_error(rb("compare " + a.string() + " " + b.string()), "comparing different devices is refused");
  const CmdResult r = rb("compare " + a.string() + " " + b.string() + " --allow-device-mismatch");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("device: cpu: Test CPU → cpu: Other CPU"), std::string::npos) << r.out;
}

TEST(CliCompare, OutputsAreWrittenWholeOrNotAtAll) {
  const fs::path a = write_results("rb_cmp_atomic", 1.0, 1);
  const fs::path out = fresh("rb_cmp_atomic_out");
  fs::create_directories(out);
  std::ofstream(out / "blocker") << "a file where a folder is needed";
  const CmdResult r = rb("compare " + a.string() + " " + a.string() + " --json " + (out / "v.json").string() +
                         " --markdown " + (out / "blocker" / "summary.md").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_FALSE(fs::exists(out / "v.json"));  // the other output is not written either
}

TEST(CliCompare, TheVerdictsAreNeverWrittenOverAnInputOrTwiceToOneFile) {
  const fs::path base = write_results("rb_cmp_in_base", 1.0, 1), fresh_run = write_results("rb_cmp_in_new", 1.0, 60);
  const std::string before = slurp(base);
  expect_usage_error(rb("compare " + base.string() + " " + fresh_run.string() + " --json " + base.string()),
                     "an input");
  EXPECT_EQ(slurp(base), before);
  const fs::path out = fresh("rb_cmp_twice");
  fs::create_directories(out);
  expect_usage_error(rb("compare " + base.string() + " " + fresh_run.string() + " --markdown " + (out / "x").string() +
                        " --json " + (out / "x").string()),
                     "named twice");
  EXPECT_TRUE(fs::is_empty(out));
  // A run's folder: its results.json is a link into the folder's generations, written by run alone.
  const fs::path run = fresh("rb_cmp_managed");
  ASSERT_EQ(rb("report " + base.string() + " --out " + run.string()).code, 0);
  ASSERT_TRUE(fs::is_symlink(run / "summary.md"));
  expect_usage_error(rb("compare " + base.string() + " " + fresh_run.string() + " --json " + (run / "summary.md").string()),
                     "a file of a roofbench output folder");
}

TEST(CliCompare, GbenchJsonWorksWithGoogleBenchmarksCompareTool) {
  // tools/compare.py from Debian's libbenchmark-tools, with the system Python's scipy.
  const char* tool = "/usr/share/benchmark/compare.py";
  if (!fs::exists(tool) || std::system("/usr/bin/python3 -c 'import scipy' 2>/dev/null") != 0)
    GTEST_SKIP() << "Google Benchmark's compare.py or scipy is not installed (scripts/setup.sh installs both)";
  const fs::path d = fresh("rb_cli_gbench_compare");
  const CmdResult run = rb("run --device cpu --quick --filter saxpy --benchmark_filter=saxpy --benchmark_repetitions=3 --out " +
                           d.string());
  ASSERT_EQ(run.code, 0) << run.err;

  const std::string gb = (d / "gbench.json").string();
  const fs::path log = d / "compare.log";
  const int rc = std::system(("/usr/bin/python3 " + std::string(tool) + " --no-color benchmarks " + gb + " " + gb +
                              " >" + log.string() + " 2>&1")
                                 .c_str());
  const std::string out = slurp(log);
  EXPECT_EQ(rc, 0) << out;
  // The U test ran on the three repetitions.
  EXPECT_NE(out.find("stream/saxpy/fp32/n:67108864/iterations:1/manual_time_pvalue"), std::string::npos) << out;

  // github-action-benchmark's "googlecpp" reader takes name, real_time, time_unit, iterations,
  // cpu_time and threads from every row; the rates are counters beside them.
  const auto j = nlohmann::json::parse(slurp(d / "gbench.json"));
  for (const auto& b : j.at("benchmarks")) {
    EXPECT_TRUE(b.at("name").is_string());
    for (const char* k : {"real_time", "cpu_time", "iterations", "threads"}) EXPECT_TRUE(b.at(k).is_number()) << k;
    EXPECT_TRUE(b.at("time_unit").is_string());
    if (b.value("run_type", "") == "iteration") {
      EXPECT_TRUE(b.at("FLOP/s").is_number());
      EXPECT_TRUE(b.at("bytes/s").is_number());
    }
  }
}

TEST(CliHistory, AFolderOfRunsGivesTrendsChartsAndAnExitCode) {
  // Two runs in one folder tree, ordered by their run time; the second is 12% slower on "a".
  const fs::path root = fresh("rb_hist");
  const fs::path a = write_results("rb_hist_src_a", 1.0, 1), b = write_results("rb_hist_src_b", 1.12, 100);
  roofbench::Results later = roofbench::load_results(b.string());
  later.provenance["utc_time"] = "2026-11-22T00:00:00Z";
  fs::create_directories(root / "2026-11-21");
  fs::create_directories(root / "2026-11-22");
  fs::copy_file(a, root / "2026-11-21" / "results.json");
  std::ofstream(root / "2026-11-22" / "results.json") << roofbench::dump_results(later);

  const fs::path out = fresh("rb_hist_out");
  const CmdResult r = rb("history " + root.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("STEP      gemm/a/fp32/n:1"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out / "history.md"));
  EXPECT_TRUE(fs::exists(out / "history-gemm.svg"));

  // The files in the order given instead: the slow run first, so "a" got faster.
  const CmdResult rev = rb("history " + b.string() + " " + a.string());
  EXPECT_EQ(rev.code, 0) << rev.err << rev.out;

  expect_usage_error(rb("history " + a.string()), "history needs at least two results files");
  expect_usage_error(rb("history " + fresh("rb_hist_missing").string()), "cannot open for reading");
  const fs::path empty = fresh("rb_hist_empty");
  fs::create_directories(empty);
  expect_usage_error(rb("history " + empty.string()), "history needs at least two results files; found 0");
}

// ---------------------------------------------------------------- scripts/ci-gpu.sh

namespace {

std::string roofbench_bin() {
  const char* env = std::getenv("ROOFBENCH_BIN");
  return env ? env : ROOFBENCH_BIN;
}

// Runs scripts/NAME with `env` before it; returns its exit code and its output.
int run_script(const std::string& name, const std::string& env, const std::string& args, std::string* output) {
  const fs::path log = fs::temp_directory_path() / ("rb_" + name + "." + std::to_string(::getpid()) + ".log");
  const std::string cmd = env + " ROOFBENCH_BIN=" + roofbench_bin() + " bash " + ROOFBENCH_SOURCE_DIR + "/scripts/" +
                          name + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  *output = slurp(log);
  fs::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int ci_gpu(const std::string& env, const std::string& args, std::string* output) {
  return run_script("ci-gpu.sh", env, args, output);
}

}  // namespace

// One baseline run and one ci-gpu run (two of each cost 85 s of CI): the script refuses bad
// arguments; it takes the baseline stored compressed, as committed; --skip reaches `roofbench run` (the way past a kernel that faults on the runner) and
// compare lists the baseline's rows of the skipped kernel as only in the base; options after --
// reach compare; the script exits with compare's code and writes the verdicts where GitHub's job
// summary reads them. No DRAM ceiling: the plumbing is under test, not roofs, and each moves
// 512 MiB arrays on a VM that reports a 260 MiB LLC.
TEST(CliScripts, CiGpuRunsSkipsComparesWritesTheSummaryAndExitsWithComparesCode) {
  // The CPU stands in for the GPU; the script is the same.
  const std::string few = roofbench::testing::kNoDramCeilings;
  const std::string filter = " --skip-build --device cpu --quick --filter 'saxpy|lowprec/relu/fp32'";
  std::string log;
  EXPECT_EQ(ci_gpu("", "--baseline " + fresh("rb_ci_missing").string() + filter + " --skip '" + few + "'", &log), 2)
      << log;
  EXPECT_NE(log.find("ci-gpu: no baseline at"), std::string::npos) << log;
  EXPECT_EQ(ci_gpu("", "--bogus", &log), 2) << log;

  const fs::path base = fresh("rb_ci_base"), run = fresh("rb_ci_run"), summary = fresh("rb_ci_summary.md");
  ASSERT_EQ(rb("run --device cpu --quick --filter 'saxpy|lowprec/relu/fp32' --skip '" + few + "' --out " + base.string())
                .code,
            0);
  // Stored as a committed baseline is, results.json.xz (the script once looked for results.json alone).
  ASSERT_EQ(std::system(("xz -z -0 -c " + (base / "results.json").string() + " >" + (base / "results.json.xz").string())
                            .c_str()),
            0);
  fs::remove(base / "results.json");  // (a link to the run's file)
  ASSERT_TRUE(fs::exists(base / "results.json.xz") && !fs::exists(base / "results.json"));
  const int rc = ci_gpu("GITHUB_STEP_SUMMARY=" + summary.string(),
                        "--baseline " + base.string() + " --out " + run.string() + filter + " --skip 'relu|" + few +
                            "' -- --threshold 7",
                        &log);
  // Whatever the verdicts on this machine, the script exits with compare's code and writes them.
  EXPECT_TRUE(rc == 0 || rc == 1) << log;
  ASSERT_TRUE(fs::exists(run / "compare.json")) << log;
  const auto verdicts = nlohmann::json::parse(slurp(run / "compare.json"));
  EXPECT_EQ(verdicts.at("summary").at("exit_code").get<int>(), rc) << log;
  EXPECT_DOUBLE_EQ(verdicts.at("options").at("threshold").get<double>(), 0.07);  // options after -- reach compare
  EXPECT_EQ(slurp(run / "compare.md").rfind("### roofbench compare:", 0), 0u);
  EXPECT_EQ(slurp(summary), slurp(run / "compare.md"));  // the GitHub job summary gets the same table
  // --skip: the relu kernel left out of the run, listed as not run, and its baseline rows only in the base.
  const auto results = nlohmann::json::parse(slurp(run / "results.json"));
  EXPECT_EQ(results.at("settings").at("skip").get<std::string>(), "relu|" + few);
  ASSERT_TRUE(results.contains("not_run")) << log;
  std::vector<std::string> kernels_not_run;
  for (const auto& n : results.at("not_run")) {
    const std::string name = n.at("benchmark").get<std::string>();
    if (name.rfind("ceiling/", 0) != 0) kernels_not_run.push_back(name);
  }
  EXPECT_EQ(kernels_not_run, std::vector<std::string>{"lowprec/relu/fp32"});
  ASSERT_FALSE(results.at("benchmarks").empty()) << log;
  for (const auto& b : results.at("benchmarks"))
    EXPECT_EQ(b.at("name").get<std::string>().find("relu"), std::string::npos) << b.at("name");
  const auto only_base = verdicts.at("only_in_base");
  ASSERT_FALSE(only_base.empty()) << log;
  for (const auto& n : only_base) EXPECT_EQ(n.get<std::string>().rfind("lowprec/relu/fp32/", 0), 0u) << n;
}

// ---------------------------------------------------------------- scripts/baseline.sh

namespace {

int baseline_sh(const std::string& args, std::string* output) {
  return run_script("baseline.sh", "", args, output);
}

}  // namespace

TEST(CliScripts, BaselineRunsTwoPairsComparesEachAndWritesTheFirstCountersRunWithProvenance) {
  // The CPU stands in for the GPU; the script is the same. No DRAM ceiling: its four runs are
  // compared by their times, not placed (each DRAM ceiling moves 512 MiB arrays on a VM that
  // reports a 260 MiB LLC: 75 s of CI with one kept).
  const fs::path out = fresh("rb_baseline_out"), work = fresh("rb_baseline_work");
  std::string log;
  const int rc = baseline_sh("--device cpu --out " + out.string() + " --work " + work.string() +
                                 " --threshold 5 -- --quick --filter saxpy --budget 0.2 --skip '" +
                                 roofbench::testing::kNoDramCeilings + "'",
                             &log);
  ASSERT_TRUE(rc == 0 || rc == 1) << log;
  for (const char* run : {"plain-1", "plain-2", "counters-1", "counters-2"}) {
    EXPECT_TRUE(fs::exists(work / run / "results.json")) << run;
    EXPECT_TRUE(fs::exists(work / run / "console.log")) << run;
  }
  // The baseline is the first run with counters, files and all; its results.json stored as xz,
  // as committed baselines are (scripts/compress-results.sh), and only so.
  for (const char* f : {"gbench.json", "roofline.svg", "report.html", "summary.md", "console.log"}) {
    EXPECT_FALSE(slurp(out / f).empty()) << f;  // two missing files would be equal too
    EXPECT_EQ(slurp(out / f), slurp(work / "counters-1" / f)) << f;
  }
  EXPECT_FALSE(fs::exists(out / "results.json"));
  ASSERT_TRUE(fs::exists(out / "results.json.xz")) << log;
  EXPECT_NE(slurp(out / "results.json.xz"), slurp(work / "counters-1" / "results.json"));
  const std::string results = roofbench::read_results_text((out / "results.json.xz").string());
  EXPECT_EQ(results, slurp(work / "counters-1" / "results.json"));
  EXPECT_EQ(roofbench::results_path(out.string()), (out / "results.json.xz").string());
  EXPECT_TRUE(nlohmann::json::parse(results).at("settings").contains("filter"));
  EXPECT_FALSE(nlohmann::json::parse(results).at("counters").is_null());
  // Each pair's verdicts; the exit code says whether any of them moved.
  int moved = 0;
  for (const char* pair : {"plain", "counters"}) {
    ASSERT_TRUE(fs::exists(out / (std::string("agreement-") + pair + ".md"))) << log;
    const auto v = nlohmann::json::parse(slurp(out / (std::string("agreement-") + pair + ".json")));
    EXPECT_DOUBLE_EQ(v.at("options").at("threshold").get<double>(), 0.05);
    const auto& counts = v.at("summary").at("counts");
    const int n = counts.at("SLOWER").get<int>() + counts.at("FASTER").get<int>() + counts.at("FAILED").get<int>();
    EXPECT_NE(log.find(std::string("the two ") + pair + (n ? " runs DISAGREE" : " runs agree")), std::string::npos)
        << log;
    moved += n;
  }
  EXPECT_EQ(rc, moved ? 1 : 0) << log;
  const std::string provenance = slurp(out / "PROVENANCE.md");
  EXPECT_NE(provenance.find("scripts/baseline.sh --device cpu --threshold 5 -- --quick --filter saxpy"),
            std::string::npos)
      << provenance;
  // The commit the binary was built from, as its results.json records it (the files the script
  // writes into OUT, often a folder of the tree, are not uncommitted changes of the build).
  const nlohmann::json run = nlohmann::json::parse(results).at("provenance");
  EXPECT_NE(provenance.find("- commit the binary was built from: " + run.at("git_commit").get<std::string>()),
            std::string::npos)
      << provenance;
  if (run.at("git_dirty").is_boolean())
    EXPECT_EQ(provenance.find("(with uncommitted changes)") != std::string::npos, run.at("git_dirty").get<bool>())
        << provenance;
}

TEST(CliScripts, BaselineRefusesBadInputBeforeRunning) {
  const fs::path out = fresh("rb_baseline_bad");
  std::string log;
  EXPECT_EQ(baseline_sh("--bogus", &log), 2) << log;
  EXPECT_EQ(baseline_sh("--device cpu --out " + out.string() + " --sanitizer-log /nonexistent/sanitizer.log", &log), 2)
      << log;
  EXPECT_NE(log.find("no sanitizer log at /nonexistent/sanitizer.log"), std::string::npos) << log;
  // Bad run options stop it at the first run with exit 2, not four runs later.
  EXPECT_EQ(baseline_sh("--device cpu --out " + out.string() + " --work " + (out / "w").string() +
                            " -- --filter 'no-such-kernel'",
                        &log),
            2)
      << log;
  EXPECT_NE(log.find("run plain-1 stopped with exit 2"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out / "results.json"));
}

TEST(Cli, ReportOfTwoResultsFilesDrawsBothRooflinesOnOneChart) {
  const fs::path a = write_results("rb_multi_a", 1.0, 1), b = write_results("rb_multi_b", 1.0, 50, "Other CPU");
  const fs::path out = fresh("rb_multi_out");
  const CmdResult r = rb("report " + a.string() + " " + b.parent_path().string() + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = slurp(out / "rooflines.svg");
  EXPECT_NE(svg.find("data-machine=\"Test CPU\""), std::string::npos);
  EXPECT_NE(svg.find("data-machine=\"Other CPU\""), std::string::npos);
  // Each machine's balance: 1 TFLOP/s FP32 over 100 GB/s DRAM (sample_results' ceilings).
  EXPECT_NE(svg.find("balance: 10.0 FLOP per byte"), std::string::npos) << svg;
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
  expect_usage_error(rb("report " + a.string() + " " + (out / "missing.json").string() + " --out " + out.string()),
                     "missing.json");
}

// Committed fixtures, both written by the suite: a quick CPU run (tests/fixtures) and the
// committed CPU baseline. Each machine's balance on the chart comes from its own file's
// ceilings: its highest compute roof over its best DRAM roof.
TEST(Cli, ReportOfTheCommittedFixturesShowsEachRunsOwnBalance) {
  const std::vector<std::string> inputs = {std::string(ROOFBENCH_SOURCE_DIR) + "/tests/fixtures/cpu-quick-saxpy.results.json",
                                           std::string(ROOFBENCH_SOURCE_DIR) +
                                               "/reports/baselines/cpu-amd-epyc-2c/results.json.xz"};
  const fs::path out = fresh("rb_fixture_pair");
  const CmdResult r = rb("report " + inputs[0] + " " + inputs[1] + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = slurp(out / "rooflines.svg");
  int machines = 0;
  for (auto at = svg.find("<g class=\"machine\""); at != std::string::npos; at = svg.find("<g class=\"machine\"", at + 1))
    ++machines;
  EXPECT_EQ(machines, 2);
  for (const auto& path : inputs) {
    const roofbench::Results res = roofbench::load_results(path);
    double top = 0, dram = 0;
    for (const auto& c : res.ceilings) {
      if (c.kind == roofbench::CeilingKind::compute) top = std::max(top, c.value);
      if (c.kind == roofbench::CeilingKind::bandwidth && c.level == roofbench::Level::dram) dram = std::max(dram, c.value);
    }
    ASSERT_GT(top, 0) << path;
    ASSERT_GT(dram, 0) << path;
    const std::string balance = "balance: " + roofbench::intensity(top / dram) + " FLOP per byte";
    EXPECT_NE(svg.find(balance), std::string::npos) << path << ": " << balance;
    EXPECT_NE(svg.find("data-machine=\"" + res.device.at("name").get<std::string>()), std::string::npos) << path;
  }
}

TEST(CliCounters, MetricsListsEachCudaBenchmarksCountersAndPassesForGH100) {
  const CmdResult r = rb("metrics --filter 'gemm/(naive|cublas)/'");
  if (r.code == 2 && r.err.find("built without CUDA") != std::string::npos)
    GTEST_SKIP() << "this build has no CUDA, so no CUPTI metric tables: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("chip GH100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm/cublas/bf16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm__ops_path_tensor_src_bf16_dst_fp32.sum"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 2 passes "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("stream/saxpy"), std::string::npos) << "--filter is honoured";
}

TEST(CliCounters, UnknownMetricNamesAreRefusedBeforeAnythingRunsWithTheirNearNames) {
  const CmdResult r = rb("metrics --metrics gpu__time_duration.sum,dram__bytes_reed.sum");
  if (r.code == 2 && r.err.find("built without CUDA") != std::string::npos)
    GTEST_SKIP() << "this build has no CUDA, so no CUPTI metric tables: " << r.err;
  expect_usage_error(r, "'dram__bytes_reed.sum' (near: dram__bytes_read.sum");
  expect_usage_error(rb("metrics --chip GX999"), "CUPTI does not know chip 'GX999'");
  expect_usage_error(rb("run --device cpu --quick --metrics 'a,,b'"), "empty metric name");
  // Known names that CUPTI will not put in one configuration: the user's list, refused as input
  // (it was an "internal error", exit 1), with what to do.
  expect_usage_error(rb("metrics --metrics nvlrx__bytes.sum,dram__bytes_read.sum"),
                     "will not schedule nvlrx__bytes.sum,dram__bytes_read.sum together on GH100");
}

TEST(CliCounters, ARunWithoutCountersSaysWhyAndKeepsItsTimings) {
  const fs::path out = fresh("rb_counters_cpu");
  // No DRAM ceiling (512 MiB arrays on a VM that reports a 260 MiB LLC): the counters are under
  // test, not placement, and saxpy left unplaced cannot be refused by a roof measured slow.
  const CmdResult r = rb("run --device cpu --quick --budget 0.2 --counters --filter stream/saxpy --skip '" +
                         std::string(roofbench::testing::kNoDramCeilings) + "' --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(out / "results.json"));
  EXPECT_EQ(j.at("counters").at("requested"), true);
  EXPECT_EQ(j.at("counters").at("available"), false);
  // The reason depends on the build ("read on CUDA devices only" with CUDA, "built without CUDA"
  // without): the console says the same one results.json records.
  const std::string reason = j.at("counters").at("reason");
  EXPECT_NE(reason.find("CUDA"), std::string::npos) << reason;
  EXPECT_NE(r.out.find("counters: none (" + reason + "); the run goes on with timing only"), std::string::npos)
      << r.out;
  ASSERT_FALSE(j.at("benchmarks").empty());  // the loop below checks something
  for (const auto& b : j.at("benchmarks")) {
    EXPECT_TRUE(b.at("counters").is_null());
    EXPECT_TRUE(b.at("verified").get<bool>());
    EXPECT_GT(b.at("median_s").get<double>(), 0);
  }
  EXPECT_FALSE(fs::exists(out / "hierarchy.svg"));
  EXPECT_NE(slurp(out / "summary.md").find("**Counters**: none"), std::string::npos);
}

// ---------------------------------------------------------------- runs in parts, runs stopped

TEST(CliRun, DryRunPrintsThePlanAndAnUpperBoundOnItsTimeAndWritesNothing) {
  const fs::path out = fresh("rb_dry");
  const CmdResult r = rb("run --dry-run --device cpu --quick --budget 0.5 --filter saxpy --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("stream/saxpy/fp32/"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ceiling/dram_read/fp32/"), std::string::npos) << r.out;  // the ceilings first
  EXPECT_NE(r.out.find("/pass:end"), std::string::npos) << r.out;               // and again last
  const auto at = r.out.find("\nestimate: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sampling up to their budget", at), std::string::npos) << r.out;
  EXPECT_TRUE(empty_or_missing(out));
}

TEST(CliRun, DryRunPlansAGpuThatIsNotHereWithCeilingsFromAFileNotYetWritten) {
#ifndef ROOFBENCH_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA: there is no GPU run to plan";
#endif
  // A GPU that is not here is planned for the build's architecture; the ceilings may come from
  // a file that does not exist yet (the GPU check plans its parts before measuring), all but the
  // launch rates, which every process measures for itself.
  const CmdResult g = rb("run --dry-run --device cuda:0 --ceilings-from /nonexistent --filter saxpy");
  ASSERT_EQ(g.code, 0) << g.err;
  std::istringstream lines(g.out);
  int planned = 0;
  for (std::string l; std::getline(lines, l);)
    if (l.find("ceiling/") != std::string::npos) {
      ++planned;
      EXPECT_NE(l.find("ceiling/launch_"), std::string::npos) << l;
    }
  EXPECT_GT(planned, 0) << g.out;
  EXPECT_NE(g.out.find("(the others from --ceilings-from)"), std::string::npos) << g.out;
}

// --min-samples: what compare's UNSURE ("run more samples") asks for. With a noise target that any
// two samples meet, sampling stops at the minimum: 10 with --quick, N when asked, past the quick
// run's 500-sample cap when N is larger.
TEST(CliRun, MinSamplesAreTakenBeforeTheNoiseTargetStopsSamplingAndTooFewAreRefused) {
  const std::string common =
      "run --device cpu --quick --warm --filter launch/fused --skip '^ceiling/' --noise-target 100 --budget 60 --out ";
  for (const int asked : {0, 600}) {
    const fs::path out = fresh("rb_min_samples_" + std::to_string(asked));
    const CmdResult r = rb(common + out.string() + (asked ? " --min-samples " + std::to_string(asked) : ""));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(out / "results.json"));
    const int min_samples = asked ? asked : 10;
    EXPECT_EQ(j.at("settings").at("min_samples"), min_samples);
    EXPECT_GE(j.at("settings").at("max_samples").get<int>(), min_samples);
    ASSERT_EQ(j.at("benchmarks").size(), 1u);
    const auto& m = j.at("benchmarks")[0].at("measurement");
    EXPECT_GE(m.at("samples_s").size(), static_cast<std::size_t>(min_samples));
    EXPECT_NE(m.at("stop_reason"), "time_budget");
  }
  expect_usage_error(rb("run --device cpu --quick --min-samples 4"), "--min-samples: Value 4 not in range 5");
}

TEST(CliRun, CeilingsFromAnotherMachineAreRefusedBeforeMeasuring) {
  const fs::path other = write_results("rb_ceil_other", 1.0, 1, "Some Other CPU");
  const fs::path out = fresh("rb_ceil_out");
  expect_usage_error(rb("run --device cpu --quick --filter saxpy --ceilings-from " + other.string() + " --out " +
                        out.string()),
                     "its ceilings were measured on cpu Some Other CPU on host test, this run is on cpu ");
  EXPECT_TRUE(empty_or_missing(out));
  expect_usage_error(rb("ceilings --device cpu --ceilings-from " + other.string()), "unknown argument '--ceilings-from'");
}

// A roof taken from another file (--ceilings-from) was measured at another time, maybe beside
// other work: a kernel that comes out above it gets it measured once more, in this run, before
// the kernel is refused (the gate of a CI run once refused a fused kernel at 211% of a borrowed
// DRAM roof that a loaded runner had measured at a fifth of its speed). The borrowed FP32 FMA roof
// here is planted at a thousandth of what it measured (at a tenth, a GEMM slowed 23x beside other
// tests in CI came out below it); a roof the run may not measure (--skip) still refuses.
TEST(CliRun, ABorrowedRoofThatAKernelBeatsIsMeasuredOnceMoreBeforeTheKernelIsRefused) {
  const fs::path measured = fresh("rb_borrow_measured"), planted = fresh("rb_borrow_planted");
  const CmdResult c = rb("ceilings --device cpu --quick --skip "
                         "'ceiling/(dram_(write|copy|triad|update|memcpy)|l1|l2|l3|fp64|math|launch)' --out " +
                         measured.string());
  ASSERT_EQ(c.code, 0) << c.err;
  roofbench::Results r = roofbench::load_results((measured / "results.json").string());
  double planted_value = 0;
  for (auto& ceiling : r.ceilings) {
    if (ceiling.name != "fp32_fma") continue;
    // As a pass a thousand times slower: every sample, and so every rate, of each pass.
    for (roofbench::Measurement* m : {&ceiling.measurement, ceiling.measurement_end ? &*ceiling.measurement_end : nullptr}) {
      if (!m) continue;
      for (double& t : m->samples_s) t *= 1000;
      m->stats = roofbench::summarize(m->samples_s);
    }
    ceiling.value_start /= 1000;
    if (ceiling.value_end) *ceiling.value_end /= 1000;
    ceiling.value /= 1000;
    planted_value = ceiling.value;
  }
  ASSERT_GT(planted_value, 0) << "the run measured no fp32_fma";
  fs::create_directories(planted);
  std::ofstream(planted / "results.json") << roofbench::dump_results(r);

  const std::string run = "run --device cpu --quick --filter '^gemm/packed/fp32/M:256/' --ceilings-from " +
                          planted.string() + " --out ";
  const fs::path out = fresh("rb_borrow_run");
  const CmdResult b = rb(run + out.string());
  EXPECT_NE(b.out.find("measuring 1 ceiling(s) again: a kernel came out above them (1 also in samples as brief as the "
                       "kernel's)"),
            std::string::npos)
      << b.out;
  const roofbench::Results got = roofbench::load_results((out / "results.json").string());
  ASSERT_EQ(got.benchmarks.size(), 1u);
  const roofbench::BenchmarkResult& gemm = got.benchmarks[0];
  ASSERT_TRUE(gemm.placement);
  // Placed on the roof of this run's pass, at least ten times lower a share than on the planted
  // one. (Whether it then passes is a timing verdict: passed here, it exits 0; the again pass taken
  // while other tests load the machine and the GEMM not may still leave it above.)
  EXPECT_LT(10 * gemm.placement->roof_pct, 100 * gemm.placement->flop_per_s / planted_value);
  EXPECT_EQ(b.code, gemm.implausible() ? 1 : 0) << b.out << b.err;
  for (const auto& ceiling : got.ceilings) {
    if (ceiling.name != "fp32_fma") continue;
    ASSERT_TRUE(ceiling.value_again);
    // The GEMM's samples were far briefer than the planted ones: it is also measured in samples
    // as brief as the GEMM's. The roof is the faster of this run's two passes (which one is a
    // timing verdict: beside other tests the brief one often dodges what slows the long one).
    ASSERT_TRUE(ceiling.value_brief) << ceiling.method;
    EXPECT_GT(ceiling.value, 10 * planted_value);  // the passes of this run are the roof
    EXPECT_DOUBLE_EQ(ceiling.value, std::max(*ceiling.value_again, *ceiling.value_brief));
    EXPECT_NE(ceiling.method.find("measured once more by a run that took it from --ceilings-from"), std::string::npos)
        << ceiling.method;
    // And the file's passes are said to have run slow: its other roofs may be low too.
    bool said = false;
    for (const auto& w : ceiling.warnings) said |= w.find("the best of its earlier passes") != std::string::npos;
    EXPECT_TRUE(said) << "no warning that the file's passes ran slow";
  }
  EXPECT_EQ(got.settings.at("ceilings_from").at("measured_again"), nlohmann::json::array({"fp32_fma"}));

  const fs::path skipped = fresh("rb_borrow_skipped");
  const CmdResult k = rb(run + skipped.string() + " --skip '^ceiling/fp32_fma'");
  EXPECT_EQ(k.code, 1) << k.out << k.err;
  EXPECT_EQ(k.out.find("ceiling(s) again"), std::string::npos) << k.out;
  EXPECT_NE(k.out.find("not measuring fp32_fma (ceiling/fp32_fma/"), std::string::npos) << k.out;
  const roofbench::Results refused = roofbench::load_results((skipped / "results.json").string());
  ASSERT_EQ(refused.benchmarks.size(), 1u);
  EXPECT_TRUE(refused.benchmarks[0].implausible());
  EXPECT_FALSE(refused.settings.at("ceilings_from").contains("measured_again"));
}

TEST(CliRun, TheResultsFileIsWholeAfterEveryBenchmarkAndSigtermLeavesItPartialWithItsReports) {
  const fs::path out = fresh("rb_sigterm");
  const std::string cmd = std::string(ROOFBENCH_BIN) + " run --device cpu --quick --filter 'saxpy|relu' --out " +
                          out.string() + " >" + (out.string() + ".log") + " 2>&1";
  const std::string shell = "exec " + cmd;  // made before fork: no malloc after it
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The first snapshot: written whole after the first benchmark, marked as a run still going.
  nlohmann::json snap;
  for (int i = 0; i < 600 && snap.is_null(); ++i) {
    ::usleep(100000);
    if (fs::exists(out / "results.json")) snap = nlohmann::json::parse(slurp(out / "results.json"), nullptr, false);
    if (snap.is_discarded()) snap = nullptr;
  }
  ASSERT_FALSE(snap.is_null()) << "no results.json while the run went on";
  EXPECT_EQ(snap.at("partial").at("reason"), "running");
  EXPECT_GE(snap.at("partial").at("completed").get<int>(), 1);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << slurp(out.string() + ".log");
  const roofbench::Results r = roofbench::load_results((out / "results.json").string());
  ASSERT_TRUE(r.partial);
  EXPECT_EQ(r.partial->reason, "stopped by SIGTERM");
  EXPECT_LT(r.partial->completed, r.partial->planned);
  for (const auto& b : r.benchmarks) EXPECT_TRUE(b.verified()) << b.name;  // the one being measured is left out
  for (const char* f : {"gbench.json", "roofline.svg", "report.html", "summary.md"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_NE(slurp(out / "summary.md").find("PARTIAL: "), std::string::npos);
  EXPECT_NE(slurp(out.string() + ".log").find("roofbench: stopped by SIGTERM"), std::string::npos);
  // Its ceilings may be borrowed (each is a whole measurement), with a warning that some may lack.
  ASSERT_FALSE(r.ceilings.empty());
  const fs::path borrowing = fresh("rb_sigterm_borrow");
  const CmdResult b = rb("run --device cpu --quick --filter saxpy --ceilings-from " + out.string() + " --out " +
                         borrowing.string());
  // (Its roofs were measured beside other tests: exit 1 where saxpy still came out above one
  // after it was measured once more, and the gate said so in the file.)
  EXPECT_EQ(b.code, roofbench::count_implausible(roofbench::load_results((borrowing / "results.json").string())) ? 1 : 0)
      << b.out << b.err;
  EXPECT_NE(b.out.find("warning: --ceilings-from " + (out / "results.json").string() + " is a partial run"),
            std::string::npos)
      << b.out;
  const auto note = nlohmann::json::parse(slurp(borrowing / "results.json")).at("settings").at("ceilings_from");
  EXPECT_NE(note.at("partial").get<std::string>().find("stopped by SIGTERM"), std::string::npos) << note;
}

namespace {

// Starts `cmd` (its output into `log`), waits until `watch` says `ready`, then sends it `sig`;
// returns the exit status (128 + signal for a process that exits through its handler).
int signal_when_ready(const std::string& cmd, const fs::path& log, const fs::path& watch, const std::string& ready,
                      int sig) {
  const std::string shell = "exec " + cmd + " >" + log.string() + " 2>&1";  // made before fork: no malloc after it
  // An earlier run's log would be ready before this one has started (and hold its message).
  std::error_code gone;
  fs::remove(log, gone);
  fs::remove(watch, gone);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 3000 && slurp(watch).find(ready) == std::string::npos; ++i) ::usleep(10000);
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST(CliRun, AStopBeforeAnyBenchmarkFinishedLeavesTheFolderAsItWas) {
  // A folder holding a finished run; a second run into it is stopped while its first benchmark
  // (200 samples at least) is still measuring: nothing it measured, nothing it replaces.
  const fs::path out = fresh("rb_early_stop");
  fs::create_directories(out);
  std::ofstream(out / "results.json") << "the previous run's";
  const int rc = signal_when_ready(std::string(ROOFBENCH_BIN) + " run --device cpu --quick --filter saxpy --min-samples "
                                       "200 --budget 60 --out " + out.string(),
                                   out.string() + ".log", out.string() + ".log", "[1/", SIGINT);
  const std::string log = slurp(out.string() + ".log");
  EXPECT_EQ(rc, 128 + SIGINT) << log;
  EXPECT_NE(log.find("stopped by SIGINT before any benchmark finished; nothing was written"), std::string::npos) << log;
  EXPECT_EQ(slurp(out / "results.json"), "the previous run's");
  // Into a folder of its own, the same stop leaves no folder.
  const fs::path made = fresh("rb_early_stop_new");
  EXPECT_EQ(signal_when_ready(std::string(ROOFBENCH_BIN) + " run --device cpu --quick --filter saxpy --min-samples 200 "
                                  "--budget 60 --out " + made.string(),
                              made.string() + ".log", made.string() + ".log", "[1/", SIGTERM),
            128 + SIGTERM)
      << slurp(made.string() + ".log");
  EXPECT_FALSE(fs::exists(made));
}

TEST(CliAb, ASignalToAbReachesTheRunItWaitsForAndEndsTheAb) {
  // A timeout or a cancelled CI job signals ab alone: the run it waits for must stop too, not
  // go on by itself after ab is gone.
  const fs::path out = fresh("rb_ab_stop");
  const std::string bin = ROOFBENCH_BIN;
  const int rc = signal_when_ready(bin + " ab " + bin + " " + bin + " --rounds 2 --out " + out.string() +
                                       " -- --device cpu --quick --filter saxpy --min-samples 200 --budget 60",
                                   out.string() + ".log", out / "ceilings.log", "[1/", SIGTERM);
  const std::string log = slurp(out.string() + ".log");
  EXPECT_EQ(rc, 128 + SIGTERM) << log;
  EXPECT_NE(log.find("stopped by SIGTERM: the run it was waiting for got the signal too"), std::string::npos) << log;
  // ab waited for it to end: its console already says it stopped.
  EXPECT_NE(slurp(out / "ceilings.log").find("stopped by SIGTERM"), std::string::npos) << slurp(out / "ceilings.log");
  EXPECT_FALSE(fs::exists(out / "ab.json"));
}

TEST(CliMerge, JoinsPartsIntoOneResultsFileWithItsReportsOrRefusesWithOneLine) {
  using namespace roofbench::testing;
  auto part = [](const std::string& dir, const std::string& kernel_name, const std::string& device) {
    roofbench::Results r = sample_results();
    r.device["name"] = device;
    r.benchmarks.push_back(kernel(kernel_name, 1e9, 1e6, 1e-3));
    const fs::path d = fresh(dir);
    fs::create_directories(d);
    std::ofstream(d / "results.json") << roofbench::dump_results(r);
    std::ofstream(d / "gbench.json") << nlohmann::json{{"context", {{"host_name", "test"}}},
                                                       {"benchmarks", {{{"name", kernel_name}}}}}
                                                          .dump();
    return d;
  };
  const fs::path a = part("rb_merge_a", "a", "Test CPU"), b = part("rb_merge_b", "b", "Test CPU"),
                 other = part("rb_merge_c", "c", "Other CPU"), out = fresh("rb_merge_out");
  const CmdResult ok = rb("merge " + a.string() + " " + (b / "results.json").string() + " --out " + out.string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  const roofbench::Results m = roofbench::load_results((out / "results.json").string());
  EXPECT_EQ(m.benchmarks.size(), 2u);
  EXPECT_EQ(m.provenance.at("merged_from").size(), 2u);
  for (const char* f : {"roofline.svg", "report.html", "summary.md"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_EQ(nlohmann::json::parse(slurp(out / "gbench.json")).at("benchmarks").size(), 2u);

  const fs::path refused = fresh("rb_merge_refused");
  expect_usage_error(rb("merge " + a.string() + " " + other.string() + " --out " + refused.string()),
                     "was measured on cpu Other CPU");
  expect_usage_error(rb("merge " + a.string() + " " + a.string() + " --out " + refused.string()), "is in both");
  expect_usage_error(rb("merge " + a.string() + " --out " + refused.string()), "two or more");
  EXPECT_TRUE(empty_or_missing(refused));
}

TEST(CliCrosscheck, AResultsFileWithoutCountersIsRefusedWithWhatToDo) {
  const fs::path res = write_results("rb_xcheck", 1.0, 1);
  const fs::path csv = fresh("rb_xcheck.csv");
  std::ofstream(csv) << "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
                        "\"0\",\"k\",\"gpu__time_duration.sum\",\"nsecond\",\"100\"\n";
  expect_usage_error(rb("crosscheck " + res.string() + " " + csv.string() + " --benchmark gemm/a/fp32/n:1"),
                     "run it with --counters");
  expect_usage_error(rb("crosscheck " + res.string() + " /nonexistent.csv --benchmark gemm/a/fp32/n:1"),
                     "cannot open for reading");
}

// --json: the rows of every benchmark asked for, for a script to judge (tests/python/gpu_visit.py);
// when one is refused (ncu did not profile a whole run of it) no JSON is written, an earlier one
// stays as it was, and the tables of the benchmarks before it are still printed.
TEST(CliCrosscheck, JsonHoldsEveryBenchmarksRowsOrNothing) {
  roofbench::Results r = roofbench::testing::sample_results();
  for (const auto& [name, kernel] : {std::pair<std::string, std::string>{"a", "void ns::k<float>(float*)"},
                                     {"b", "never_profiled"}}) {
    roofbench::BenchmarkResult b = roofbench::testing::kernel(name, 2e6, 8e6, 10e-6);
    roofbench::Counters c;
    c.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"};
    c.values = {{"gpu__time_duration.sum", 10500}, {"dram__bytes_read.sum", 4e6}, {"dram__bytes_write.sum", 4e6}};
    roofbench::KernelTrace t;
    t.kernels = {kernel};
    t.span_s = t.busy_s = {9e-6, 10e-6, 11e-6};
    c.trace = t;
    b.counters = c;
    r.benchmarks.push_back(b);
  }
  const std::string a = r.benchmarks[0].name, never = r.benchmarks[1].name;
  const fs::path d = fresh("rb_xcheck_json");
  fs::create_directories(d);
  std::ofstream(d / "results.json") << roofbench::dump_results(r);
  std::ofstream(d / "ncu.csv") << "==PROF== Connected to process 1 (python3)\n"
                                  "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
                                  "\"0\",\"k\",\"gpu__time_duration.sum\",\"usecond\",\"10.2\"\n"
                                  "\"0\",\"k\",\"dram__bytes_read.sum\",\"byte\",\"4,000,000\"\n";
  const std::string json = (d / "out" / "xcheck.json").string(), csv = (d / "ncu.csv").string();
  const CmdResult ok = rb("crosscheck " + d.string() + " " + csv + " --benchmark " + a + " --json " + json);
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("Nsight Compute beside roofbench"), std::string::npos) << ok.out;  // the Markdown as before
  const std::string written = slurp(json);
  const nlohmann::json j = nlohmann::json::parse(written);
  ASSERT_EQ(j.at("benchmarks").size(), 1u);
  const auto& rows = j["benchmarks"][0].at("rows");
  EXPECT_EQ(j["benchmarks"][0].at("benchmark"), a);
  EXPECT_EQ(j["benchmarks"][0].at("kernels"), nlohmann::json::array({"k"}));
  EXPECT_DOUBLE_EQ(rows[0].at("ncu").get<double>(), 10.2e-6);
  EXPECT_DOUBLE_EQ(rows[0].at("cupti").get<double>(), 10e-6);  // the traced kernels' median own time
  EXPECT_DOUBLE_EQ(rows[0].at("declared").get<double>(), r.benchmarks[0].measurement->stats.median);
  // The second benchmark's kernel is not among ncu's: refused; the JSON stays as the first call
  // wrote it, and the first benchmark's table is printed still.
  const CmdResult refused = rb("crosscheck " + d.string() + " " + csv + " --benchmark " + a + " --benchmark " + never +
                               " --json " + json);
  expect_usage_error(refused, "ncu profiled no whole run of " + never);
  EXPECT_NE(refused.out.find(a + "`: Nsight Compute beside roofbench"), std::string::npos) << refused.out;
  EXPECT_EQ(slurp(json), written) << "a refused crosscheck changed the JSON";
  // Never over an input.
  expect_usage_error(rb("crosscheck " + d.string() + " " + csv + " --benchmark " + a + " --json " + csv), "an input");
}

// OpenBLAS falls back to its Prescott (SSE3) kernels on a CPU model it does not know (a VM's);
// `run` then restarts with OPENBLAS_CORETYPE set, so the ladder's vendor reference runs this
// CPU's ISA (bench/openblas_core.h). Whatever the machine, the core in use is no fallback.
TEST(Cli, TheCpuRunsVendorReferenceUsesOpenBlasKernelsForThisCpusIsa) {
  EXPECT_EQ(roofbench::openblas_better_core("Prescott", "avx512f"), "SkylakeX");
  EXPECT_EQ(roofbench::openblas_better_core("Prescott", "avx2+fma"), "Haswell");
  EXPECT_EQ(roofbench::openblas_better_core("Prescott", "scalar"), "");
  EXPECT_EQ(roofbench::openblas_better_core("Zen", "avx512f"), "");  // a recognized core is left alone
  EXPECT_EQ(roofbench::openblas_better_core("SkylakeX", "avx512f"), "");
  const CmdResult r = rb("run --device cpu --dry-run --filter gemm/openblas");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto at = r.out.find("OpenBLAS ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string core = r.out.substr(at + 9, r.out.find_first_of(" )", at + 9) - (at + 9));
  EXPECT_FALSE(core.empty()) << r.out;
  EXPECT_EQ(roofbench::openblas_better_core(core, roofbench::cpu_info().isa), "") << r.out;
}

// Results stored compressed (committed baselines are results.json.xz; a CI artifact may come as
// .json.gz): every command that reads results takes them as they are, a file or the folder that
// holds one, and says what is wrong with a broken one or a folder that holds two.
TEST(CliCompressed, EveryReaderTakesResultsStoredAsXzOrGzip) {
  const std::string fixture = std::string(ROOFBENCH_SOURCE_DIR) + "/tests/fixtures/cpu-quick-saxpy.results.json";
  const fs::path d = fresh("rb_cli_compressed");
  for (const char* sub : {"runs/plain", "runs/xz", "runs/gz"}) fs::create_directories(d / sub);
  fs::copy_file(fixture, d / "runs/plain/results.json");
  ASSERT_EQ(std::system(("xz -9 -c " + fixture + " >" + (d / "runs/xz/results.json.xz").string()).c_str()), 0);
  ASSERT_EQ(std::system(("gzip -9 -c " + fixture + " >" + (d / "runs/gz/results.json.gz").string()).c_str()), 0);
  const std::string plain = (d / "runs/plain").string(), xz = (d / "runs/xz").string(), gz = (d / "runs/gz").string();

  const CmdResult cmp = rb("compare " + xz + " " + gz + " --json " + (d / "compare.json").string());
  EXPECT_EQ(cmp.code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("BASE " + xz + "/results.json.xz"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("NEW  " + gz + "/results.json.gz"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("\n0 SLOWER, 0 UNSURE, 1 SAME"), std::string::npos) << cmp.out;

  // report: in place beside the .xz (the same run), and the same summary as from the plain file.
  const CmdResult rep = rb("report " + xz);
  EXPECT_EQ(rep.code, 0) << rep.err;
  EXPECT_EQ(rb("report " + plain + " --out " + (d / "plain-report").string()).code, 0);
  EXPECT_FALSE(slurp(d / "runs/xz/summary.md").empty());
  EXPECT_EQ(slurp(d / "runs/xz/summary.md"), slurp(d / "plain-report/summary.md"));

  // merge reads both (and refuses two copies of one run for what they are, naming both files).
  expect_usage_error(rb("merge " + xz + " " + gz + " --out " + (d / "merged").string()),
                     "stream/saxpy/fp32/n:67108864 is in both " + xz + "/results.json.xz and " + gz + "/results.json.gz");

  const CmdResult hist = rb("history " + plain + " " + xz + "/results.json.xz " + gz);
  EXPECT_EQ(hist.code, 0) << hist.err;

  // fleet and evidence find every results file under a folder, stored however.
  const CmdResult fleet = rb("fleet " + (d / "runs").string());
  EXPECT_EQ(fleet.code, 0) << fleet.err << fleet.out;
  EXPECT_NE(fleet.out.find("3 devices"), std::string::npos) << fleet.out;
  const CmdResult ev = rb("evidence " + xz);
  EXPECT_TRUE(ev.code == 0 || ev.code == 1) << ev.err;
  EXPECT_NE(ev.out.find(xz + "/results.json.xz"), std::string::npos) << ev.out;

  // Broken: one line each, exit 2.
  const std::string bytes = slurp(d / "runs/xz/results.json.xz");
  std::ofstream(d / "cut.json.xz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_usage_error(rb("compare " + (d / "cut.json.xz").string() + " " + xz), "a broken xz file");
  fs::copy_file(fixture, d / "runs/gz/results.json");
  expect_usage_error(rb("compare " + xz + " " + gz), "holds results.json and results.json.gz: which is its run's cannot be told");
  expect_usage_error(rb("fleet " + (d / "runs").string()), "cannot be told");
}
