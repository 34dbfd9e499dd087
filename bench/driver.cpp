#include "roofbench/main.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "bench/commands.h"
#include "roofbench/version.h"
#include "roofline/cupti/metrics.h"

namespace roofbench {

using namespace cli;

int roofbench_main(int argc, char** argv) {
  CLI::App app{"roofbench: GPU and CPU kernel benchmarks placed on a roofline measured in the same run"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ROOFBENCH_VERSION);

  RunArgs run_args;
  auto add_run_options = [&run_args](CLI::App* sub, bool with_filter) {
    sub->add_option("--device", run_args.device, "auto, cpu or cuda:N (auto: first GPU, else the CPU)");
    if (with_filter) sub->add_option("--filter", run_args.filter, "regular expression over benchmark names");
    sub->add_option("--skip", run_args.skip,
                    "regular expression over benchmark names to leave out, ceilings included (listed in "
                    "results.json not_run)");
    sub->add_flag("--quick", run_args.quick, "small sizes and few samples: a fast check of the pipeline");
    sub->add_flag("--verbose", run_args.verbose,
                  "print every warning at the end, not a count of each kind (the reports list them all)");
    sub->add_flag("--profile", run_args.profile,
                  "for a run under a profiler (ncu, nsys): one warm-up and one sample per benchmark, each started "
                  "after a synchronize instead of behind a blocking kernel");
    sub->add_flag("--dry-run", run_args.dry_run,
                  "print the benchmarks the run would take and an upper bound on its time, measure nothing");
    sub->add_flag("--warm", run_args.warm, "do not flush the caches before each sample");
    sub->add_option("--out", run_args.out, "output folder (default results/<device>-<UTC time>)");
    sub->add_option("--seed", run_args.seed, "seed of the random inputs");
    sub->add_option("--noise-target", run_args.noise_target_pct,
                    "stop sampling a benchmark once its IQR is this percent of its median (default 1)")
        ->check(CLI::Range(0.01, 100.0));
    sub->add_option("--budget", run_args.budget_s,
                    "seconds of wall time a benchmark may sample for when it does not reach the noise target "
                    "(default 5; 1 with --quick)")
        ->check(CLI::Range(0.0, 3600.0));
    sub->add_option("--placements", run_args.placements,
                    "measure each benchmark on N fresh instances in turn (fresh memory each, each verified), the "
                    "budget split between them: averages the luck of where its buffers land (default 1)")
        ->check(CLI::Range(1, 64));
    sub->add_flag("--counters", run_args.counters,
                  "also read hardware counters (CUPTI) in a separate pass after each benchmark's timed samples");
    sub->add_option("--metrics", run_args.metrics,
                    "counters to read instead of each benchmark's default set: a,b,c (implies --counters)");
    sub->allow_extras();  // --benchmark_* flags go to Google Benchmark
  };
  CLI::App* run = app.add_subcommand("run", "verify, time and place every benchmark; write results and reports");
  add_run_options(run, true);
  run->add_flag("--no-builtin", run_args.no_builtin,
                "leave roofbench's own kernel families out: only the kernels this binary registers, and the ceilings");
  run->add_option("--ceilings-from", run_args.ceilings_from,
                  "take the ceilings from this results file (or folder) of the same machine instead of measuring "
                  "them: a run split in parts measures them once");
  CLI::App* ceil = app.add_subcommand("ceilings", "measure only the machine's ceilings");
  add_run_options(ceil, false);

  std::vector<std::string> report_paths;
  std::string report_out;
  CLI::App* report = app.add_subcommand("report", "re-render the reports from a results file alone");
  report
      ->add_option("results", report_paths,
                   "results.json written by `roofbench run` (or its folder); two or more: their rooflines on one "
                   "chart, rooflines.svg")
      ->required();
  report->add_option("--out", report_out, "output folder (default: the results file's folder)");

  std::vector<std::string> merge_paths;
  std::string merge_out;
  CLI::App* merge = app.add_subcommand(
      "merge", "join results files of one machine and one build (the parts of a split run) into one, with its reports");
  merge->add_option("results", merge_paths, "results files (or their folders), two or more")->required();
  merge->add_option("--out", merge_out, "folder for the merged results.json and its reports")->required();

  std::string xc_results, xc_csv;
  std::vector<std::string> xc_benchmarks;
  CLI::App* xcheck = app.add_subcommand(
      "crosscheck", "Nsight Compute's counters for benchmarks (ncu --csv output) beside the run's CUPTI counters");
  xcheck->add_option("results", xc_results, "results.json of a run with --counters (or its folder)")->required();
  xcheck->add_option("ncu_csv", xc_csv, "what `ncu --csv --print-units base --metrics ...` printed")->required();
  xcheck->add_option("--benchmark", xc_benchmarks, "the benchmark to compare (repeatable)")->required();

  CompareArgs cmp;
  CLI::App* compare = app.add_subcommand(
      "compare", "verdict per benchmark, NEW against BASE: SAME, FASTER, SLOWER or UNSURE (exit 1 on SLOWER or FAILED)");
  compare->add_option("base", cmp.base, "BASE results.json, or the folder that holds it")->required();
  compare->add_option("new", cmp.fresh, "NEW results.json, or the folder that holds it")->required();
  compare->add_option("--threshold", cmp.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(CLI::Range(0.01, 1000.0));
  compare->add_option("--threshold-for", cmp.threshold_for,
                      "REGEX=PERCENT: another threshold for benchmarks whose name matches (repeatable; the largest "
                      "matching wins)");
  compare->add_option("--alpha", cmp.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));
  compare->add_flag("--allow-device-mismatch", cmp.allow_device_mismatch,
                    "compare files from different devices instead of refusing");
  compare->add_option("--markdown", cmp.markdown, "also write the verdicts as Markdown (a PR comment, a CI summary)");
  compare->add_option("--json", cmp.json, "also write the verdicts as JSON (schema roofbench.compare.v1)");
  compare->add_flag("--by-roof", cmp.by_roof,
                    "judge each kernel by its share of its roof measured in its own run (cancels a machine-wide "
                    "change of bandwidth or clock); the rate's change is shown beside it");
  compare->add_option("--noise", cmp.noise,
                      "a calibration file (roofbench calibrate): raise each benchmark's threshold to 3 sigma of its "
                      "noise between runs");

  HistoryArgs hist;
  CLI::App* history = app.add_subcommand(
      "history", "trend per benchmark over results files in commit order; flags steps and slow creeps (exit 1)");
  history
      ->add_option("paths", hist.paths,
                   "results files (or their folders) oldest first, or one folder searched for results.json files, "
                   "ordered by run time")
      ->required();
  history->add_option("--out", hist.out, "write history.md and a chart per family (history-<family>.svg) here");
  history->add_option("--threshold", hist.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(CLI::Range(0.01, 1000.0));
  history->add_option("--threshold-for", hist.threshold_for, "REGEX=PERCENT, as for compare (repeatable)");
  history->add_option("--alpha", hist.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));
  history->add_flag("--by-roof", hist.by_roof, "judge each kernel by its share of its roof in each run, as compare");
  history->add_option("--noise", hist.noise, "a calibration file, as for compare");

  AbArgs ab;
  CLI::App* abc = app.add_subcommand(
      "ab", "interleaved A/B of two builds: rounds of a fresh run of each, in random order, judged from the pairs "
            "(exit 1 on SLOWER or FAILED); run options go after --");
  abc->add_option("base_bin", ab.base_bin, "the BASE build's roofbench (or a binary built on its library)")->required();
  abc->add_option("new_bin", ab.new_bin, "the NEW build's")->required();
  abc->add_option("--rounds", ab.rounds, "rounds of one run of each build (default 10)")->check(CLI::Range(1, 1000));
  abc->add_option("--seed", ab.seed, "seed of the order within each round");
  abc->add_option("--out", ab.out, "folder for ab.json, ab.md and every round's results (default results/ab)");
  abc->add_option("--noise", ab.noise, "a calibration file (roofbench calibrate) of this machine");
  abc->add_option("--markdown", ab.markdown, "also write the verdicts as Markdown here (a CI job summary)");
  abc->add_option("--threshold", ab.threshold_pct, "smallest change in percent that counts (default 5)")
      ->check(CLI::Range(0.01, 1000.0));
  abc->add_option("--threshold-for", ab.threshold_for, "REGEX=PERCENT, as for compare (repeatable)");
  abc->add_option("--alpha", ab.alpha, "significance level of the adjusted p-value (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));
  abc->add_option("run_options", ab.run_args, "after --: the options of every `run` (--device, --quick, --filter...)");

  CalibrateArgs cal;
  CLI::App* calc = app.add_subcommand(
      "calibrate", "A/A of one build against itself in rounds of fresh runs: writes noise.json, each benchmark's "
                   "noise between runs, for compare --noise and ab --noise; run options go after --");
  calc->add_option("bin", cal.bin, "the roofbench (or a binary built on its library) to calibrate")->required();
  calc->add_option("--rounds", cal.rounds, "rounds (default 10)")->check(CLI::Range(2, 1000));
  calc->add_option("--seed", cal.seed, "seed of the order within each round");
  calc->add_option("--out", cal.out, "folder for noise.json and every round's results (default results/calibrate)");
  calc->add_option("run_options", cal.run_args, "after --: the options of every `run`");

  MetricsArgs met;
  met.chip = cupti::kHopperChip;
  CLI::App* metrics = app.add_subcommand(
      "metrics", "the hardware counters each CUDA benchmark gets on a chip and the replay passes they need (no GPU needed)");
  metrics->add_option("--chip", met.chip, "CUPTI chip name (default GH100: H100 and H200)");
  metrics->add_option("--filter", met.filter, "regular expression over benchmark names");
  metrics->add_option("--metrics", met.metrics, "check this list (a,b,c) instead of the default sets");
  metrics->add_flag("--all", met.all, "list every metric the chip has");

  bool list_no_builtin = false;
  app.add_subcommand("list", "list every registered benchmark")
      ->add_flag("--no-builtin", list_no_builtin, "leave roofbench's own kernel families out (the ceilings stay)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "roofbench: " << e.what() << " (see roofbench --help)\n";
    return kExitUsage;
  }

  try {
    for (CLI::App* sub : {run, ceil}) {
      if (!sub->parsed()) continue;
      for (const auto& extra : sub->remaining()) {
        if (extra.rfind("--benchmark_", 0) != 0)
          throw InputError("unknown argument '" + extra + "' (see roofbench " + sub->get_name() + " --help)");
        run_args.gbench_args.push_back(extra);
      }
      return cmd_run(run_args, sub == ceil, argc, argv);
    }
    if (report->parsed()) return cmd_report(report_paths, report_out);
    if (merge->parsed()) return cmd_merge(merge_paths, merge_out, argc, argv);
    if (xcheck->parsed()) return cmd_crosscheck(xc_results, xc_csv, xc_benchmarks);
    if (compare->parsed()) return cmd_compare(cmp);
    if (history->parsed()) return cmd_history(hist);
    if (abc->parsed()) return cmd_ab(ab);
    if (calc->parsed()) return cmd_calibrate(cal);
    if (metrics->parsed()) return cmd_metrics(met);
    return cmd_list(!list_no_builtin);
  } catch (const InputError& e) {
    std::cerr << "roofbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "roofbench: internal error: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace roofbench
