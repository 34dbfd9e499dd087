#pragma once
// The `roofbench` command line. Returns the process exit code:
//   0 success, 1 a benchmark failed verification or errored, 2 bad input or usage.
namespace roofbench {
int roofbench_main(int argc, char** argv);
}
