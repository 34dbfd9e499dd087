"""The kernels a GPU visit places on the measured roofline from Python (issue 46): PyTorch's
torch.matmul (BF16, 8192³, beside the C++ suite's cuBLAS row of the same run), F.softmax and
F.layer_norm, and Triton's tutorial vector-add, fused-softmax and matmul kernels. Each has inputs
made afresh from a seed, a reference computed in higher precision, and its declared work: the
FLOPs it does and the fewest bytes it must move through DRAM (each tensor read once, each output
written once).

benchmarks(device, small) returns (rb.Benchmark list, the regex of built-in rows to run beside
them, what was left out and why). On the CPU (the dress rehearsal in CI, where neither torch nor
a GPU is) it returns NumPy stand-ins of the same shapes of work, so that tests/python/gpu_visit.py
runs end to end there too; the torch and Triton kernels themselves run only on a GPU visit.
"""
import math

import numpy as np

# The kernels by device, for planning: scripts/gpu-check.sh's python stage estimates its run from
# how many there are before the extension is built or torch imported (roofbench is imported where
# a kernel is made, not here). Each list is what benchmarks() returns there
# (tests/python/test_gpu_visit.sh checks both against this file).
PLANNED = {"cuda": ["torch/matmul/bf16", "torch/softmax/fp16", "torch/layer_norm/fp16", "triton/vector_add/fp32",
                    "triton/fused_softmax/fp32", "triton/matmul/fp16"],
           "cpu": ["numpy/matmul/fp32", "numpy/softmax/fp32", "numpy/vector_add/fp32"]}

# The sizes of a visit, and the small ones of a rehearsal (--small). The CPU's matmul is 256³:
# OpenBLAS reaches a third to seven tenths of the FMA roof there, at 512³ up to nine tenths, where a
# roof measured in a throttled moment of a shared CI runner refused it (162% once).
SIZES = {"matmul_n": 8192, "rows": 32768, "cols": 4096, "vector_n": 1 << 27, "triton_mm_n": 4096}
SMALL = {"matmul_n": 256, "rows": 512, "cols": 1024, "vector_n": 1 << 22, "triton_mm_n": 256}


def _sizes(device, small):
    """A GPU's small matmul is 2048³: the one size of cuBLAS's row in a quick run."""
    if not small:
        return SIZES
    return SMALL if device == "cpu" else dict(SMALL, matmul_n=2048)


def _cuda_generator(seed):
    """torch's generator on the GPU, seeded: the inputs of every check are made afresh from it."""
    import torch

    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return g


def _fp32_matmul_ref(a, b):
    """A matmul's reference: FP32 products and sums (no TF32), rounded once to the output's type."""
    import torch

    allow = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return (a.float() @ b.float()).to(a.dtype)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow


def _torch_benchmarks(s):
    import roofbench as rb
    import torch
    import torch.nn.functional as F

    dev = "cuda"
    gen = _cuda_generator

    n = s["matmul_n"]

    def mm_inputs(seed):
        g = gen(seed)
        # In [0, 1): no cancellation, so the check's tolerance (relative to each entry) holds the
        # sums' rounding (as test_api.py's NumPy matmul does).
        return (torch.rand(n, n, device=dev, dtype=torch.bfloat16, generator=g),
                torch.rand(n, n, device=dev, dtype=torch.bfloat16, generator=g))


    r, c = s["rows"], s["cols"]

    def rows_inputs(seed):
        return (torch.randn(r, c, device=dev, dtype=torch.float16, generator=gen(seed)),)

    def softmax(x):
        return F.softmax(x, dim=-1)

    def softmax_ref(x):
        return F.softmax(x.double(), dim=-1).to(torch.float16)

    def ln_inputs(seed):
        g = gen(seed)
        return (torch.randn(r, c, device=dev, dtype=torch.float16, generator=g),
                torch.rand(c, device=dev, dtype=torch.float16, generator=g) + 0.5,
                torch.randn(c, device=dev, dtype=torch.float16, generator=g))

    def layer_norm(x, w, b):
        return F.layer_norm(x, (c,), w, b)

    def layer_norm_ref(x, w, b):
        return F.layer_norm(x.double(), (c,), w.double(), b.double()).to(torch.float16)

    return [
        rb.Benchmark(torch.matmul, mm_inputs, _fp32_matmul_ref, "torch/matmul/bf16", flops=2 * n**3, bytes=3 * 2 * n * n,
                     params={"M": n, "N": n, "K": n}, unit="tensor", growth=math.sqrt(n)),
        rb.Benchmark(softmax, rows_inputs, softmax_ref, "torch/softmax/fp16", bytes=2 * 2 * r * c,
                     params={"rows": r, "cols": c}, growth=8),
        rb.Benchmark(layer_norm, ln_inputs, layer_norm_ref, "torch/layer_norm/fp16", bytes=2 * 2 * r * c + 2 * 2 * c,
                     params={"rows": r, "cols": c}, growth=8, atol=1e-2),
    ]


# Triton's kernels at module level: @triton.jit resolves the names a kernel uses (tl) among its
# module's globals, not a function's locals.
try:
    import triton
    import triton.language as tl
except ImportError as e:
    triton = None
    _NO_TRITON = str(e)

if triton is not None:
    @triton.jit
    def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        # Triton's tutorial 01, vector add
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def _softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, cols, BLOCK: tl.constexpr):
        # tutorial 02, fused softmax: one program a row, the row held in registers
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * in_stride + offs, mask=offs < cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=offs < cols)

    @triton.jit
    def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
        # tutorial 03, matmul with grouped ordering of the output tiles
        pid = tl.program_id(0)
        npm = tl.cdiv(M, BM)
        npn = tl.cdiv(N, BN)
        width = GROUP * npn
        gid = pid // width
        first = gid * GROUP
        gm = min(npm - first, GROUP)
        pm = first + ((pid % width) % gm)
        pn = (pid % width) // gm
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0),
                         tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0), acc)
            a += BK * sak
            b += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.float16),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))


