#include "cli/device_all.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/atomic_write.h"
#include "bench/device.h"
#include "bench/harness.h"
#include "bench/provenance.h"
#include "roofbench/types.h"

extern char** environ;

namespace roofbench::cli {

namespace fs = std::filesystem;

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
        if (DeviceSpec::parse(args[i + 1]).kind != DeviceSpec::Kind::all)
          throw InputError("child_arguments: --device " + args[i + 1] + " is not all");
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

namespace {

// The children running, for the signal handler: it passes SIGINT and SIGTERM on to each.
constexpr std::size_t kMaxChildren = 1024;
std::array<std::atomic<pid_t>, kMaxChildren> g_child_pids{};
std::atomic<int> g_sweep_signal{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read in a signal handler");

extern "C" void forward_stop_signal(int sig) {
  g_sweep_signal.store(sig);
  for (auto& p : g_child_pids)
    if (const pid_t pid = p.load(); pid > 0) ::kill(pid, sig);
}

// The last `n` lines of a file ("" when it cannot be read).
std::string last_lines(const std::string& path, int n) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > n) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += "    " + l + "\n";
  return out;
}

}  // namespace

int run_children(std::vector<ChildRun>& children, const std::string& exe, const std::string& argv0, bool concurrent,
                 std::ostream& os) {
  if (children.size() > kMaxChildren) throw InputError(fmt::format("--device all: more than {} GPUs", kMaxChildren));
  using clock = std::chrono::steady_clock;
  std::vector<pid_t> pids(children.size(), -1);
  std::vector<clock::time_point> began(children.size());
  g_sweep_signal.store(0);
  for (auto& p : g_child_pids) p.store(0);
  const StopSignalHandler forward(forward_stop_signal);  // no child is recorded before it
  sigset_t stops, old_mask;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);

  // Starts child k; returns false, starting nothing, once a stop signal has come.
  auto start = [&](std::size_t k) {
    ChildRun& c = children[k];
    int log_fd = -1;
    if (!c.log.empty()) {
      std::error_code ec;
      fs::create_directories(fs::path(c.log).parent_path(), ec);
      log_fd = ::open(c.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (log_fd < 0) throw InputError(fmt::format("--device all: cannot write {}: {}", c.log, std::strerror(errno)));
    }
    // Everything the child needs is made here: between fork and exec it may only call what is
    // async-signal-safe (no malloc, so no setenv).
    std::vector<std::string> argv_strings{argv0};
    argv_strings.insert(argv_strings.end(), c.args.begin(), c.args.end());
    std::vector<char*> cargv;
    for (auto& s : argv_strings) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    std::vector<std::string> env_strings{"CUDA_VISIBLE_DEVICES=" + c.visible};
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_strings.emplace_back(*e);
    std::vector<char*> cenv;
    for (auto& s : env_strings) cenv.push_back(s.data());
    cenv.push_back(nullptr);
    // A stop signal must not come between fork and the pid being recorded (the child would miss
    // it), nor run this process's handler in the child before exec.
    sigprocmask(SIG_BLOCK, &stops, &old_mask);
    if (g_sweep_signal.load()) {
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      if (log_fd >= 0) ::close(log_fd);
      return false;
    }
    os << fmt::format("roofbench: --device all: GPU {} (CUDA_VISIBLE_DEVICES={}) into {}{}\n", c.gpu, c.visible, c.out,
                      c.log.empty() ? "" : "; console: " + c.log)
       << std::flush;
    std::cout << std::flush;
    std::cerr << std::flush;
    const pid_t pid = fork();
    if (pid < 0) {
      const int err = errno;
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      if (log_fd >= 0) ::close(log_fd);
      throw std::runtime_error(fmt::format("--device all: fork failed: {}", std::strerror(err)));
    }
    if (pid == 0) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(SIGTERM, &dfl, nullptr);
      sigaction(SIGINT, &dfl, nullptr);
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      if (log_fd >= 0 && (::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0)) _exit(127);
      execve(exe.c_str(), cargv.data(), cenv.data());
      _exit(127);
    }
    pids[k] = pid;
    g_child_pids[k].store(pid);
    began[k] = clock::now();
    c.started = true;
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    if (log_fd >= 0) ::close(log_fd);
    return true;
  };
  auto finish = [&](std::size_t k, int status) {
    ChildRun& c = children[k];
    g_child_pids[k].store(0);
    pids[k] = -1;
    c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    c.wall_s = std::chrono::duration<double>(clock::now() - began[k]).count();
    std::string what = WIFEXITED(status) ? fmt::format("exited {}", c.code)
                                         : fmt::format("was killed by signal {} ({})", WTERMSIG(status), c.code);
    if (WIFEXITED(status) && c.code == 127) what += " (could not start " + exe + ")";
    os << fmt::format("roofbench: --device all: GPU {} {} after {:.1f} s ({})\n", c.gpu, what, c.wall_s, c.out);
    if (c.code != 0 && !c.log.empty()) os << last_lines(c.log, 5);
    os << std::flush;
  };
  // Waits for one of the children running; returns false when none is.
  auto wait_one = [&]() {
    if (std::none_of(pids.begin(), pids.end(), [](pid_t p) { return p > 0; })) return false;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) return true;  // a signal, passed on: keep waiting
      throw std::runtime_error(fmt::format("--device all: waitpid failed: {}", std::strerror(errno)));
    }
    for (std::size_t k = 0; k < pids.size(); ++k)
      if (pids[k] == pid) finish(k, status);
    return true;
  };

  for (std::size_t k = 0; k < children.size(); ++k) {
    if (!start(k)) break;
    if (!concurrent)
      while (wait_one()) {
      }
  }
  while (wait_one()) {
  }
  int worst = 0;
  for (auto& c : children) {
    if (!c.started) {
      const int sig = g_sweep_signal.load();
      c.code = 128 + sig;
      os << fmt::format("roofbench: --device all: GPU {} not started: the sweep was {}\n", c.gpu, stopped_by(sig));
    }
    worst = std::max(worst, c.code);
  }
  return worst;
}

