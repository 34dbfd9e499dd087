// The benchmark binary: roofbench's whole command line, with the variants this project
// registers (fused_op_cpu.cpp, fused_op_cuda.cu) beside roofbench's own.
#include <roofbench/main.h>

ROOFBENCH_MAIN()
