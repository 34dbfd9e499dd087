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

_answers = []


def fn(x):
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
