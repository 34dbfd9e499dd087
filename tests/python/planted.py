"""Kernels for `python -m roofbench score`'s tests: one honest kernel and one for each trick and each
bad output the scoring mode must catch. Every kernel computes y = 2x + 1 on n float32 values.
"""
import threading
import time

import numpy as np

N = 1 << 20
NAME = "planted/y2x1/fp32"
PARAMS = {"n": N}
BYTES = 8 * N  # x read once, y written once
FLOPS = 2 * N


def make_inputs(seed):
    # NumPy's legacy seeding, which takes 32 bits: the seed of the check after the samples too
    rng = np.random.RandomState(seed)
    return (rng.uniform(-1, 1, N).astype(np.float32),)


def reference(x):
    return (2 * x.astype(np.float64) + 1).astype(np.float32)


def raising_reference(x):
    raise ValueError("the reference fails on purpose")


def honest(x):
    y = np.multiply(x, 2)
    y += 1
    return y


def patches_timers(x):
    # Stops Python's clocks: roofbench's times come from C++, so nothing changes.
    time.perf_counter = lambda: 0.0
    time.monotonic = lambda: 0.0
    time.time = lambda: 0.0
    time.perf_counter_ns = lambda: 0
    return honest(x)


_cache = []


def cached(x):
    # Computes once, then returns the same array every time.
    if not _cache:
        _cache.append(honest(x))
    return _cache[0]


_cache_copy = []


def cached_copy(x):
    # Computes once, then returns a copy of the first answer: right only for the first inputs.
    if not _cache_copy:
        _cache_copy.append(honest(x))
    return _cache_copy[0].copy()


def returns_input(x):
    x *= 2
    x += 1
    return x


class _Lazy:
    """Computes only when someone asks for its values."""

    def __init__(self, x):
        self.x = x

    def __array__(self, dtype=None, copy=None):
        return honest(self.x)


def lazy(x):
    return _Lazy(x)


def other_thread(x):
    # Returns at once; a thread fills the output later.
    y = np.empty_like(x)

    def work():
        time.sleep(0.2)
        y[:] = honest(x)

    threading.Thread(target=work, daemon=True).start()
    return y


def raises(x):
    raise RuntimeError("the kernel fails on purpose")


def wrong_shape(x):
    return honest(x)[:-1]


def wrong_dtype(x):
    return honest(x).astype(np.float64)


def returns_nan(x):
    y = honest(x)
    y[123] = np.nan
    return y


class Tensor:
    """A stand-in for a CUDA torch.Tensor (torch is not installed here): what the harness sees
    of one, its module and type name and is_cuda."""

    __module__ = "torch"
    is_cuda = True
    shape = (N,)
    dtype = "float32"


def gpu_tensor(x):
    return Tensor()
