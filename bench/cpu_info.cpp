#include "bench/cpu_info.h"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

namespace roofbench {

namespace {

std::size_t read_cache_size(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
  std::string s;
  if (!(in >> s) || s.empty()) return 0;
  std::size_t mult = 1;
  if (s.back() == 'K') mult = 1024;
  if (s.back() == 'M') mult = 1024 * 1024;
  return std::stoull(s) * mult;
}

// 0 where sysfs does not say.
int read_cache_sharers(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/shared_cpu_list");
  std::string s;
  in >> s;
  return count_cpu_list(s);
}

int read_cache_level(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/level");
  int level = 0;
  in >> level;
  return level;
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
    }
  }
  return "";
}

// FMA datapath by microarchitecture. cpuid tells the ISA, not how many FMA pipes sit behind it,
// so this is a table; a CPU not in it gets the common two-unit assumption, said in fma_source.
void fill_fma_table(CpuInfo& c) {
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  c.isa = avx512 ? "avx512f" : avx2fma ? "avx2+fma" : "scalar";
  if (c.vendor == "AuthenticAMD" && c.family == 0x19) {
    // Zen 3 / Zen 4: two 256-bit FMA pipes; Zen 4 runs AVX-512 on them in two halves.
    c.fp32_lanes = 8;
    c.fma_units = 2;
    c.fma_source = avx512 ? "AMD family 19h with AVX-512 (Zen 4): 2 x 256-bit FMA pipes, AVX-512 double-pumped"
                          : "AMD family 19h (Zen 3): 2 x 256-bit FMA pipes";
  } else if (c.vendor == "AuthenticAMD" && c.family == 0x1a) {
    c.fp32_lanes = 16;
    c.fma_units = 2;
    c.fma_source = "AMD family 1Ah (Zen 5): 2 x 512-bit FMA pipes (server parts)";
  } else if (c.vendor == "AuthenticAMD" && c.family == 0x17) {
    c.fp32_lanes = c.model >= 0x30 ? 8 : 4;
    c.fma_units = 2;
    c.fma_source = c.model >= 0x30 ? "AMD family 17h model >= 30h (Zen 2): 2 x 256-bit FMA pipes"
                                   : "AMD family 17h (Zen 1): 2 x 128-bit FMA pipes";
  } else if (avx512) {
    c.fp32_lanes = 16;
    c.fma_units = 2;
    c.fma_source =
        "AVX-512 CPU not in the table: assumed 2 x 512-bit FMA units (Xeon Gold/Platinum; some parts have 1)";
  } else if (avx2fma) {
    c.fp32_lanes = 8;
    c.fma_units = 2;
    c.fma_source = "AVX2+FMA CPU not in the table: assumed 2 x 256-bit FMA units";
  } else {
    c.fp32_lanes = 1;
    c.fma_units = 1;
    c.fma_source = "no vector FMA: scalar fma, 1 unit assumed";
  }
#else
  c.isa = "scalar";
  c.fp32_lanes = 1;
  c.fma_units = 1;
  c.fma_source = "non-x86 CPU: scalar fma, 1 unit assumed";
#endif
}

CpuInfo detect() {
  CpuInfo c;
  c.vendor = cpuinfo_field("vendor_id");
  c.model_name = cpuinfo_field("model name");
  if (c.model_name.empty()) c.model_name = "unknown CPU";
  try {
    c.family = std::stoi(cpuinfo_field("cpu family"));
    c.model = std::stoi(cpuinfo_field("model\t"));
  } catch (...) {
  }
  try {
    c.nominal_hz = std::stod(cpuinfo_field("cpu MHz")) * 1e6;
  } catch (...) {
  }
  c.threads = omp_get_max_threads();
  int llc_sharers = 0;
  for (int i = 0; i < 8; ++i) {
    const int level = read_cache_level(i);
    const std::size_t size = read_cache_size(i);
    const int sharers = read_cache_sharers(i);
    if (level == 1 && size && c.l1d_bytes == 0) {  // index0 is L1d on Linux
      c.l1d_bytes = size;
      c.l1d_sharers = std::max(1, sharers);
    }
    if (level == 2) {
      c.l2_bytes = size;
      c.l2_sharers = std::max(1, sharers);
    }
    if (level >= 2 && size) {  // the highest level seen last
      c.llc_bytes = size;
      llc_sharers = sharers;
    }
  }
  // An LLC whose sharers sysfs does not give (or one from sysconf, or guessed): shared by all the
  // threads, so that their slices together fit it. The L1 and L2: one thread's each.
  c.llc_sharers = llc_sharers > 0 ? llc_sharers : std::max(1, c.threads);
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (c.llc_bytes == 0) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) c.llc_bytes = static_cast<std::size_t>(l3);
  }
