#include "bench/provenance.h"

#include <unistd.h>

#include <ctime>

#include "roofbench/version.h"

namespace roofbench {

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string quote_arg(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\"'\\$`!*?[]{}()<>|;&") == std::string::npos) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

nlohmann::json provenance(int argc, char** argv) {
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + quote_arg(argv[i]);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  // The commit the binary was built from, stamped at its build (bench/version.cmake): not the
  // source tree's HEAD now, which may have moved on since, or be on another machine.
  nlohmann::json p = {{"roofbench_version", ROOFBENCH_VERSION},
                      {"git_commit", ROOFBENCH_GIT_COMMIT},
                      {"command_line", cmd},
                      {"utc_time", utc_now("%Y-%m-%dT%H:%M:%SZ")},
                      {"host", host},
                      {"compiler", std::string("g++ ") + __VERSION__}};
  p["git_dirty"] = ROOFBENCH_GIT_DIRTY < 0 ? nlohmann::json(nullptr) : nlohmann::json(ROOFBENCH_GIT_DIRTY == 1);
  return p;
}

}  // namespace roofbench
