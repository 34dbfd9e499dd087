#include "bench/device_all.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "bench/device.h"
#include "bench/provenance.h"
#include "roofbench/types.h"

namespace roofbench::cli {

std::vector<std::string> child_arguments(const std::vector<std::string>& args, const std::string& out) {
  std::vector<std::string> child;
  bool device = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {  // what follows is Google Benchmark's
      child.insert(child.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if ((a == "--device" || a == "--out") && i + 1 < args.size()) {
      if (a == "--device") {
        if (args[i + 1] != "all") throw InputError("child_arguments: --device " + args[i + 1] + " is not all");
        device = true;
      }
      ++i;  // both are put back below
      continue;
    }
    if (a == "--device=all") {
      device = true;
      continue;
    }
    if (a.rfind("--out=", 0) == 0 || a == "--concurrent") continue;
    child.push_back(a);
  }
  if (!device) throw InputError("child_arguments: no --device all");
  std::size_t at = 1;  // after the subcommand
  child.insert(child.begin() + static_cast<std::ptrdiff_t>(std::min(at, child.size())),
               {"--device", "cuda:0", "--out", out});
  return child;
}

std::string visible_device(const char* parent_list, int i) {
  if (!parent_list || !*parent_list) return std::to_string(i);
  std::stringstream ss(parent_list);
  std::string item;
  for (int k = 0; std::getline(ss, item, ','); ++k)
    if (k == i) return item;
  throw InputError(fmt::format("CUDA_VISIBLE_DEVICES='{}' has no entry {}", parent_list, i));
}

std::string folder_name(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '-';
  return out.empty() ? "device" : out;
}

int run_every_device(const RunArgs& a, bool ceilings_only, int argc, char** argv) {
  char host_buf[256] = {};
  ::gethostname(host_buf, sizeof host_buf - 1);
  const std::string host = folder_name(host_buf);
  const std::string base = !a.out.empty() ? a.out : "results/fleet-" + utc_now("%Y%m%dT%H%M%SZ");
  int gpus = 0;
#ifdef ROOFBENCH_HAVE_CUDA
  gpus = cuda_device_count();
#endif
  if (gpus == 0) {  // the CPU backend: one run
    RunArgs cpu = a;
    cpu.device = "cpu";
    cpu.out = base + "/" + host + "-cpu";
    std::cout << "roofbench: --device all: no GPU, so the CPU, once, into " << cpu.out << "\n";
    return cmd_run(cpu, ceilings_only, argc, argv);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* parent_list = std::getenv("CUDA_VISIBLE_DEVICES");
  struct Child {
    int gpu;
    std::string out;
    pid_t pid = -1;
    int code = -1;
  };
  std::vector<Child> children;
  for (int i = 0; i < gpus; ++i) {
    std::string uuid;
#ifdef ROOFBENCH_HAVE_CUDA
    uuid = cuda_device_uuid(i).substr(0, 8);
#endif
    children.push_back({i, base + "/" + folder_name(fmt::format("{}-gpu{}-{}", host, i, uuid))});
  }
  auto start = [&](Child& c) {
    const std::vector<std::string> child_args = child_arguments(args, c.out);
    const std::string visible = visible_device(parent_list, c.gpu);
    std::cout << fmt::format("roofbench: --device all: GPU {} (CUDA_VISIBLE_DEVICES={}) into {}\n", c.gpu, visible,
                             c.out)
              << std::flush;
    c.pid = fork();
    if (c.pid < 0) throw std::runtime_error("fork failed");
    if (c.pid == 0) {
      setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
      std::vector<char*> cargv{argv[0]};
      for (const auto& s : child_args) cargv.push_back(const_cast<char*>(s.c_str()));
      cargv.push_back(nullptr);
      execv("/proc/self/exe", cargv.data());
      _exit(127);
    }
  };
  auto wait_for = [](Child& c) {
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0) {
    }
    c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
  if (a.concurrent) {
    for (auto& c : children) start(c);
    for (auto& c : children) wait_for(c);
  } else {
    for (auto& c : children) {
      start(c);
      wait_for(c);
    }
  }
  int worst = 0;
  for (const auto& c : children) {
    std::cout << fmt::format("roofbench: --device all: GPU {} exited {} ({})\n", c.gpu, c.code, c.out);
    worst = std::max(worst, c.code);
  }
  std::cout << "roofbench: put them side by side with: roofbench fleet " << base << "\n";
  return worst;
}

}  // namespace roofbench::cli