int run_every_device(const RunArgs& a, bool ceilings_only, int argc, char** argv) {
  char host_buf[256] = {};
  ::gethostname(host_buf, sizeof host_buf - 1);
  const std::string host = folder_name(host_buf);
  const std::string base = !a.out.empty() ? a.out : unused_folder_name("results/fleet-" + utc_now("%Y%m%dT%H%M%SZ"));
  int gpus = 0;
#ifdef ROOFBENCH_HAVE_CUDA
  gpus = cuda_device_count();
#endif
  if (gpus == 0) {  // the CPU backend: one run
    RunArgs cpu = a;
    cpu.device = DeviceSpec{DeviceSpec::Kind::cpu, 0};
    cpu.concurrent = false;  // one run: nothing runs beside it
    cpu.out = base + "/" + host + "-cpu";
    std::cout << "roofbench: --device all: no GPU, so the CPU, once, into " << cpu.out
              << (a.concurrent ? " (--concurrent: nothing to run beside it)" : "") << "\n";
    return cmd_run(cpu, ceilings_only, argc, argv);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* parent_list = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<ChildRun> children;
  for (int i = 0; i < gpus; ++i) {
    std::string uuid;
#ifdef ROOFBENCH_HAVE_CUDA
    uuid = cuda_device_uuid(i).substr(0, 8);
#endif
    ChildRun c;
    c.gpu = i;
    c.visible = visible_device(parent_list, i);
    c.out = base + "/" + folder_name(fmt::format("{}-gpu{}-{}", host, i, uuid));
    c.args = child_arguments(args, c.out);
    // All at once, the consoles would interleave line by line: each goes to a log beside its folder.
    if (a.concurrent) c.log = c.out + ".log";
    children.push_back(std::move(c));
  }
  const int worst = run_children(children, "/proc/self/exe", argv[0], a.concurrent, std::cout);
  std::cout << "roofbench: put them side by side with: roofbench fleet " << base << "\n";
  return worst;
}

}  // namespace roofbench::cli
