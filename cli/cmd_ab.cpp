// roofbench ab BASE_BIN NEW_BIN and roofbench calibrate BIN: interleaved runs of two builds (or
// of one build against itself) in rounds of fresh processes, judged from the pairs (reports/ab.h).
// Every process is `BIN run` with the same options and the same ceilings, measured once by BASE
// before the first round (or taken from --ceilings-from; a process whose kernel came out above
// one measures that one once more for itself), and writes its own results folder under
// OUT/rounds/; the verdicts come from those files alone, so a round can be re-read and checked.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "bench/atomic_write.h"
#include "cli/commands.h"
#include "bench/harness.h"
#include "reports/ab.h"
#include "reports/svg.h"
#include "roofbench/splitmix.h"

extern char** environ;

namespace roofbench::cli {

namespace fs = std::filesystem;

namespace {

// SIGINT or SIGTERM sent to ab or calibrate alone (a timeout, a cancelled CI job, a scheduler)
// goes on to the run it is waiting for, which stops and writes its partial set; the A/B then
// stops too (Stopped) instead of leaving that run going on its own.
std::atomic<pid_t> g_child{0};
std::atomic<int> g_stop{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read in a signal handler");

extern "C" void forward_to_child(int sig) {
  g_stop.store(sig);
  if (const pid_t pid = g_child.load(); pid > 0) ::kill(pid, sig);
}

struct Stopped {
  int sig;
};

// For the length of an ab or calibrate command (the state is cleared before the handler is in).
void (*cleared_forwarder())(int) {
  g_stop.store(0);
  g_child.store(0);
  return forward_to_child;
}
struct ForwardStops : StopSignalHandler {
  ForwardStops() : StopSignalHandler(cleared_forwarder()) {}
};

// Runs argv with stdout and stderr into `log`; returns its exit status (128 + signal when killed).
// Throws Stopped once a stop signal came, after the child (which got it too) has ended.
int spawn_and_wait(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  // No stop signal between the spawn and the pid being recorded (the child would miss it); the
  // child starts with this process's mask and the default actions, its own handlers to come.
  sigset_t stops, old_mask;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigprocmask(SIG_BLOCK, &stops, &old_mask);
  posix_spawnattr_setsigmask(&attr, &old_mask);
  posix_spawnattr_setsigdefault(&attr, &stops);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = g_stop.load() ? ECANCELED : posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  if (rc == 0) g_child.store(pid);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);  // a stop that came meanwhile is handled now
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == ECANCELED) throw Stopped{g_stop.load()};
  if (rc != 0) throw InputError(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  // Waited for without reaping first, so that the pid the handler may signal is never one the
  // system has already given to another process.
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0)
    if (errno != EINTR) {
      g_child.store(0);
      throw InputError(fmt::format("waiting for {}: {}", argv[0], std::strerror(errno)));
    }
  g_child.store(0);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw InputError(fmt::format("waiting for {}: {}", argv[0], std::strerror(errno)));
  if (const int sig = g_stop.load()) throw Stopped{sig};
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// DIR/results.json of a child `who` that exited `rc` (0 or 1); InputError when it wrote none.
std::string written_results(const std::string& dir, const std::string& who, int rc, const std::string& log) {
  const std::string results = (fs::path(dir) / "results.json").string();
  std::error_code ec;
  if (!fs::exists(results, ec))
    throw InputError(fmt::format("{} exited {} but wrote no {} (is it roofbench, or built on its library?); its "
                                 "output is in {}",
                                 who, rc, results, log));
  return results;
}

std::string executable(const std::string& path, const char* what) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  struct stat st {};
  if (ec || ::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(p.c_str(), X_OK) != 0)
    throw InputError(fmt::format("{} '{}' is not an executable file (a roofbench binary, or one built on its library)",
                                 what, path));
  return p.string();
}

// The value that follows `flag` in the run options, if given.
std::string option_value(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  for (const auto& a : args)
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  return "";
}

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  for (const auto& a : args)
    if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
  return false;
}

// One `run` of `bin` into `dir`; its console output in dir.log. A benchmark that failed (exit 1)
// is the verdict's business; anything else ends the A/B.
Results one_run(const std::string& bin, const std::vector<std::string>& run_args, const std::string& ceilings,
                const std::string& dir, const std::string& what) {
  std::vector<std::string> argv{bin, "run"};
  argv.insert(argv.end(), run_args.begin(), run_args.end());
  if (!ceilings.empty()) argv.insert(argv.end(), {"--ceilings-from", ceilings});
  argv.insert(argv.end(), {"--out", dir});
  const std::string log = dir + ".log";
  const int rc = spawn_and_wait(argv, log);
  if (rc != 0 && rc != 1)
    throw InputError(fmt::format("{}: `{} run` exited {}; its output is in {}", what, bin, rc, log));
  return load_results(written_results(dir, fmt::format("{}: `{} run`", what, bin), rc, log));
}

