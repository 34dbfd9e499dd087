#pragma once
// Where a results file came from: roofbench's version and commit (and whether the tree had
// uncommitted changes), the command line, the time, the host and the compiler.
#include <nlohmann/json.hpp>
#include <string>

namespace roofbench {

nlohmann::json provenance(int argc, char** argv);

std::string utc_now(const char* strftime_format);  // e.g. "%Y-%m-%dT%H:%M:%SZ"
std::string quote_arg(const std::string& a);      // as a POSIX shell reads it back

}  // namespace roofbench
