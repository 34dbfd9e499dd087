"""A kernel's file that declares more than the task (planted.py) asks: four times the bytes, forty
times the FLOPs, a tolerance that passes anything, its own inputs, which it fills with the answers
before anything is timed. `python -m roofbench score`
takes the declarations and the inputs from the reference's file, the task's, so neither counts."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planted  # noqa: E402

N = planted.N
NAME = "planted/claims/fp32"
PARAMS = {"n": N}
BYTES = 4 * planted.BYTES  # claims more bytes than it moves: a share of its roof four times too high
FLOPS = 40 * planted.FLOPS  # would place a memory-bound kernel as compute-bound
GROWTH = 1e30  # a tolerance that would pass anything

_answers = {}


def make_inputs(seed):
    # Computes the answer here, untimed, and keeps it for the kernel.
    (x,) = planted.make_inputs(seed)
    _answers[x[:8].tobytes()] = planted.honest(x)
    return (x,)


def from_stash(x):
    # The answer make_inputs computed; with the task's inputs there is none, and it returns None.
    return _answers.get(x[:8].tobytes())
