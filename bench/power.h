#pragma once
// Power and energy around each timed sample: what the device's own counters say, never a figure
// made up where they say nothing. The GPU reads NVML (bench/nvml.h); the CPU reads RAPL's energy
// counters under /sys/class/powercap where the kernel exposes them (Rapl below).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace roofbench {

struct Measurement;

// One reading of the device's power state; each field absent where the device does not give it.
struct PowerReading {
  std::optional<double> energy_j;       // a monotonic energy counter, joules since some moment
  std::optional<double> power_w;        // the power the device reports now (its own averaging window)
  std::optional<double> temperature_c;  // the chip's temperature
};

// A measurement's energy, derived from its per-sample counters (never stored as the truth: a
// results file's is derived again when it is read). The counters advance coarsely (RAPL about
// every millisecond; NVML's on an H200 about every 100 ms), so across a window much shorter than
// an update a sample's difference is 0 or one whole update, which holds the energy of the whole
// update period before it (flushes and host work included), not of the window: on the second
// H200 visit such sums came out at 0.9 to 13 kW on a 700 W GPU. So the energy is derived only
// where the median window spans at least kEnergyUpdatesPerWindow updates of the counter (its
// interval, Measurement::energy_interval_s, probed on the device); each window's difference is
// then within one update of its energy. The mean power over the samples' windows (each from just
// before the timed run to just after it) times the median time is the energy of one run.
inline constexpr double kEnergyUpdatesPerWindow = 10;
struct EnergySummary {
  double mean_power_w = 0;
  double joules_per_run = 0;
  int samples = 0;          // samples with an energy reading
  int samples_counted = 0;  // of those, the ones whose counter advanced
  // Where it comes from: "samples" (their windows), or the back-to-back run the counter was read
  // across (Measurement::energy_run): "hold" (a sustained pass's) or "pass" (an energy pass's).
  std::string from = "samples";
  bool window = false;  // from a run's window between two changes of the counter (EnergyRun::Window)
};
// Where the samples are too brief, a back-to-back run (Measurement::energy_run) of at least 10
// updates gives it instead: its mean power (the counter's difference over its wall time) times its
// own mean run time (busy_s / runs: a run back to back, warm, at the clock it held). Only where the runs kept the device busy for at least this share of its wall time
// (for a kernel of microseconds the synchronizes between runs would dilute the power).
inline constexpr double kEnergyBusyShare = 0.8;
// Or, where an energy pass read the counter after its batches (EnergyRun::Window), the difference
// between two changes it saw: whole updates, none cut, so exact in joules. Taken where it spans at
// least kEnergyWindowChanges changes and its time is known within kEnergyWindowSlack (each end seen
// up to gap_s late, so the span is within gap_s): 2%, where ten unaligned updates leave 10%.
inline constexpr int kEnergyWindowChanges = 3;
inline constexpr double kEnergyWindowSlack = 0.02;
// nullopt, with the reason in *why, where the samples carry no energy or the counter never moved.
std::optional<EnergySummary> energy_summary(const Measurement& m, std::string* why = nullptr);

// How often a counter advances: read() polled (every 50 us) until it has changed four times, the
// median of the three intervals between the changes; nullopt (with *why) where a read fails or
// fewer than two changes come within limit_s.
std::optional<double> counter_update_interval(const std::function<std::optional<double>()>& read, double limit_s,
                                              std::string* why = nullptr);

// RAPL through the powercap sysfs: the package domains' energy_uj (intel-rapl:N; the kernel's AMD
// driver names them the same), summed, each corrected for its wrap at max_energy_range_uj.
class Rapl {
 public:
  // root: /sys/class/powercap, or a tree laid out like it (tests).
  explicit Rapl(std::filesystem::path root = "/sys/class/powercap");
  bool available() const { return !domains_.empty(); }
  // Why nothing is read ("no /sys/class/powercap: ..."), or "" when available.
  const std::string& why() const { return why_; }
  // "RAPL: package-0, package-1" or "unavailable: " + why().
  std::string describe() const;
  // Joules since this object was made, summed over the packages; nullopt where a read fails.
  std::optional<double> energy_j();

 private:
  struct Domain {
    std::filesystem::path energy;
    std::string name;
    double range_uj = 0;
    double last_uj = 0;
    double total_uj = 0;
  };
  std::vector<Domain> domains_;
  std::string why_;
};

}  // namespace roofbench
