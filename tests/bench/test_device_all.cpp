// `roofbench run --device all` without a GPU: the arguments each child gets, and the processes
// themselves, run for real with a shell script standing in for roofbench (the GPUs are the only
// thing it needs a GPU for: how many, and their UUIDs).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/device_all.h"
#include "roofbench/types.h"

using namespace roofbench;
using roofbench::cli::child_arguments;
using roofbench::cli::ChildRun;
using roofbench::cli::folder_name;
using roofbench::cli::run_children;
using roofbench::cli::visible_device;
namespace fs = std::filesystem;

namespace {

// Each child of --device all: cuda:0 of its CUDA_VISIBLE_DEVICES into its own folder, with every
// other option as given.
TEST(DeviceAll, EachChildRunsItsOneVisibleGpuIntoItsOwnFolder) {
  EXPECT_EQ(child_arguments({"run", "--device", "all", "--quick", "--out", "f", "--concurrent", "--filter", "x"}, "f/h-gpu1"),
            (std::vector<std::string>{"run", "--device", "cuda:0", "--out", "f/h-gpu1", "--quick", "--filter", "x"}));
  EXPECT_EQ(child_arguments({"ceilings", "--device=all", "--out=o", "--", "--benchmark_min_time=1"}, "o/g0"),
            (std::vector<std::string>{"ceilings", "--device", "cuda:0", "--out", "o/g0", "--", "--benchmark_min_time=1"}));
  EXPECT_THROW(child_arguments({"run", "--device", "cuda:1"}, "o"), InputError);
  EXPECT_EQ(visible_device(nullptr, 3), "3");
  EXPECT_EQ(visible_device("", 0), "0");
  EXPECT_EQ(visible_device("4,6,GPU-abc", 2), "GPU-abc");  // the parent's own list, kept
  EXPECT_THROW(visible_device("4,6", 2), InputError);
  EXPECT_EQ(folder_name("node 7/gpu:0"), "node-7-gpu-0");
}

// A stand-in for roofbench: `sh stub.sh OUT SECONDS CODE [N]` sets its SIGTERM trap (write
// OUT.term, exit 143, as a run stopped by SIGTERM does), then writes OUT.rec (its GPU, its start and
// end in ns), prints a line, sleeps, and exits CODE; "kill" as CODE kills itself with SIGKILL. With
// N, it first waits (10 s at most) until N stubs of its folder have started, and writes OUT.barrier:
// "met" if they had, "timeout" if not; children run one after another time out.
class DeviceAllChildren : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("roofbench-device-all-{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    stub_ = (dir_ / "stub.sh").string();
    std::ofstream(stub_) << R"SH(out=$1; secs=$2; code=$3; want=$4
trap 'kill $p 2>/dev/null; echo term > "$out.term"; exit 143' TERM
if [ -n "$want" ]; then
  touch "$out.started"
  i=0; met=timeout
  while [ $i -lt 1000 ]; do
    if [ "$(ls "$(dirname "$out")" | grep -c '[.]started$')" -ge "$want" ]; then met=met; break; fi
    sleep 0.01; i=$((i + 1))
  done
  echo $met > "$out.barrier"
fi
echo "$CUDA_VISIBLE_DEVICES $(date +%s%N)" > "$out.rec"
echo "console of $out: working"
sleep "$secs" & p=$!
wait $p
echo "$(date +%s%N)" >> "$out.rec"
echo "console of $out: done"
if [ "$code" = kill ]; then kill -9 $$; fi
exit "$code"
)SH";
  }
  void TearDown() override { fs::remove_all(dir_); }

  ChildRun child(int gpu, const std::string& secs, const std::string& code, bool log = false,
                 const std::string& barrier = "") {
    ChildRun c;
    c.gpu = gpu;
    c.visible = fmt::format("GPU-{}", gpu);
    c.out = (dir_ / fmt::format("gpu{}", gpu)).string();
    c.args = {stub_, c.out, secs, code};
    if (!barrier.empty()) c.args.push_back(barrier);
    if (log) c.log = c.out + ".log";
    return c;
  }
  // The stub's record of child `gpu`: what CUDA_VISIBLE_DEVICES said, when it started and ended.
  struct Rec {
    std::string visible;
    long long start_ns = 0, end_ns = 0;
  };
  Rec rec(int gpu) const {
    std::ifstream in(dir_ / fmt::format("gpu{}.rec", gpu));
    Rec r;
    in >> r.visible >> r.start_ns >> r.end_ns;
    return r;
  }
  bool exists(const std::string& name) const { return fs::exists(dir_ / name); }

  fs::path dir_;
  std::string stub_;
};

TEST_F(DeviceAllChildren, OneAfterAnotherEachPinnedToItsGpuWithTheWorstExitCode) {
  std::vector<ChildRun> c{child(0, "0.2", "0"), child(1, "0.2", "1"), child(2, "0.2", "0")};
  std::ostringstream os;
  EXPECT_EQ(run_children(c, "/bin/sh", "sh", false, os), 1) << os.str();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rec(i).visible, fmt::format("GPU-{}", i));
    EXPECT_GT(rec(i).end_ns, rec(i).start_ns);
    EXPECT_TRUE(c[i].started);
    EXPECT_GE(c[i].wall_s, 0.2);
  }
  EXPECT_EQ(c[0].code, 0);
  EXPECT_EQ(c[1].code, 1);
  EXPECT_EQ(c[2].code, 0);
  // Each starts after the one before has ended.
  EXPECT_GE(rec(1).start_ns, rec(0).end_ns);
  EXPECT_GE(rec(2).start_ns, rec(1).end_ns);
  EXPECT_NE(os.str().find("GPU 1 exited 1 after"), std::string::npos) << os.str();
}

