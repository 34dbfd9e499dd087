// roofbench/host_buffer.h: a buffer that does not fit in the memory the machine has available
// is refused before it is allocated, with the numbers; buffers allocated but not yet touched
// count against what is left.
#include <gtest/gtest.h>

#include <string>

#include "roofbench/host_buffer.h"
#include "roofbench/types.h"

namespace roofbench {
namespace {

std::string refusal(std::size_t floats) {
  try {
    HostBuffer<float> b(floats);
  } catch (const MemoryRefused& e) {
    return e.what();
  }
  return "";
}

TEST(HostMemory, AvailableIsKnownOnLinux) {
  EXPECT_GT(host_memory_available(), std::size_t{64} << 20);
}

TEST(HostMemory, ABufferLargerThanWhatIsAvailableIsRefusedWithTheNumbers) {
  const std::size_t twice = 2 * host_memory_available() / sizeof(float);
  const std::string e = refusal(twice);
  EXPECT_NE(e.find("does not fit"), std::string::npos) << e;
  EXPECT_NE(e.find("GiB of memory available"), std::string::npos) << e;
  EXPECT_NE(e.find("refused before allocating"), std::string::npos) << e;
  // A size whose byte count overflows is refused too, not wrapped round to a small one.
  EXPECT_NE(refusal(std::size_t(-1) / 2).find("does not fit"), std::string::npos);
}

TEST(HostMemory, BuffersNotYetTouchedCountAgainstWhatIsLeft) {
  // Each of two buffers fits alone (60% of what is available); together they do not, and the
  // second is refused though the first, never touched, has not left MemAvailable yet.
  const std::size_t share = host_memory_available() / 10 * 6 / sizeof(float);
  {
    HostBuffer<float> first(share);
    EXPECT_NE(refusal(share).find("promised to this process's buffers"), std::string::npos);
  }
  // Freed, its reservation is gone: the same size fits again.
  EXPECT_EQ(refusal(share), "");
}

TEST(HostMemory, AMovedBufferReleasesItsReservationOnce) {
  const std::size_t share = host_memory_available() / 10 * 6 / sizeof(float);
  {
    HostBuffer<float> a(share);
    HostBuffer<float> b(std::move(a));  // one reservation, now b's
    EXPECT_NE(refusal(share), "");
  }
  EXPECT_EQ(refusal(share), "");
}

}  // namespace
}  // namespace roofbench
