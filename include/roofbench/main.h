#pragma once
// The whole `roofbench` command line (run, ceilings, list, report, merge, compare, history, fleet,
// evidence, ab, calibrate, metrics, crosscheck) for a binary of your own: your registered variants
// run beside roofbench's families (or alone with `run --no-builtin`) against the ceilings measured
// in the same run. Returns the process exit code: 0 success, 1 a benchmark failed verification,
// errored or came out above its roof beyond the noise (IMPLAUSIBLE), or compare/history found a
// regression, 2 bad input or usage.
namespace roofbench {
int roofbench_main(int argc, char** argv);
}  // namespace roofbench

// Defines main() as roofbench_main: put ROOFBENCH_MAIN() in one file of your binary.
#define ROOFBENCH_MAIN()                          \
  int main(int argc, char** argv) {               \
    return ::roofbench::roofbench_main(argc, argv); \
  }
