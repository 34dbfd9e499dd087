#pragma once
// The order of the calls in one event-timed GPU sample, apart from CUDA so that a host test can
// check it (tests/bench/test_launch_timing.cpp).
//
// An event pair recorded on an idle GPU measures the kernel *and* its launch: the start event
// completes at once, and the kernel starts only after the host has gone through the launch
// (several µs, as long as a short kernel itself). nvbench's answer, used here: a blocking kernel
// holds the stream on a host-written flag while the start event, the launches and the stop event
// are queued behind it; releasing the flag lets the GPU run them back to back, so the events
// bracket the kernels alone. A launch that waits for the GPU itself (a synchronous cudaMemcpy)
// cannot be queued behind a held stream: such a variant declares `launch_synchronizes` and its
// samples start after a synchronize instead.
#include <stdexcept>
#include <string>

#include "roofbench/variant.h"  // Launch

namespace roofbench {


// A hold that was never released in time: run() waited for the GPU while the stream was held
// (it synchronizes, or queued more launches than the GPU's queue takes), or a profiler that
// serializes launches (ncu, compute-sanitizer) ran the blocking kernel to its timeout.
struct HoldTimedOut : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a sample does between queueing its work and waiting for it: nothing, by default.
struct NothingDuring {
  void operator()() const {}
};

// `Stream` provides: synchronize() (the whole device), hold(), release() (noexcept), record_start(), record_stop()
// and elapsed_s() (waits for the stop event; throws HoldTimedOut when the hold ran out).
// `during` is called once the work is queued (and released) and before the wait: while the GPU
// runs it, so a clock read there is the clock the sample ran at (read after the wait, a
// power-capped kernel's clock can already be back at boost).
template <class Stream, class Run, class During = NothingDuring>
double timed_sample(Stream& s, Run&& run, Launch launch, During&& during = During{}) {
  if (launch == Launch::device_wide) {  // every stream's work inside the events (--untrusted)
    s.synchronize();
    s.record_start();
    run();
    during();
    s.synchronize();  // the whole device: a kernel launched on a stream of its own too
    s.record_stop();
    return s.elapsed_s();
  }
  if (launch == Launch::synchronous) {
    s.synchronize();
    s.record_start();
    run();
    s.record_stop();
    during();
    return s.elapsed_s();
  }
  s.hold();  // the GPU now waits on the host's flag
  struct Release {  // also when a launch throws: a held stream would wait for its timeout
    Stream& s;
    ~Release() { s.release(); }
  };
  {
    Release r{s};
    s.record_start();  // queued behind the hold: completes when the GPU reaches it, not now
    run();             // the launches, queued
    s.record_stop();
  }  // released: the GPU runs start, the kernels and stop back to back
  during();
  return s.elapsed_s();
}

}  // namespace roofbench
