"""Kernels that reach into the check from around it, each in a run of its own: the one named by
$PLANTED_TRICK is set up when this file is imported, as a kernel's file would. Each was a working
bypass of the scoring mode found by a red team (the work skipped, a sleep then bringing the time
under the roof): found by what `python -m roofbench score` now refuses. The task is planted.py's."""
import os
import sys
import threading
import time

import numpy as np

TRICK = os.environ.get("PLANTED_TRICK", "")


def _answer(x):
    return (2 * x.astype(np.float64) + 1).astype(np.float32)


# profile_check: no work in the call; a profile hook fills the output when the check is called.
_pending = []
# profile_prepare: a profile hook computes the answer as the inputs are made, untimed.
_ready = {}


def _profile(frame, event, arg):
    name, file = frame.f_code.co_name, frame.f_code.co_filename
    if TRICK == "profile_check" and event == "call" and name == "host_pairs" and _pending:
        x, y = _pending.pop()
        y[:] = _answer(x)
    if TRICK == "profile_prepare" and event == "return" and name == "make_inputs" and "_harness" in file:
        if isinstance(arg, tuple) and len(arg) == 1 and isinstance(arg[0], np.ndarray):
            _ready[id(arg[0])] = (arg[0], _answer(arg[0]))
    if TRICK == "transient_swap" and event == "call" and name == "poison" and "_harness" in file:
        # Swaps the harness's make_inputs for one that ignores the seed and puts the real one back
        # before it returns: sealed code that is only ever changed between two checks.
        g = frame.f_globals
        real = g["make_inputs"]
        if not getattr(real, "fake", False):
            def make_inputs(inputs, seed, device):
                g["make_inputs"] = real
                return real(inputs, 7, device)

            make_inputs.fake = True
            g["make_inputs"] = make_inputs


if TRICK in ("profile_check", "profile_prepare", "transient_swap"):
    sys.setprofile(_profile)

if TRICK == "same_random":
    # Every seed gives the same inputs, and one answer is right for all of them.
    _RandomState = np.random.RandomState

    class _Same(_RandomState):
        def __init__(self, seed=None):
            super().__init__(12345)

    np.random.RandomState = _Same

if TRICK == "shrink_task":
    # The task's N (an int, not a function) cut to a quarter: a quarter of the work checked, the
    # task's BYTES still declared.
    for m in list(sys.modules.values()):
        if getattr(m, "__name__", "").startswith("_roofbench_score_planted") and hasattr(m, "N"):
            m.N //= 4

# spec_hook: sys.__spec__ swapped for an object whose _initializing property runs code: every
# import of a module already loaded reads it, as the Python side of the check once did.
# signal_timer: a Python signal handler, and a timer armed as the kernel returns: the handler runs
# at the next bytecode, inside the check. gc_callback: a collector callback, run at an allocation.
# Each fills, or computes, what the kernel skipped.
_fill = []


def _fill_pending(*_):
    while _fill:
        x, y = _fill.pop()
        y[:] = _answer(x)


if TRICK == "spec_hook":
    class _Spec:
        def __init__(self, real):
            object.__setattr__(self, "_real", real)

        @property
        def _initializing(self):
            _fill_pending()
            return False

        def __getattr__(self, k):
            return getattr(self._real, k)

    sys.__spec__ = _Spec(sys.__spec__)

if TRICK == "signal_timer":
    import signal

    signal.signal(signal.SIGALRM, _fill_pending)

if TRICK == "gc_callback":
    import gc

    gc.callbacks.append(_fill_pending)
    gc.set_threshold(1, 1000000, 1000000)

if TRICK == "numpy_internal":
    # The module where numpy.array_equal is defined (numpy._core.numeric in numpy 2) gets a copy
    # that always agrees: an internal of numpy's, not its namespace.
    _real_equal = np.array_equal
    for _m in list(sys.modules.values()):
        if getattr(_m, "__name__", "").startswith("numpy.") and getattr(_m, "array_equal", None) is _real_equal:
            _m.array_equal = lambda *a, **k: True