struct Interleaved {
  std::vector<AbRound> rounds;
  std::string ceilings;  // the results file every run took its ceilings from
};

Interleaved interleave(const std::string& base_bin, const std::string& new_bin, const std::vector<std::string>& run_args,
                       int n_rounds, std::uint64_t seed, const std::string& out) {
  if (n_rounds < 1) throw InputError("--rounds must be at least 1");
  for (const char* own : {"--out", "--dry-run", "--profile"})
    if (has_flag(run_args, own))
      throw InputError(fmt::format("{} is not a run option here: each round writes its own folder under --out", own));
  // The device every run takes, refused here, before any round starts, when it is none (DeviceSpec).
  if (const std::string device = option_value(run_args, "--device"); !device.empty()) {
    if (DeviceSpec::parse(device).kind == DeviceSpec::Kind::all)
      throw InputError("--device all is a sweep of runs: an A/B compares two binaries on one device");
  }
  ensure_writable_dir(out);
  ensure_writable_dir((fs::path(out) / "rounds").string());
  Interleaved il;
  il.ceilings = option_value(run_args, "--ceilings-from");
  std::vector<std::string> args;
  for (std::size_t i = 0; i < run_args.size(); ++i) {
    if (run_args[i] == "--ceilings-from") {
      ++i;
      continue;
    }
    if (run_args[i].rfind("--ceilings-from=", 0) == 0) continue;
    args.push_back(run_args[i]);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (il.ceilings.empty()) {
    // The ceilings once, by BASE, with the device and sizes the runs use: every round then places
    // its kernels under the same roofs.
    std::vector<std::string> argv{base_bin, "ceilings"};
    for (const char* opt : {"--device", "--skip", "--seed", "--placements"})
      if (auto v = option_value(args, opt); !v.empty()) argv.insert(argv.end(), {opt, v});
    if (has_flag(args, "--quick")) argv.push_back("--quick");
    const std::string dir = (fs::path(out) / "ceilings").string();
    argv.insert(argv.end(), {"--out", dir});
    std::cout << "ceilings: measured once by BASE" << std::flush;
    const int rc = spawn_and_wait(argv, dir + ".log");
    if (rc != 0) throw InputError(fmt::format("`{} ceilings` exited {}; its output is in {}.log", base_bin, rc, dir));
    il.ceilings = written_results(dir, fmt::format("`{} ceilings`", base_bin), rc, dir + ".log");
    std::cout << fmt::format(" ({:.0f} s)\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::uint64_t state = seed;
  for (int r = 1; r <= n_rounds; ++r) {
    AbRound round;
    round.base_first = (splitmix64(state) & 1) == 0;
    const std::string stem = (fs::path(out) / "rounds" / fmt::format("{:02d}", r)).string();
    round.base_path = stem + "-base";
    round.new_path = stem + "-new";
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < 2; ++k) {
      const bool base_now = (k == 0) == round.base_first;
      if (base_now)
        round.base = one_run(base_bin, args, il.ceilings, round.base_path, fmt::format("round {} BASE", r));
      else
        round.fresh = one_run(new_bin, args, il.ceilings, round.new_path, fmt::format("round {} NEW", r));
    }
    round.base_path += "/results.json";
    round.new_path += "/results.json";
    std::cout << fmt::format("round {}/{}: {} first, {:.0f} s\n", r, n_rounds, round.base_first ? "BASE" : "NEW",
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
              << std::flush;
    il.rounds.push_back(std::move(round));
  }
  return il;
}

// interleave() with SIGINT and SIGTERM passed on to the run it waits for: 0 with `il` filled, or,
// once a stop came, 128 + the signal (said on stderr; no verdicts to write).
int interleave_until_stopped(Interleaved& il, const std::string& base_bin, const std::string& new_bin,
                             const std::vector<std::string>& run_args, int n_rounds, std::uint64_t seed,
                             const std::string& out) {
  const ForwardStops forward;
  try {
    il = interleave(base_bin, new_bin, run_args, n_rounds, seed, out);
    return 0;
  } catch (const Stopped& s) {
    std::cerr << fmt::format(
        "roofbench: {}: the run it was waiting for got the signal too and stopped (what it wrote, if anything, "
        "and the rounds before it are under {}); no verdicts were written\n",
        stopped_by(s.sig), out);
    return 128 + s.sig;
  }
}

}  // namespace

int cmd_ab(const AbArgs& a) {
  const std::string base_bin = executable(a.base_bin, "BASE_BIN"), new_bin = executable(a.new_bin, "NEW_BIN");
  CompareOptions opt = compare_options(a.threshold_pct, a.threshold_for, a.alpha);
  if (!a.noise.empty()) opt.noise = load_noise(a.noise, "");  // the device is checked against the rounds below
  if (!a.markdown.empty()) {  // checked now, not after the rounds
    std::error_code ec;
    const fs::path md = fs::weakly_canonical(fs::absolute(a.markdown, ec), ec);
    for (const char* own : {"ab.json", "ab.md", "roofline-diff.svg", "roofline-diff.html"})
      if (md == fs::weakly_canonical(fs::absolute(fs::path(a.out) / own, ec), ec))
        throw InputError(fmt::format("--markdown {} is the {} that ab writes in --out itself", a.markdown, own));
    if (const fs::path parent = fs::path(a.markdown).parent_path(); !parent.empty()) ensure_writable_dir(parent.string());
    check_loose_paths({a.markdown});
  }
  OutputFolder folder(a.out);  // locked until ab.json is in place: two ab runs never share rounds
  Interleaved il;
  if (const int rc = interleave_until_stopped(il, base_bin, new_bin, a.run_args, a.rounds, a.seed, a.out)) return rc;
  if (!a.noise.empty()) opt.noise = load_noise(a.noise, device_id(il.rounds.front().base));
  const Comparison c = compare_rounds(il.rounds, opt);
  // The roofline diff: the last round's two runs placed, each arrow coloured by the paired verdict.
  const RooflineDiff diff = render_roofline_diff(c, il.rounds.back().base, il.rounds.back().fresh);
  const std::string md = render_compare_markdown(c) + roofline_diff_markdown(diff, "roofline-diff.svg");
  FileSet files(folder);
  files.add("ab.json", ab_json(c, il.rounds).dump(2) + "\n");
  files.add("ab.md", md);
  files.add("roofline-diff.svg", diff.svg);
  files.add("roofline-diff.html", roofline_diff_html(diff, c));
  files.commit();
  if (!a.markdown.empty()) {
    const std::string link = fs::absolute(folder.path("roofline-diff.svg"))
                                 .lexically_relative(fs::absolute(a.markdown).parent_path())
                                 .generic_string();
    FileSet loose;
    loose.add(a.markdown, render_compare_markdown(c) + roofline_diff_markdown(diff, link));
    loose.commit();
  }
  std::cout << "\n" << render_compare_text(c);
  std::cout << fmt::format("wrote {}/ab.json, ab.md and roofline-diff.svg ({} rounds; each round's results under {}/rounds)\n", a.out,
                           il.rounds.size(), a.out);
  return c.exit_code();
}

int cmd_calibrate(const CalibrateArgs& a) {
  const std::string bin = executable(a.bin, "BIN");
  OutputFolder folder(a.out);
  Interleaved il;
  if (const int rc = interleave_until_stopped(il, bin, bin, a.run_args, a.rounds, a.seed, a.out)) return rc;
  const nlohmann::json noise = noise_json(il.rounds, a.run_args);
  CompareOptions opt;  // the A/A's own verdicts, for the eye: a noisy machine shows here
  const Comparison c = compare_rounds(il.rounds, opt);
  FileSet files(folder);
  const std::string noise_file = folder.path("noise.json");
  files.add("noise.json", noise.dump(2) + "\n");
  files.add("ab.json", ab_json(c, il.rounds).dump(2) + "\n");
  files.commit();
  std::cout << "\n" << render_compare_text(c);
  std::cout << fmt::format("\nnoise of one run against one, per benchmark (sd of the log rate ratio over {} rounds):\n",
                           il.rounds.size());
  for (auto it = noise["benchmarks"].begin(); it != noise["benchmarks"].end(); ++it)
    std::cout << fmt::format("  {:<60} {:6.2f}%\n", it.key(), 100 * it->at("sd_log_ratio").get<double>());
  std::cout << fmt::format("wrote {}: pass it to compare and ab with --noise\n", noise_file);
  return 0;
}

}  // namespace roofbench::cli
