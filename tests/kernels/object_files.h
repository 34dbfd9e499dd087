#pragma once
// The kernels' object files, for the host tests that read the code the build made (test_sass:
// cuobjdump's SASS; test_cpu_code: objdump's x86). ROOFBENCH_KERNEL_OBJECTS names the list CMake
// writes at generate time, one object per line.
#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

namespace roofbench::testing {

// A shell command's standard output; *status is pclose's (-1 when it could not start).
inline std::string run_command(const std::string& cmd, int& status) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) {
    status = -1;
    return {};
  }
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  status = pclose(pipe.release());
  return out;
}

// The object file CMake built from one of the kernels' sources ("divergence.cu"), found in the
// list it wrote at generate time; empty, with *why set, when there is none.
inline std::string object_of(const std::string& source, std::string* why) {
  std::string object, path;
  std::ifstream list(ROOFBENCH_KERNEL_OBJECTS);
  const std::string tail = "/" + source + ".o";
  while (std::getline(list, path))
    if (path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0) object = path;
  *why = object.empty() ? "no " + source + " object in " + ROOFBENCH_KERNEL_OBJECTS : "";
  return object;
}

}  // namespace roofbench::testing
