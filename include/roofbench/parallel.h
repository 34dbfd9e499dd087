#pragma once
// fill_uniform (random.h) and check_all (verify.h) share their loops out over every core with
// OpenMP; the references of a check at 2^28 elements take minutes on one. A file compiled without
// OpenMP runs them on one thread without a word, and nvcc hands -fopenmp to its host compiler
// only when told (-Xcompiler=-fopenmp): roofbench::roofbench tells it, for C++ and CUDA files
// alike. roofbench's own kernels refuse to build without it; a user's file is warned.
#if !defined(_OPENMP)
#if defined(ROOFBENCH_BUILTIN_KERNELS)
#error "roofbench's kernels are compiled with OpenMP, CUDA files too (-Xcompiler=-fopenmp): their checks run on every core"
#else
#warning "roofbench: this file is compiled without OpenMP, so fill_uniform and check_all run on one thread (link roofbench::roofbench with CMake, or pass -fopenmp; with nvcc -Xcompiler=-fopenmp)"
#endif
#endif
