#include "bench/provenance.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "roofbench/version.h"

namespace roofbench {

namespace fs = std::filesystem;

namespace {
std::string shell_output(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}
}  // namespace

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
  // The commit of the tree the binary was built from, read now so a rebuild is not needed to
  // notice new commits; the configure-time value is the fallback (an unpacked archive on another
  // machine has no source tree).
  std::string commit = ROOFBENCH_GIT_COMMIT, dirty = "unknown";
  const std::string src = ROOFBENCH_SOURCE_DIR;
  if (fs::exists(fs::path(src) / ".git")) {
    const std::string head = shell_output("git -C " + quote_arg(src) + " rev-parse HEAD 2>/dev/null");
    if (!head.empty()) commit = head;
    dirty = shell_output("git -C " + quote_arg(src) + " status --porcelain --untracked-files=no 2>/dev/null");
  }
  nlohmann::json p = {{"roofbench_version", ROOFBENCH_VERSION},
                      {"git_commit", commit},
                      {"command_line", cmd},
                      {"utc_time", utc_now("%Y-%m-%dT%H:%M:%SZ")},
                      {"host", host},
                      {"compiler", std::string("g++ ") + __VERSION__}};
  p["git_dirty"] = dirty == "unknown" ? nlohmann::json(nullptr) : nlohmann::json(!dirty.empty());
  return p;
}

}  // namespace roofbench
