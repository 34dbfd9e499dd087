"""What the C++ harness asks of the Python side of a benchmark (python/module.cpp calls these).

It makes the inputs, poisons the output the callable returned last, and turns an output and its
reference into host arrays of float64 for roofbench's own check. Whatever is wrong with an output
is raised as BadOutput, with one line that says what.
"""

import math

_ARRAY_TYPES = "a numpy.ndarray, a torch.Tensor or a cupy.ndarray (or a tuple of them)"


class BadOutput(Exception):
    """An output (or input) the check cannot take: the message is the benchmark's error."""


def _kind(x):
    """'numpy', 'torch', 'cupy' or None: what kind of array x is."""
    mod = type(x).__module__.split(".")[0]
    if mod == "numpy" and hasattr(x, "dtype") and hasattr(x, "shape"):
        return "numpy"
    if mod == "torch" and type(x).__name__ == "Tensor":
        return "torch"
    if mod == "cupy" and type(x).__name__ == "ndarray":
        return "cupy"
    return None


def _on_gpu(x):
    k = _kind(x)
    return k == "cupy" or (k == "torch" and x.is_cuda)


def _arrays(x):
    """The arrays of an output: one, or each of a tuple or list."""
    return list(x) if isinstance(x, (tuple, list)) else [x]


def make_inputs(inputs, seed, device):
    """The callable's arguments for `seed`: inputs(seed) as a tuple."""
    args = inputs(seed) if callable(inputs) else inputs
    if not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    if device == "cpu":
        for a in args:
            if _on_gpu(a):
                raise BadOutput("an input is a GPU array on a CPU run: run on the GPU (device='cuda:0'), or make "
                                "the inputs on the CPU")
    return args


def _poison_value(kind, a):
    """NaN for floating-point arrays, the largest value of an integer type, True for bool."""
    import numpy as np

    if kind == "torch":
        import torch

        if a.is_floating_point() or a.is_complex():
            return math.nan
        return True if a.dtype == torch.bool else torch.iinfo(a.dtype).max
    if a.dtype.kind in "fc":
        return math.nan
    return True if a.dtype.kind == "b" else np.iinfo(a.dtype).max


def poison(out):
    """NaN (for integers the largest value) into every element of an output the callable
    returned before: a callable that returns the same array again then fails its check."""
    if out is None:
        return
    for a in _arrays(out):
        k = _kind(a)
        try:
            if k == "numpy" and a.flags.writeable and a.size:
                a.fill(_poison_value(k, a))
            elif k == "torch" and a.numel():
                a.fill_(_poison_value(k, a))
            elif k == "cupy" and a.size:
                a.fill(_poison_value(k, a))
        except (ValueError, RuntimeError, TypeError, OverflowError):
            pass  # read-only or a view that refuses: the check on fresh inputs still stands


def _to_host(a, who):
    """A float64 numpy copy of one array, flattened."""
    import numpy as np

    k = _kind(a)
    if k is None:
        raise BadOutput(f"{who} returned {type(a).__module__}.{type(a).__name__}, not an array: return "
                        f"{_ARRAY_TYPES}, computed when the call returns (a lazy object would be timed "
                        f"without its work)")
    if k == "torch":
        a = a.detach().to("cpu")
        if a.is_complex():
            raise BadOutput(f"{who} returned a complex tensor: compare its real and imaginary parts as two outputs")
        a = a.to(dtype=__import__("torch").float64).numpy()
    elif k == "cupy":
        a = a.get()
    if a.dtype.kind == "c":
        raise BadOutput(f"{who} returned a complex array: compare its real and imaginary parts as two outputs")
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1)


def _dtype_name(a):
    return str(a.dtype).replace("torch.", "")


def _shares_memory(out, args):
    """Whether an output is, or overlaps, one of the inputs."""
    for a in args:
        if out is a:
            return True
        ko, ka = _kind(out), _kind(a)
        if ko == ka == "numpy":
            import numpy as np

            if np.shares_memory(out, a):
                return True
        elif ko == ka == "torch" and out.device == a.device and out.numel() and a.numel():
            o0, a0 = out.data_ptr(), a.data_ptr()
            o1 = o0 + out.numel() * out.element_size()
            a1 = a0 + a.numel() * a.element_size()
            if o0 < a1 and a0 < o1:
                return True
    return False


def host_pairs(out, args, reference, device):
    """[(got, expected), ...] as float64 host arrays, one pair per output, after every check an
    output must pass before its values are compared."""
    if reference is None:
        raise BadOutput("no reference: a timing-only benchmark is not checked")
    outs = _arrays(out)
    for o in outs:
        if _kind(o) is not None and device == "cpu" and _on_gpu(o):
            raise BadOutput("the callable returned a GPU array on a CPU run: run on the GPU (device='cuda:0')")
        if _kind(o) is not None and _shares_memory(o, args):
            raise BadOutput("the callable returned its input (or a view of it): return a new array; an in-place "
                            "kernel is checked against inputs it has changed, which proves nothing")
    try:
        ref = reference(*args)
    except BadOutput:
        raise
    except Exception as e:  # the reference's own error, named as such
        raise BadOutput(f"the reference raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    refs = _arrays(ref)
    if len(outs) != len(refs):
        raise BadOutput(f"the callable returned {len(outs)} output(s), the reference {len(refs)}")
    pairs = []
    for i, (o, r) in enumerate(zip(outs, refs)):
        which = "the callable" if len(outs) == 1 else f"the callable's output {i}"
        got = _to_host(o, which)
        want = _to_host(r, "the reference")
        if tuple(o.shape) != tuple(r.shape):
            raise BadOutput(f"{which} has shape {tuple(o.shape)}, the reference's is {tuple(r.shape)}")
        if _dtype_name(o) != _dtype_name(r):
            raise BadOutput(f"{which} has dtype {_dtype_name(o)}, the reference's is {_dtype_name(r)}")
        pairs.append((got, want))
    return pairs