TEST_F(DeviceAllChildren, AllAtOnceEachConsoleInItsOwnLog) {
  std::vector<ChildRun> c{child(0, "0.2", "0", true, "3"), child(1, "0.2", "kill", true, "3"),
                          child(2, "0.2", "0", true, "3")};
  std::ostringstream os;
  EXPECT_EQ(run_children(c, "/bin/sh", "sh", true, os), 128 + SIGKILL) << os.str();
  // The three ran at once: each saw all three started before it went on (a barrier, not start and
  // end times, which a child started late on a loaded machine could order either way).
  for (int i = 0; i < 3; ++i) {
    std::ifstream barrier(dir_ / fmt::format("gpu{}.barrier", i));
    std::string met;
    barrier >> met;
    EXPECT_EQ(met, "met") << "child " << i << " did not see the three started at once";
    std::ifstream log(c[i].log);
    std::stringstream text;
    text << log.rdbuf();
    EXPECT_NE(text.str().find(fmt::format("console of {}: done", c[i].out)), std::string::npos) << text.str();
  }
  EXPECT_EQ(c[1].code, 128 + SIGKILL);
  // The one that failed: said, with its console's last lines.
  EXPECT_NE(os.str().find("GPU 1 was killed by signal 9"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find(fmt::format("    console of {}: done", c[1].out)), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("console of " + c[0].out), std::string::npos) << "a child's console reached the parent's";
}

TEST_F(DeviceAllChildren, AProgramThatCannotStartExits127AndIsNamed) {
  std::vector<ChildRun> c{child(0, "0", "0")};
  std::ostringstream os;
  EXPECT_EQ(run_children(c, (dir_ / "no-such-program").string(), "x", false, os), 127);
  EXPECT_NE(os.str().find("could not start"), std::string::npos) << os.str();
}

TEST_F(DeviceAllChildren, ALogThatCannotBeWrittenIsAnInputErrorBeforeAnyChildStarts) {
  std::vector<ChildRun> c{child(0, "0", "0", true)};
  std::ofstream(dir_ / "file") << "x";
  c[0].log = (dir_ / "file" / "gpu0.log").string();  // under a file: no folder can be made there
  std::ostringstream os;
  EXPECT_THROW(run_children(c, "/bin/sh", "sh", false, os), InputError);
  EXPECT_FALSE(exists("gpu0.rec"));
}

// SIGTERM to the parent alone (a scheduler's, `kill PID`) reaches the children running, which
// write what they have; no child starts after it; the parent exits 128 + SIGTERM.
TEST_F(DeviceAllChildren, SigtermToTheParentReachesTheChildRunningAndStartsNoMore) {
  for (const bool concurrent : {false, true}) {
    SCOPED_TRACE(concurrent ? "all at once" : "one after another");
    for (int i = 0; i < 3; ++i)
      for (const char* ext : {".rec", ".term", ".log"}) fs::remove(dir_ / fmt::format("gpu{}{}", i, ext));
    std::vector<ChildRun> c{child(0, "20", "0", true), child(1, "20", "0", true), child(2, "20", "0", true)};
    const pid_t parent = fork();
    ASSERT_GE(parent, 0);
    if (parent == 0) {
      std::ostringstream os;
      const int code = run_children(c, "/bin/sh", "sh", concurrent, os);
      std::ofstream(dir_ / "parent.out") << os.str();
      _exit(code);
    }
    // Once every child that should be running has set its trap (its record comes after), stop the
    // parent: all three at once, or the first alone.
    const auto running = [&] {
      return exists("gpu0.rec") && (!concurrent || (exists("gpu1.rec") && exists("gpu2.rec")));
    };
    const auto t0 = std::chrono::steady_clock::now();
    while (!running() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(running()) << "the children did not start within 10 s";
    const auto killed = std::chrono::steady_clock::now();  // (the children sleep 20 s)
    ASSERT_EQ(::kill(parent, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(parent, &status, 0), parent);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    std::ifstream out(dir_ / "parent.out");
    std::stringstream said;
    said << out.rdbuf();
    ASSERT_TRUE(WIFEXITED(status)) << "the parent died of the signal instead of passing it on";
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << said.str();
    EXPECT_LT(took, 10.0) << "a child ran on to its end";
    EXPECT_TRUE(exists("gpu0.term")) << said.str();
    if (concurrent) {
      EXPECT_TRUE(exists("gpu1.term") && exists("gpu2.term")) << said.str();
    } else {
      EXPECT_FALSE(exists("gpu1.rec")) << "a child started after the signal";
      EXPECT_FALSE(exists("gpu2.rec"));
      EXPECT_NE(said.str().find("GPU 2 not started: the sweep was stopped by SIGTERM"), std::string::npos)
          << said.str();
    }
  }
}

}  // namespace
