// The roofbench binary end to end: bad input gets one line on stderr, exit code 2 and no files;
// a real (quick, filtered) CPU run writes every output and `report` re-renders from it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/results.h"

namespace fs = std::filesystem;

namespace {

struct CmdResult {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CmdResult rb(const std::string& args) {
  // ctest runs tests in parallel processes: each call gets its own stderr file.
  static int calls = 0;
  const fs::path err = fs::temp_directory_path() /
                       ("roofbench_cli_stderr." + std::to_string(::getpid()) + "." + std::to_string(calls++));
  // $ROOFBENCH_BIN overrides the build-tree path, for a packed build run elsewhere (scripts/pack-build.sh).
  const char* env = std::getenv("ROOFBENCH_BIN");
  const std::string cmd = std::string(env ? env : ROOFBENCH_BIN) + " " + args + " 2>" + err.string();
  CmdResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err);
  fs::remove(err);
  return r;
}

fs::path fresh(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / name;
  fs::remove_all(d);
  return d;
}

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_usage_error(const CmdResult& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("roofbench: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

bool empty_or_missing(const fs::path& d) {
  return !fs::exists(d) || fs::is_empty(d);
}

}  // namespace

TEST(Cli, UnknownDevice) {
  const fs::path d = fresh("rb_cli_dev");
  expect_usage_error(rb("run --device tpu:0 --out " + d.string()), "unknown device 'tpu:0'");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, FilterThatMatchesNothing) {
  const fs::path d = fresh("rb_cli_filter");
  expect_usage_error(rb("run --device cpu --filter no-such-kernel --out " + d.string()), "matches no benchmark");
  EXPECT_TRUE(empty_or_missing(d));
}

TEST(Cli, InvalidFilterRegex) {
  expect_usage_error(rb("run --device cpu --filter '([' --out " + fresh("rb_cli_re").string()),
                     "not a valid regular expression");
}

TEST(Cli, UnwritableOutputFolder) {
  const fs::path d = fresh("rb_cli_unwritable");
  fs::create_directories(d);
  std::ofstream(d / "file") << "x";
  expect_usage_error(rb("run --device cpu --quick --out " + (d / "file" / "out").string()),
                     "cannot create output folder");
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

TEST(Cli, ListNamesEveryRegisteredBenchmark) {
  const CmdResult r = rb("list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("gemm/naive/fp32"), std::string::npos);
  EXPECT_NE(r.out.find("ceiling/fp32_fma/fp32 [ceiling]"), std::string::npos);
}

TEST(Cli, QuickCpuRunWritesEveryOutputAndReportReRendersThem) {
  const fs::path d = fresh("rb_cli_run");
  const CmdResult r = rb("run --device cpu --quick --filter 'saxpy|gemm/blocked/fp32/M:256' --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("[1/"), std::string::npos);
  EXPECT_NE(r.out.find("stream/saxpy/fp32"), std::string::npos);
  for (const char* f : {"results.json", "gbench.json", "roofline.svg", "report.html", "summary.md"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  const roofbench::Results res = roofbench::load_results((d / "results.json").string());
  EXPECT_EQ(res.device.at("kind"), "cpu");
  EXPECT_EQ(res.benchmarks.size(), 2u);  // the filter applies to kernels; ceilings always run
  EXPECT_GE(res.ceilings.size(), 6u);
  for (const auto& c : res.ceilings) {  // measured at the start and again at the end; the roof is the better
    ASSERT_TRUE(c.measurement_end) << c.name;
    EXPECT_DOUBLE_EQ(c.value, std::max(c.value_start, *c.value_end)) << c.name;
  }
  for (const auto& b : res.benchmarks) {
    EXPECT_TRUE(b.verified()) << b.name;
    EXPECT_TRUE(b.placement) << b.name;
  }
  EXPECT_FALSE(res.provenance.at("command_line").get<std::string>().empty());
  const auto gb = nlohmann::json::parse(slurp(d / "gbench.json"));
  EXPECT_GE(gb.at("benchmarks").size(), 8u);
  EXPECT_TRUE(gb["benchmarks"].back().contains("FLOP/s"));

  // report: from results.json alone, into another folder, byte for byte the same reports.
  const fs::path d2 = fresh("rb_cli_rerender");
  const CmdResult rep = rb("report " + (d / "results.json").string() + " --out " + d2.string());
  ASSERT_EQ(rep.code, 0) << rep.err;
  for (const char* f : {"roofline.svg", "report.html", "summary.md"}) EXPECT_EQ(slurp(d / f), slurp(d2 / f)) << f;
}

TEST(Cli, GoogleBenchmarkFlagsPassThrough) {
  const fs::path d = fresh("rb_cli_gbench");
  const CmdResult r = rb("run --device cpu --quick --filter saxpy --benchmark_filter=saxpy --out " + d.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto gb = nlohmann::json::parse(slurp(d / "gbench.json"));
  ASSERT_EQ(gb.at("benchmarks").size(), 1u);
  EXPECT_EQ(r.out.find("[1/1] stream/saxpy") != std::string::npos, true) << r.out;
  expect_usage_error(rb("run --device cpu --quick --benchmark_bogus=1 --out " + fresh("rb_g2").string()),
                     "unknown Google Benchmark flag");
}
