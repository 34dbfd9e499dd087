// The command line: every subcommand and option, parsed into CommandLine without running
// anything (tests/fuzz/fuzz_command_line.cpp feeds it arbitrary arguments); cli/driver.cpp runs the
// command it names.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "cli/commands.h"
#include "roofbench/version.h"
#include "roofline/cupti/metrics.h"

namespace roofbench::cli {

namespace {

// CLI::Range lets NaN through (every comparison with NaN is false), and a threshold or alpha of
// NaN would make every verdict UNSURE: no gate could fail. This one refuses it.
CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return "'" + text + "' is not a number";
        if (!(v >= lo && v <= hi)) return fmt::format("'{}' is not a number in [{:g}, {:g}]", text, lo, hi);
        return {};
      },
      fmt::format("NUMBER in [{:g} - {:g}]", lo, hi));
}

// --device as DeviceSpec::parse reads it: an unknown one is the parser's own message.
const CLI::Validator kDevice(
    [](std::string& text) -> std::string {
      try {
        DeviceSpec::parse(text);
        return {};
      } catch (const InputError& e) {
        return e.what();
      }
    },
    "auto|cpu|cuda:N|all");

// A seed is a 64-bit unsigned integer as written: no sign, no wrap-around, no saturation.
const CLI::Validator kSeed(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && text.size() <= 20 &&
                          text.find_first_not_of("0123456789") == std::string::npos;
      errno = 0;
      if (digits) (void)std::strtoull(text.c_str(), nullptr, 10);
      if (!digits || errno == ERANGE) return "'" + text + "' is not a seed (an integer from 0 to 2^64-1)";
      return {};
    },
    "UINT64");

