#pragma once
// The command line's tests' helpers: run the roofbench binary, read what it wrote, fresh scratch
// folders (tests/cli/test_cli.cpp and the quick run's own binary, tests/cli/test_quick_run.cpp).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/testing.h"

namespace roofbench::testing::cli {

struct CmdResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline CmdResult rb(const std::string& args) {
  // ctest runs tests in parallel processes: each call gets its own stderr file.
  static int calls = 0;
  const std::filesystem::path err = std::filesystem::temp_directory_path() /
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
  std::filesystem::remove(err);
  return r;
}

inline std::filesystem::path fresh(const std::string& name) {
  const std::filesystem::path d = roofbench::testing::scratch_path(name);
  std::filesystem::remove_all(d);
  return d;
}

inline std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline void expect_usage_error(const CmdResult& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("roofbench: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

inline bool empty_or_missing(const std::filesystem::path& d) {
  return !std::filesystem::exists(d) || std::filesystem::is_empty(d);
}


}  // namespace roofbench::testing::cli