#endif
  if (c.llc_bytes == 0) c.llc_bytes = 32u << 20;  // unknown: assume a large LLC, flush more
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) c.memory_bytes = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  fill_fma_table(c);
  return c;
}

}  // namespace

void whole_openmp_teams() {
  omp_set_dynamic(0);
}

int count_cpu_list(const std::string& list) {
  if (list.empty()) return 0;
  int count = 0;
  std::stringstream in(list);
  std::string range;
  while (std::getline(in, range, ',')) {
    const auto dash = range.find('-');
    try {
      std::size_t used = 0;
      const int first = std::stoi(range.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? range.size() : dash)) return 0;
      int last = first;
      if (dash != std::string::npos) {
        const std::string tail = range.substr(dash + 1);
        last = std::stoi(tail, &used);
        if (used != tail.size()) return 0;
      }
      if (first < 0 || last < first) return 0;
      count += last - first + 1;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return count;
}

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect();
  return info;
}

namespace {
#if defined(__x86_64__)
// The calling thread's clock: dependent integer adds (one per cycle) timed over `windows`
// windows of `seconds / windows`, keeping the fastest: a window in which the hypervisor or
// another process took the core only ever reads low, never high. The adds take their operand
// from a register: Intel cores since Golden Cove fold adds of an immediate at rename, and a
// chain of `add $1` ran at 10 GHz on a 2.3 GHz Xeon VM here (register adds: 2.26 GHz).
double thread_clock_hz(double seconds, int windows) {
  using clock = std::chrono::steady_clock;
  std::uint64_t x = 0;
  const std::uint64_t one = 1;
  double best = 0;
  for (int window = 0; window < windows; ++window) {
    std::uint64_t adds = 0;
    const auto t0 = clock::now();
    double elapsed = 0;
    do {
      // 64 dependent adds per block: the loop overhead runs beside the chain, not on it.
      for (int rep = 0; rep < 64; ++rep) {
        asm volatile(
            ".rept 64\n\t"
            "add %1, %0\n\t"
            ".endr"
            : "+r"(x)
            : "r"(one));
      }
      adds += 64 * 64;
      elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    } while (elapsed < seconds / windows);
    best = std::max(best, static_cast<double>(adds) / elapsed);
  }
  asm volatile("" ::"r"(x));
  return best;
}
#endif
}  // namespace

double measure_core_clock_hz(double seconds) {
#if defined(__x86_64__)
  const int threads = omp_get_max_threads();
  std::vector<double> hz(threads, 0.0);
#pragma omp parallel num_threads(threads)
  hz[omp_get_thread_num()] = thread_clock_hz(seconds, 5);
  double sum = 0;
  for (double h : hz) sum += h;
  return sum / threads;
#else
  (void)seconds;
  return 0.0;
#endif
}

double quick_core_clock_hz() {
#if defined(__x86_64__)
  return thread_clock_hz(200e-6, 3);
#else
  return 0.0;
#endif
}

double theoretical_fma_peak(const CpuInfo& cpu, bool fp64, double clock_hz) {
  const int lanes = fp64 ? std::max(1, cpu.fp32_lanes / 2) : cpu.fp32_lanes;
  return static_cast<double>(cpu.threads) * lanes * cpu.fma_units * 2.0 * clock_hz;
}

std::string theoretical_fma_derivation(const CpuInfo& cpu, bool fp64, double clock_hz) {
  const int lanes = fp64 ? std::max(1, cpu.fp32_lanes / 2) : cpu.fp32_lanes;
  return fmt::format(
      "{} cores x {} {} lanes x {} FMA units x 2 FLOP x {:.3f} GHz; units and lanes: {}; clock: "
      "measured by timing dependent integer-add chains (1 cycle each) on all cores at once, before and after the "
      "samples",
      cpu.threads, lanes, fp64 ? "FP64" : "FP32", cpu.fma_units, clock_hz / 1e9, cpu.fma_source);
}

}  // namespace roofbench
