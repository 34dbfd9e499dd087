#include "roofbench/main.h"

#include <iostream>

#include "cli/commands.h"
#include "bench/openblas_core.h"

namespace roofbench {

using namespace cli;

int roofbench_main(int argc, char** argv) {
  restart_for_openblas(argc, argv);  // bench/openblas_core.h: a VM's unknown CPU model
  return cli::run_command_line(argc, argv);
}

namespace cli {
int run_command_line(int argc, char** argv) {
  CommandLine c;
  try {
    c = parse_command_line(argc, argv, std::cout, std::cerr);
    if (c.exit_code >= 0) return c.exit_code;
    if (c.command == "run" || c.command == "ceilings") return cmd_run(c.run_args, c.command == "ceilings", argc, argv);
    if (c.command == "report") return cmd_report(c.report_paths, c.report_out);
    if (c.command == "merge") return cmd_merge(c.merge_paths, c.merge_out, argc, argv);
    if (c.command == "crosscheck") return cmd_crosscheck(c.xc_results, c.xc_csv, c.xc_benchmarks, c.xc_json);
    if (c.command == "compare") return cmd_compare(c.cmp);
    if (c.command == "history") return cmd_history(c.hist);
    if (c.command == "fleet") return cmd_fleet(c.fleet);
    if (c.command == "evidence") return cmd_evidence(c.evidence);
    if (c.command == "ab") return cmd_ab(c.ab);
    if (c.command == "calibrate") return cmd_calibrate(c.cal);
    if (c.command == "metrics") return cmd_metrics(c.met);
    return cmd_list(!c.list_no_builtin);
  } catch (const InputError& e) {
    std::cerr << "roofbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "roofbench: internal error: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace cli

}  // namespace roofbench
