"""Kernels for `python -m roofbench score`'s tests: one honest kernel and one for each trick and each
bad output the scoring mode must catch. Every kernel computes y = 2x + 1 on n float32 values.
"""
import hashlib
import importlib.util
import json
import os
import sys
import threading
import time
import types

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


def _log(what):
    # The test's window into a trick: a line in $PLANTED_LOG each time the trick fires.
    if os.environ.get("PLANTED_LOG"):
        with open(os.environ["PLANTED_LOG"], "a") as f:
            f.write(what + "\n")


_seen = {}


def first_sight(x):
    # Computes the first time it sees an input, then answers from a cache keyed on the input's
    # bytes: every timed sample of the same inputs is a cache hit. --untrusted's fresh inputs
    # before every sample leave it nothing to hit.
    key = hashlib.sha1(x.tobytes()).digest()
    if key in _seen:
        _log("first_sight: cache hit")
        return _seen[key].copy()
    _seen[key] = honest(x)
    return _seen[key].copy()


# The seeds a run checks with, read from roofbench's documentation: the default seed and the seed
# of the check after the samples (bench/harness.cpp, recheck_seed).
_CHECK_SEEDS = (20261121, 20261121 ^ 0x9E3779B9)
_checked_inputs = [make_inputs(s)[0][:8].copy() for s in _CHECK_SEEDS]


def knows_the_seeds(x):
    # Right on the inputs of the two checks, whose seeds it knows; no work on any other input. The
    # seeds of --untrusted's samples are drawn at random and some samples are checked afterwards.
    if any(np.array_equal(x[:8], c) for c in _checked_inputs):
        return honest(x)
    _log("knows_the_seeds: skipped the work")
    return np.zeros_like(x)


def patches_the_check(x):
    # Rebinds roofbench's check to compare the reference with itself, and returns nothing useful.
    import roofbench._harness as h

    if not getattr(h.host_pairs, "planted", False):
        real = h.host_pairs

        def host_pairs(out, args, reference, device):
            return real(reference(*args), args, reference, device)

        host_pairs.planted = True
        h.host_pairs = host_pairs
    return np.zeros_like(x)


def rewrites_the_reference(x):
    # Swaps the reference's code for its own answer (zeros), and returns zeros.
    reference.__code__ = (lambda x: np.zeros_like(x)).__code__
    return np.zeros_like(x)


def patches_numpy(x):
    # Blinds the check's test for an output that is its input, then works in place.
    np.shares_memory = lambda a, b, max_work=None: False
    return returns_input(x)


def exits_early(x):
    # Prints a line that claims a score, then ends its process with exit code 0.
    claim = {"name": f"{NAME}/n:{N}", "time_s": 1e-9, "roof_pct": 99.0, "verified": True, "implausible": False,
             "error": None, "ok": True}
    os.write(1, (json.dumps(claim) + "\n").encode())
    os._exit(0)


def same_inputs(seed):
    # An inputs function that ignores its seed.
    return make_inputs(1)


def changes_strides(x):
    # Makes its input one value repeated (zero strides), then returns that value's answer
    # broadcast: the reference, run after it on the same input, agrees.
    x.strides = (0,)
    return np.broadcast_to(np.float32(2) * x[0] + np.float32(1), x.shape).copy()


class _SaysNumpy(_Lazy):
    """A lazy result that says it is a numpy array."""

    __module__ = "numpy"
    dtype = np.dtype("float32")
    shape = (N,)
    size = N


def says_it_is_numpy(x):
    return _SaysNumpy(x)


class _Late(np.ndarray):
    """An ndarray subclass, returned unfilled: the first numpy function the check calls on it
    fills it (__array_function__), untimed."""

    def __array_function__(self, func, types, args, kwargs):
        src = getattr(self, "src", None)
        if src is not None:
            self.src = None
            self.view(np.ndarray)[:] = honest(src)
        return func(*(a.view(np.ndarray) if isinstance(a, _Late) else a for a in args), **kwargs)


def late_subclass(x):
    y = np.empty(x.shape, np.float32).view(_Late)
    y.src = x
    return y


def read_only(x):
    # A right answer, read-only: the poison before the next run cannot reach it.
    y = honest(x)
    y.setflags(write=False)
    return y


class _ListThatWorks(list):
    """A list whose __iter__ does the work, when the check takes the outputs out of it."""

    def __iter__(self):
        for y, x in _pending_lists:
            y[:] = honest(x)
        _pending_lists.clear()
        return super().__iter__()


_pending_lists = []


def list_subclass(x):
    y = np.empty_like(x)
    _pending_lists.append((y, x))
    return _ListThatWorks([y])


def strided(x):
    # A right answer, as a view with a stride of two: an array the check cannot hold in C++ would
    # take the Python path, where Python code runs; untrusted, it is refused.
    y = np.empty(2 * x.size, np.float32)[::2]
    y[:] = honest(x)
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
    """A stand-in for a CUDA torch.Tensor where torch is not installed: the type of a stand-in
    torch module's Tensor, which the harness takes as torch's, with is_cuda."""

    __module__ = "torch"
    is_cuda = True
    shape = (N,)
    dtype = "float32"


if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
    _torch = types.ModuleType("torch")
    _torch.Tensor = Tensor
    sys.modules["torch"] = _torch


def gpu_tensor(x):
    return Tensor()