def _triton_benchmarks(s):
    import roofbench as rb
    import torch

    if triton is None:
        raise ImportError(_NO_TRITON)
    dev = "cuda"
    gen = _cuda_generator

    n = s["vector_n"]

    def add(x, y):
        out = torch.empty_like(x)
        _add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out

    def add_inputs(seed):
        g = gen(seed)
        return torch.rand(n, device=dev, generator=g), torch.rand(n, device=dev, generator=g)

    r, c = s["rows"], s["cols"]

    def fused_softmax(x):
        out = torch.empty_like(x)
        _softmax_kernel[(r,)](out, x, x.stride(0), out.stride(0), c, BLOCK=triton.next_power_of_2(c), num_warps=8)
        return out

    def rows_inputs(seed):
        return (torch.randn(r, c, device=dev, generator=gen(seed)),)

    # The matmul at the tutorial's first configuration for CUDA rather than autotuned: one kernel,
    # the same every run (autotuning would time candidates inside roofbench's check).
    m = s["triton_mm_n"]

    def matmul(a, b):
        out = torch.empty((m, m), device=dev, dtype=torch.float16)
        grid = (triton.cdiv(m, 128) * triton.cdiv(m, 256),)
        _matmul_kernel[grid](a, b, out, m, m, m, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0),
                             out.stride(1), BM=128, BN=256, BK=64, GROUP=8, num_stages=3, num_warps=8)
        return out

    def mm_inputs(seed):
        g = gen(seed)
        return (torch.rand(m, m, device=dev, dtype=torch.float16, generator=g),
                torch.rand(m, m, device=dev, dtype=torch.float16, generator=g))


    return [
        rb.Benchmark(add, add_inputs, lambda x, y: (x.double() + y.double()).float(), "triton/vector_add/fp32",
                     flops=n, bytes=3 * 4 * n, params={"n": n}),
        rb.Benchmark(fused_softmax, rows_inputs, lambda x: torch.softmax(x.double(), dim=-1).float(),
                     "triton/fused_softmax/fp32", bytes=2 * 4 * r * c, params={"rows": r, "cols": c},
                     growth=64),  # tl.exp and the division are the GPU's approximate ones, a few ulp each
        rb.Benchmark(matmul, mm_inputs, _fp32_matmul_ref, "triton/matmul/fp16", flops=2 * m**3, bytes=3 * 2 * m * m,
                     params={"M": m, "N": m, "K": m}, unit="tensor", growth=math.sqrt(m)),
    ]


def _numpy_benchmarks(s):
    """The CPU rehearsal's stand-ins: the same shapes of work through NumPy (FP32: NumPy has no BF16)."""
    import roofbench as rb
    n, r, c, v = s["matmul_n"], s["rows"], s["cols"], s["vector_n"]

    def mm_inputs(seed):
        g = np.random.default_rng(seed)
        return g.random((n, n), dtype=np.float32), g.random((n, n), dtype=np.float32)  # no cancellation

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def softmax_ref(x):
        return softmax(x.astype(np.float64)).astype(np.float32)

    def rows_inputs(seed):
        return (np.random.default_rng(seed).standard_normal((r, c), dtype=np.float32),)

    def vec_inputs(seed):
        g = np.random.default_rng(seed)
        return g.random(v, dtype=np.float32), g.random(v, dtype=np.float32)

    return [
        rb.Benchmark(np.matmul, mm_inputs, lambda a, b: (a.astype(np.float64) @ b).astype(np.float32),
                     "numpy/matmul/fp32", flops=2 * n**3, bytes=3 * 4 * n * n, params={"M": n, "N": n, "K": n},
                     growth=math.sqrt(n)),
        rb.Benchmark(softmax, rows_inputs, softmax_ref, "numpy/softmax/fp32", bytes=2 * 4 * r * c,
                     params={"rows": r, "cols": c}, growth=8),
        rb.Benchmark(np.add, vec_inputs, lambda x, y: (x.astype(np.float64) + y).astype(np.float32),
                     "numpy/vector_add/fp32", flops=v, bytes=3 * 4 * v, params={"n": v}),
    ]


def benchmarks(device, small=False):
    """(benchmarks, builtin regex, [(what, why left out)]) for a run on `device`."""
    s = _sizes(device, small)
    if device == "cpu":
        return _numpy_benchmarks(s), builtin(device, small), [
            ("torch and Triton kernels", "a CPU run: NumPy stand-ins of the same work instead")]
    out, left = [], []
    try:
        out += _torch_benchmarks(s)
    except ImportError as e:
        left.append(("torch kernels", f"no torch here ({e})"))
    try:
        out += _triton_benchmarks(s)
    except ImportError as e:
        left.append(("Triton kernels", f"no triton here ({e})"))
    return out, builtin(device, small), left


def builtin(device, small=False):
    """The regex of the built-in row each run takes beside its kernels: the vendor's matmul of the
    same size (cuBLAS BF16 on a GPU, OpenBLAS FP32 on the CPU), which PAIRS judges against."""
    n = _sizes(device, small)["matmul_n"]
    what = "openblas/fp32" if device == "cpu" else "cublas/bf16"
    return f"^gemm/{what}/M:{n}/N:{n}/K:{n}(/|$)"


# What each kernel is judged against in the same run: torch.matmul within 5% of cuBLAS (and its
# NumPy stand-in against OpenBLAS, which it calls).
PAIRS = {"torch/matmul/bf16": "gemm/cublas/bf16", "numpy/matmul/fp32": "gemm/openblas/fp32"}
