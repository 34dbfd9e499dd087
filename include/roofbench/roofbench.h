#pragma once
// Everything a user's variant file needs on the host, in one include. CUDA variant files also
// include roofbench/cuda.h (error checks, device buffers) and roofbench/device_types.cuh.
#include "roofbench/half.h"         // half_t, bf16_t: host storage of FP16 and BF16
#include "roofbench/host_buffer.h"  // HostBuffer<T>: page-aligned host arrays
#include "roofbench/random.h"       // fill_uniform: inputs that depend on the seed alone
#include "roofbench/types.h"        // Precision, Unit, Level, Params, InputError
#include "roofbench/cpu.h"          // CpuInfo, cpu_info(): the host CPU, for a CPU kernel
#include "roofbench/variant.h"      // Variant, Instance, ROOFBENCH_REGISTER
#include "roofbench/verify.h"       // Verification, Tolerance, Checker, check_all
#include "roofbench/work.h"         // Work, Count: declared FLOPs and bytes
#include "roofbench/waves.h"        // WaveModel