// A path given empty ("$UNSET" in a script) would fall back to a default unnoticed.
const CLI::Validator kPath(
    [](std::string& text) { return text.empty() ? std::string("an empty path") : std::string(); }, "PATH");

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CommandLine c;
  CLI::App app{"roofbench: GPU and CPU kernel benchmarks placed on a roofline measured in the same run"};
  app.require_subcommand(1);
  // The version and the commit the binary was built from (what its results.json records).
  app.set_version_flag("--version", std::string(ROOFBENCH_VERSION) + " commit " + ROOFBENCH_GIT_COMMIT +
                                        (ROOFBENCH_GIT_DIRTY == 1 ? " (with uncommitted changes)" : ""));

  auto add_run_options = [&c](CLI::App* sub, bool with_filter) {
    sub->add_option_function<std::string>(
           "--device", [&c](const std::string& text) { c.run_args.device = DeviceSpec::parse(text); },
           "auto, cpu, cuda:N or all (auto: first GPU, else the CPU; all: one process per GPU, each into "
           "OUT/<host>-gpu<i>-<uuid>, or the CPU once)")
        ->check(kDevice);
    sub->add_flag("--concurrent", c.run_args.concurrent,
                  "with --device all: every GPU at once (shows what they share: PCIe, the host's CPU); default one "
                  "after another (clean numbers)");
    if (with_filter) sub->add_option("--filter", c.run_args.filter, "regular expression over benchmark names");
    sub->add_option("--skip", c.run_args.skip,
                    "regular expression over benchmark names to leave out, ceilings included (listed in "
                    "results.json not_run)");
    sub->add_flag("--quick", c.run_args.quick, "small sizes and few samples: a fast check of the pipeline");
    sub->add_flag("--verbose", c.run_args.verbose,
                  "print every warning at the end, not a count of each kind (the reports list them all)");
    sub->add_flag("--profile", c.run_args.profile,
                  "for a run under a profiler (ncu, nsys): one warm-up and one sample per benchmark, each started "
                  "after a synchronize instead of behind a blocking kernel");
    sub->add_flag("--dry-run", c.run_args.dry_run,
                  "print the benchmarks the run would take and an upper bound on its time, measure nothing");
    sub->add_flag("--warm", c.run_args.warm, "do not flush the caches before each sample");
    sub->add_option("--out", c.run_args.out, "output folder (default results/<device>-<UTC time>)")->check(kPath);
    sub->add_option("--seed", c.run_args.seed, "seed of the random inputs")->check(kSeed);
    sub->add_option("--noise-target", c.run_args.noise_target_pct,
                    "stop sampling a benchmark once its IQR is this percent of its median (default 1)")
        ->check(number_in(0.01, 100.0));
    sub->add_option("--budget", c.run_args.budget_s,
                    "seconds of wall time a benchmark may sample for when it does not reach the noise target "
                    "(default 5; 0.75 with --quick)")
        ->check(number_in(0.0, 3600.0));
    sub->add_option("--cooldown", c.run_args.cooldown_s,
                    "after a sample whose clock read throttled, wait up to this many seconds for the clock to come "
                    "back above the throttle fraction before the next sample (as nvbench's throttle recovery); the "
                    "wait is recorded per benchmark (default 0: no wait)")
        ->check(number_in(0.0, 60.0));
    sub->add_option("--sustain", c.run_args.sustain_s,
                    "measure the FP32 FMA, BF16 tensor and DRAM read ceilings a second time, each first held back to "
                    "back for this many seconds, so that its clock settles under the power cap: the sustained roofs "
                    "beside the burst ones, and each kernel placed against the roof of the clock it ran at (default "
                    "10 on a GPU, 0 with --quick and on the CPU; 0: none)")
        ->check(number_in(0.0, 600.0));
    sub->add_option("--energy-pass", c.run_args.energy_pass_s,
                    "where a benchmark's samples are too brief for the energy counter (fewer than 10 of its updates "
                    "each) and 10 updates take at most this many seconds, run it back to back that long after its "
                    "samples with the counter read across it, for its energy (default 0.1: RAPL's counters, which "
                    "update every ms, get one; NVML's, about every 100 ms, need about 1.1; 0: none)")
        ->check(number_in(0.0, 60.0));
    sub->add_option("--min-samples", c.run_args.min_samples,
                    "samples a benchmark takes before the noise target may stop it (default 20; 10 with --quick): "
                    "more give compare's rank test the power to call a change on a noisy machine; the budget still "
                    "ends sampling, so raise --budget with it")
        ->check(CLI::Range(MeasureOptions::kMinSamples, 100000));
    sub->add_option("--placements", c.run_args.placements,
                    "measure each benchmark on N fresh instances in turn (fresh memory each, each verified), the "
                    "budget split between them: averages the luck of where its buffers land (default 1)")
        ->check(CLI::Range(1, 64));
    sub->add_flag("--untrusted", c.run_args.untrusted,
                  "for kernels nobody has read (an optimisation loop's): fresh inputs from a random seed before every "
                  "warm-up and timed sample, so a cache of results never hits, and samples chosen at random checked against the "
                  "reference after they are timed (the ceilings are measured as always; `python -m roofbench score` "
                  "sets it)");
    sub->add_flag("--counters", c.run_args.counters,
                  "also read hardware counters (CUPTI) in a separate pass after each benchmark's timed samples");
    sub->add_option("--metrics", c.run_args.metrics,
                    "counters to read instead of each benchmark's default set: a,b,c (implies --counters)");
    sub->allow_extras();  // --benchmark_* flags go to Google Benchmark
  };
  CLI::App* run = app.add_subcommand("run", "verify, time and place every benchmark; write results and reports");
  add_run_options(run, true);
  run->add_flag("--no-builtin", c.run_args.no_builtin,
                "leave roofbench's own kernel families out: only the kernels this binary registers, and the ceilings");
  run->add_option("--ceilings-from", c.run_args.ceilings_from,
                  "take the ceilings from this results file (or folder) of the same machine instead of measuring "
                  "them: a run split in parts measures them once")
      ->check(kPath);
  CLI::App* ceil = app.add_subcommand("ceilings", "measure only the machine's ceilings");
  add_run_options(ceil, false);

  CLI::App* report = app.add_subcommand("report", "re-render the reports from a results file alone");
  report
      ->add_option("results", c.report_paths,
                   "results.json written by `roofbench run` (or its folder); two or more: their rooflines on one "
                   "chart, rooflines.svg")
      ->required();
  report->add_option("--out", c.report_out,
                     "output folder (default: the results file's folder; with several files, the current folder)")
      ->check(kPath);

  CLI::App* merge = app.add_subcommand(
      "merge", "join results files of one machine and one build (the parts of a split run) into one, with its reports");
  merge->add_option("results", c.merge_paths, "results files (or their folders), two or more")->required();
  merge->add_option("--out", c.merge_out, "folder for the merged results.json and its reports")->required()
      ->check(kPath);

  CLI::App* xcheck = app.add_subcommand(
      "crosscheck", "Nsight Compute's counters for benchmarks (ncu --csv output) beside the run's CUPTI counters");
  xcheck->add_option("results", c.xc_results, "results.json of a run with --counters (or its folder)")->required();
  xcheck->add_option("ncu_csv", c.xc_csv, "what `ncu --csv --print-units base --metrics ...` printed")->required();
  xcheck->add_option("--benchmark", c.xc_benchmarks, "the benchmark to compare (repeatable)")->required();
  xcheck->add_option("--json", c.xc_json, "also write the rows as JSON (every benchmark's, or none)")->check(kPath);

  CLI::App* compare = app.add_subcommand(
      "compare", "verdict per benchmark, NEW against BASE: SAME, FASTER, SLOWER, UNSURE or IMPLAUSIBLE (exit 1 on SLOWER, FAILED or IMPLAUSIBLE)");
  compare->add_option("base", c.cmp.base, "BASE results.json, or the folder that holds it")->required();
  compare->add_option("new", c.cmp.fresh, "NEW results.json, or the folder that holds it")->required();
  compare->add_option("--threshold", c.cmp.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(number_in(0.01, 1000.0));
  compare->add_option("--threshold-for", c.cmp.threshold_for,
                      "REGEX=PERCENT: another threshold for benchmarks whose name matches (repeatable; the largest "
                      "matching wins)");
  compare->add_option("--alpha", c.cmp.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(number_in(1e-9, 0.5));
  compare->add_flag("--allow-device-mismatch", c.cmp.allow_device_mismatch,
                    "compare files from different devices instead of refusing");
  compare->add_option("--markdown", c.cmp.markdown, "also write the verdicts as Markdown (a PR comment, a CI summary)")
      ->check(kPath);
  compare->add_option("--json", c.cmp.json, "also write the verdicts as JSON (schema roofbench.compare.v1)")
      ->check(kPath);
  compare->add_option("--chart", c.cmp.chart,
                      "also draw the roofline diff as SVG: each kernel an arrow from BASE to NEW on NEW's roofs, "
                      "coloured by verdict (the Markdown links it)")
      ->check(kPath);
  compare->add_option("--html", c.cmp.html, "also write the roofline diff and the verdicts as an HTML page")->check(kPath);
  compare->add_flag("--by-roof", c.cmp.by_roof,
                    "judge each kernel by its share of its roof measured in its own run (cancels a machine-wide "
                    "change of bandwidth or clock); the rate's change is shown beside it");
  compare->add_option("--noise", c.cmp.noise,
                      "a calibration file (roofbench calibrate): raise each benchmark's threshold to 3 sigma of its "
                      "noise between runs")->check(kPath);

  CLI::App* history = app.add_subcommand(
      "history", "trend per benchmark over results files in commit order; flags steps and slow creeps (exit 1)");
  history
      ->add_option("paths", c.hist.paths,
                   "results files (or their folders) oldest first, or one folder searched for results.json files, "
                   "ordered by run time")
      ->required();
  history->add_option("--out", c.hist.out, "write history.md and a chart per family (history-<family>.svg) here")
      ->check(kPath);
  history->add_option("--threshold", c.hist.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(number_in(0.01, 1000.0));
  history->add_option("--threshold-for", c.hist.threshold_for, "REGEX=PERCENT, as for compare (repeatable)");
  history->add_option("--alpha", c.hist.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(number_in(1e-9, 0.5));
  history->add_flag("--by-roof", c.hist.by_roof, "judge each kernel by its share of its roof in each run, as compare");
  history->add_option("--noise", c.hist.noise, "a calibration file, as for compare")->check(kPath);

  CLI::App* fleet = app.add_subcommand(
      "fleet", "many devices side by side, grouped by model: each ceiling and kernel against the group's median, the "
               "devices below it flagged (exit 1 when any is)");
  fleet
      ->add_option("paths", c.fleet.paths,
                   "results files, or folders searched for results.json files (one per device: host, GPU index)")
      ->required();
  fleet->add_option("--out", c.fleet.out, "write fleet.json, fleet.md and fleet.html here")->check(kPath);
  fleet->add_option("--threshold", c.fleet.threshold_pct, "flag a figure this many percent below the median (default 5)")
      ->check(number_in(0.01, 99.0));
  fleet->add_option("--mad", c.fleet.mad_k, "also flag a figure more than K x 1.4826 MAD below the median (default off)")
      ->check(number_in(0.0, 1000.0));

  CLI::App* evidence = app.add_subcommand(
      "evidence",
      "each results file held to the model: no kernel above its roof beyond the noise, each lesson within "
      "15% of what its roofs predict, no kernel's share of its roof down 25% on the previous run of its "
      "machine class (exit 1 when any file fails)");
  evidence->add_option("paths", c.evidence.paths, "results files, or folders searched for results.json files")
      ->required();
  evidence->add_option("--markdown", c.evidence.markdown, "also write the table as Markdown here")->check(kPath);
  evidence->add_option("--json", c.evidence.json, "also write the findings as JSON (schema roofbench.evidence.v1)")
      ->check(kPath);
  evidence
      ->add_option("--lesson-tolerance", c.evidence.lesson_tolerance_pct,
                   "how far, in percent, a lesson's measured ratio may be from the predicted one (default 15)")
      ->check(number_in(0.01, 1000.0));
  evidence
      ->add_option("--share-drop", c.evidence.share_drop_pct,
                   "how far, in percent, a kernel's share of its roof may fall from the previous run (default 25)")
      ->check(number_in(0.01, 100.0));

  CLI::App* abc = app.add_subcommand(
      "ab", "interleaved A/B of two builds: rounds of a fresh run of each, in random order, judged from the pairs "
            "(exit 1 on SLOWER, FAILED or IMPLAUSIBLE); run options go after --");
  abc->add_option("base_bin", c.ab.base_bin, "the BASE build's roofbench (or a binary built on its library)")->required();
  abc->add_option("new_bin", c.ab.new_bin, "the NEW build's")->required();
  abc->add_option("--rounds", c.ab.rounds, "rounds of one run of each build (default 10)")->check(CLI::Range(1, 1000));
  abc->add_option("--seed", c.ab.seed, "seed of the order within each round")->check(kSeed);
  abc->add_option("--out", c.ab.out, "folder for ab.json, ab.md and every round's results (default results/ab)")
      ->check(kPath);
  abc->add_option("--noise", c.ab.noise, "a calibration file (roofbench calibrate) of this machine")->check(kPath);
  abc->add_option("--markdown", c.ab.markdown, "also write the verdicts as Markdown here (a CI job summary)")
      ->check(kPath);
  abc->add_option("--threshold", c.ab.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(number_in(0.01, 1000.0));
  abc->add_option("--threshold-for", c.ab.threshold_for, "REGEX=PERCENT, as for compare (repeatable)");
  abc->add_option("--alpha", c.ab.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(number_in(1e-9, 0.5));
  abc->add_option("run_options", c.ab.run_args, "after --: the options of every `run` (--device, --quick, --filter...)");

  CLI::App* calc = app.add_subcommand(
      "calibrate", "A/A of one build against itself in rounds of fresh runs: writes noise.json, each benchmark's "
                   "noise between runs, for compare --noise and ab --noise; run options go after --");
  calc->add_option("bin", c.cal.bin, "the roofbench (or a binary built on its library) to calibrate")->required();
  calc->add_option("--rounds", c.cal.rounds, "rounds (default 10)")->check(CLI::Range(2, 1000));
  calc->add_option("--seed", c.cal.seed, "seed of the order within each round")->check(kSeed);
  calc->add_option("--out", c.cal.out, "folder for noise.json and every round's results (default results/calibrate)")
      ->check(kPath);
  calc->add_option("run_options", c.cal.run_args, "after --: the options of every `run`");

  c.met.chip = cupti::kHopperChip;
  CLI::App* metrics = app.add_subcommand(
      "metrics", "the hardware counters each CUDA benchmark gets on a chip and the replay passes they need (no GPU needed)");
  metrics->add_option("--chip", c.met.chip, "CUPTI chip name (default GH100: H100 and H200)");
  metrics->add_option("--filter", c.met.filter, "regular expression over benchmark names");
  metrics->add_option("--metrics", c.met.metrics, "check this list (a,b,c) instead of the default sets");
  metrics->add_flag("--all", c.met.all, "list every metric the chip has");

  app.add_subcommand("list", "list every registered benchmark")
      ->add_flag("--no-builtin", c.list_no_builtin, "leave roofbench's own kernel families out (the ceilings stay)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      c.exit_code = app.exit(e, out, err);
      return c;
    }
    err << "roofbench: " << e.what() << " (see roofbench --help)\n";
    c.exit_code = kExitUsage;
    return c;
  }
  for (CLI::App* sub : {run, ceil}) {
    if (!sub->parsed()) continue;
    c.command = sub->get_name();
    for (const auto& extra : sub->remaining()) {
      if (extra.rfind("--benchmark_", 0) != 0)
        throw InputError("unknown argument '" + extra + "' (see roofbench " + sub->get_name() + " --help)");
      c.run_args.gbench_args.push_back(extra);
    }
    return c;
  }
  for (CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) c.command = sub->get_name();
  return c;
}

}  // namespace roofbench::cli