if TRICK == "killed_after":
    # Honest work; the process is killed as it exits, after the worker printed its line.
    import atexit
    import signal

    atexit.register(lambda: os.kill(os.getpid(), signal.SIGKILL))

# Found by a third round:
# property_added: a callable property subclass added to numpy's namespace; comparing the seals once
# took each callable's fingerprint, which ran its fget (the fill). Now only the names sealed are.
# finalizer_swap: the output's finalizer, run as prepare drops it, rebinds RandomState to one that
# ignores its seed and puts itself back as it is made. numpy_swapped: sys.modules["numpy"] a copy
# of numpy of the kernel's. random_module_swapped: numpy.random itself rebound to a copy.
if TRICK == "property_added":
    class _Fill(property):
        def __call__(self, *a):
            pass

        @property
        def fget(self):
            _fill_pending()

    np.zz_fill = _Fill()

if TRICK == "finalizer_swap":
    import weakref

    _RealRandomState = np.random.RandomState

    class _SameSeed(_RealRandomState):
        def __init__(self, seed=None):
            np.random.RandomState = _RealRandomState  # back at once
            super().__init__(12345)

if TRICK in ("numpy_swapped", "random_module_swapped"):
    import types

    _copy = types.ModuleType("numpy.random" if TRICK == "random_module_swapped" else "numpy")
    _copy.__dict__.update((np.random if TRICK == "random_module_swapped" else np).__dict__)
    if TRICK == "numpy_swapped":
        sys.modules["numpy"] = _copy
    else:
        np.random = _copy

# Found by a fourth round:
# str_key: a key of json's namespace swapped for a str subclass whose __eq__ runs at every lookup.
# operator_index: operator.index rebound (numpy.random's seeding calls it, with each seed).
# late_library: an object put at sys.modules["cupy"] after the task loaded, whose __getattr__ ran
# when the check looked up the array types there. options: the score command's options, reached
# through the frames, turned --trusted.
if TRICK == "str_key":
    import json

    class _Key(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            _fill_pending()
            return str.__eq__(self, other)

    json.__dict__[_Key("dumps")] = json.__dict__.pop("dumps")

if TRICK == "operator_index":
    import operator

    _real_index = operator.index
    operator.index = lambda v: _real_index(v)

if TRICK == "late_library":
    class _Lib:
        def __getattr__(self, name):
            _fill_pending()
            raise AttributeError(name)

    sys.modules["cupy"] = _Lib()

if TRICK == "options":
    _f = sys._getframe(0)
    while _f is not None:
        if _f.f_code.co_name == "score" and "a" in _f.f_locals:
            _f.f_locals["a"].trusted = True
            break
        _f = _f.f_back

_answers = []


def fn(x):
    if TRICK == "property_added":
        y = np.empty_like(x)
        _fill.append((x, y))
        return y
    if TRICK == "finalizer_swap":
        y = _answer(x)
        weakref.finalize(y, setattr, np.random, "RandomState", _SameSeed)
        return y
    if TRICK in ("spec_hook", "signal_timer", "gc_callback", "str_key", "late_library"):
        y = np.empty_like(x)
        _fill.append((x, y))
        if TRICK == "signal_timer":
            signal.setitimer(signal.ITIMER_REAL, 5e-6)
        return y
    if TRICK == "profile_check":
        y = np.empty_like(x)
        _pending.append((x, y))
        return y
    if TRICK == "profile_prepare":
        e = _ready.pop(id(x), None)
        return e[1].copy() if e is not None and e[0] is x else _answer(x)
    if TRICK == "same_random":
        if not _answers:
            _answers.append(_answer(x))
        return _answers[0].copy()
    if TRICK == "polling_thread":
        # A thread that watches for the check's frame and fills the output from there.
        y = np.empty_like(x)

        def fill():
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                if any(f.f_code.co_name == "host_pairs" for f in sys._current_frames().values()):
                    y[:] = _answer(x)
                    return
                time.sleep(0)

        threading.Thread(target=fill, daemon=True).start()
        return y
    return _answer(x)
