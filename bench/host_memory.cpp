// How much memory the host can still give, and the reservation every HostBuffer makes before it
// allocates (roofbench/host_buffer.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <string>

#include "roofbench/host_buffer.h"
#include "roofbench/types.h"

namespace roofbench {

namespace {
std::mutex g_mutex;
std::size_t g_reserved = 0;  // bytes of the live HostBuffers of this process

std::size_t resident_bytes() {  // this process's resident memory
  std::ifstream in("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}
}  // namespace

std::size_t host_memory_available() {
  // MemAvailable: free memory plus what the kernel can reclaim (page cache) without swapping.
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

void reserve_host_memory(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  // Small buffers are counted but not checked: reading /proc for each costs more than they do.
  if (bytes >= (std::size_t{64} << 20)) {
    const std::size_t available = host_memory_available();
    // The live buffers that are resident already left MemAvailable; those not yet touched will
    // take from it. At most min(reserved, resident) of them are resident.
    const std::size_t untouched = g_reserved - std::min(g_reserved, resident_bytes());
    if (available > 0 && (bytes > available || untouched > available - bytes)) {
      constexpr double kGiB = 1024.0 * 1024 * 1024;
      throw MemoryRefused(fmt::format(
          "a host buffer of {:.2f} GiB does not fit: {:.2f} GiB of memory available (MemAvailable), {:.2f} GiB of "
          "it promised to this process's buffers not yet filled; refused before allocating. Run a smaller size, or "
          "on a machine with more memory",
          static_cast<double>(bytes) / kGiB, static_cast<double>(available) / kGiB,
          static_cast<double>(untouched) / kGiB));
    }
  }
  g_reserved += bytes;
}

void release_host_memory(std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_reserved -= std::min(g_reserved, bytes);
}

}  // namespace roofbench
