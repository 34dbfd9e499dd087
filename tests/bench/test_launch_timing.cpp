// The order of the calls in one event-timed GPU sample (bench/launch_timing.h), on a stream that
// only records them: with the launch hidden, the start event and the launches are queued while a
// blocking kernel holds the stream, which is released only after the stop event is queued; a
// launch that throws still releases it. The GPU side (an empty kernel's time without its launch,
// the hold's timeout) is tests/bench/test_cuda_device.cu.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/launch_timing.h"

using namespace roofbench;

namespace {

struct RecordingStream {
  std::vector<std::string> calls;
  bool times_out = false;
  void synchronize() { calls.push_back("synchronize"); }
  void hold() { calls.push_back("hold"); }
  void release() noexcept { calls.push_back("release"); }
  void record_start() { calls.push_back("start"); }
  void record_stop() { calls.push_back("stop"); }
  double elapsed_s() {
    calls.push_back("elapsed");
    if (times_out) throw HoldTimedOut("held too long");
    return 1e-6;
  }
};

}  // namespace

TEST(LaunchTiming, AHiddenLaunchIsQueuedBetweenTheEventsWhileTheStreamIsHeld) {
  RecordingStream s;
  const double t = timed_sample(s, [&] { s.calls.push_back("launch"); }, Launch::hidden);
  EXPECT_DOUBLE_EQ(t, 1e-6);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"hold", "start", "launch", "stop", "release", "elapsed"}));
}

TEST(LaunchTiming, ASynchronousLaunchStartsAfterASynchronizeAndHoldsNothing) {
  RecordingStream s;
  timed_sample(s, [&] { s.calls.push_back("launch"); }, Launch::synchronous);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"synchronize", "start", "launch", "stop", "elapsed"}));
}

TEST(LaunchTiming, ADeviceWideSampleStopsOnlyAfterTheWholeDeviceIsIdle) {
  // --untrusted: a callable that launched its work on a stream of its own is still inside the
  // events, since the stop is recorded after a synchronize of the device, not of one stream.
  RecordingStream s;
  timed_sample(s, [&] { s.calls.push_back("launch"); }, Launch::device_wide, [&] { s.calls.push_back("during"); });
  EXPECT_EQ(s.calls,
            (std::vector<std::string>{"synchronize", "start", "launch", "during", "synchronize", "stop", "elapsed"}));
}

TEST(LaunchTiming, ALaunchThatThrowsStillReleasesTheStream) {
  RecordingStream s;
  EXPECT_THROW(timed_sample(s, [] { throw std::runtime_error("bad launch"); }, Launch::hidden), std::runtime_error);
  EXPECT_EQ(s.calls, (std::vector<std::string>{"hold", "start", "release"}));
}

TEST(LaunchTiming, AHoldThatTimedOutIsReportedNotTimed) {
  RecordingStream s;
  s.times_out = true;
  EXPECT_THROW(timed_sample(s, [] {}, Launch::hidden), HoldTimedOut);
}
