"""What the C++ harness asks of the Python side of a benchmark (python/module.cpp calls these).

It makes the inputs, poisons the output the callable returned last, and turns an output and its
reference into host arrays of float64 for roofbench's own check. Whatever is wrong with an output
is raised as BadOutput, with one line that says what.
"""

import hashlib
import math
import sys

from . import _roofbench

# No function here imports anything: an import, even of a module already loaded, runs Python code
# that a kernel could have put on its way (a module's __spec__). The array libraries are taken
# from sys.modules, whose entry roofbench seals.


def _lib(name):
    return sys.modules.get(name)


def _exact_types_now():
    """[(type, kind)] of the array libraries loaded now, for roofbench to bind (bind_array_types)."""
    return [(t, k) for t, k in _exact_types().items()]

_ARRAY_TYPES = "a numpy.ndarray, a torch.Tensor or a cupy.ndarray (or a tuple of them)"


class BadOutput(Exception):
    """An output (or input) the check cannot take: the message is the benchmark's error."""


def _exact_types():
    """{type: kind} of the array types taken as they are, from the libraries this process has
    loaded (sys.modules: a module is never imported here on a kernel's behalf)."""
    types = {}
    if "numpy" in sys.modules:
        types[sys.modules["numpy"].ndarray] = "numpy"
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "Tensor"):
        types[torch.Tensor] = "torch"
        nn = getattr(torch, "nn", None)
        if nn is not None and hasattr(nn, "Parameter"):
            types[nn.Parameter] = "torch"
    cupy = sys.modules.get("cupy")
    if cupy is not None and hasattr(cupy, "ndarray"):
        types[cupy.ndarray] = "cupy"
    return types


def _kind(x):
    """'numpy', 'torch', 'cupy' or None: what kind of array x is. The type itself, not a subclass
    and not a name (an object that says it comes from numpy, or a subclass whose methods run when
    the check reads it, could do its work there, untimed), of the types bound before the kernels'
    files ran: never looked up in sys.modules during a check."""
    return _roofbench.array_kind(x)


def _not_an_array(x, who):
    kind = _roofbench.array_kind_of_subclass(x)
    if kind is not None:
        return BadOutput(f"{who} returned {type(x).__module__}.{type(x).__qualname__}, a subclass of {kind}'s "
                         f"array type: return the array type itself (.view(numpy.ndarray), "
                         f".as_subclass(torch.Tensor)): a subclass's methods would run inside the check")
    return BadOutput(f"{who} returned {type(x).__module__}.{type(x).__name__}, not an array: return "
                     f"{_ARRAY_TYPES}, computed when the call returns (a lazy object would be timed "
                     f"without its work)")


def _on_gpu(x):
    k = _kind(x)
    return k == "cupy" or (k == "torch" and x.is_cuda)


def _arrays(x):
    """The arrays of an output: one, or each of a tuple or list (the types themselves: a subclass's
    __iter__ would run inside the check)."""
    return list(x) if type(x) in (tuple, list) else [x]


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
    np = _lib("numpy")
    if kind == "torch":
        torch = _lib("torch")
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
        except (ValueError, RuntimeError, TypeError, OverflowError, AttributeError):
            pass  # a view that refuses: the check on fresh inputs still stands (read-only: refused by the check)


def _to_host(a, who):
    """A float64 numpy copy of one array, flattened."""
    np = _lib("numpy")
    k = _kind(a)
    if k is None:
        raise _not_an_array(a, who)
    if k == "torch":
        a = a.detach().to("cpu")
        if a.is_complex():
            raise BadOutput(f"{who} returned a complex tensor: compare its real and imaginary parts as two outputs")
        a = a.to(dtype=_lib("torch").float64).numpy()
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
            if _lib("numpy").may_share_memory(out, a):  # their memory's bounds: quick, and never too hard to solve
                return True
        elif ko == ka == "torch" and out.device == a.device and out.numel() and a.numel():
            o0, a0 = out.data_ptr(), a.data_ptr()
            o1 = o0 + out.numel() * out.element_size()
            a1 = a0 + a.numel() * a.element_size()
            if o0 < a1 and a0 < o1:
                return True
    return False


def _copy(a):
    k = _kind(a)
    T = type(a)
    if k == "torch":
        return T.clone(T.detach(a))
    return T.copy(a)


def _meta(a):
    """What identifies an array apart from its values: its type, shape, strides, dtype, memory."""
    k = _kind(a)
    if k == "torch":
        T = type(a)
        return (k, tuple(a.shape), tuple(T.stride(a)), str(a.dtype), T.data_ptr(a), str(a.device))
    if k == "cupy":
        return (k, a.shape, a.strides, str(a.dtype), a.data.ptr)
    if k == "numpy":
        return (k, a.shape, a.strides, str(a.dtype), a.__array_interface__["data"][0])
    return (None, id(a))


def snapshot(args):
    """The inputs as prepare made them: each array's identity and a copy of its values (--untrusted:
    the check then refuses a kernel that changed its inputs, against which the reference would
    agree with anything it likes)."""
    return [(a, _meta(a), _copy(a) if _kind(a) else None) for a in args]


def _equal(a, b):
    k = _kind(a)
    if k == "torch":
        torch = _lib("torch")
        return bool(torch.equal(a, b)) or bool(torch.equal(a.isnan(), b.isnan()) and torch.equal(
            a.nan_to_num(), b.nan_to_num()))
    np = _lib("numpy")
    if k == "cupy":
        return bool(_lib("cupy").array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _unchanged(snap):
    for i, (a, meta, copy) in enumerate(snap):
        what = f"input {i}"
        if _meta(a) != meta:
            raise BadOutput(f"the callable changed {what} (its shape, strides, dtype or memory): the check would "
                            f"compare against a reference of inputs it chose")
        if copy is not None and not _equal(a, copy):
            raise BadOutput(f"the callable changed the values of {what}: the check would compare against a "
                            f"reference of inputs it chose")


def fingerprint(args):
    """A digest of the inputs' values: --untrusted refuses two seeds that give the same inputs
    (an inputs function that ignores its seed, or one made to, would let a cache of answers hit)."""
    h = hashlib.blake2b(digest_size=16)
    for a in args:
        k = _kind(a)
        if k == "numpy":
            h.update(_lib("numpy").ascontiguousarray(a).tobytes())
        elif k == "torch":
            flat = a.detach().reshape(-1)
            step = max(1, flat.numel() // 65536)  # a sample of a device array, not all of it
            h.update(flat[::step].to("cpu").contiguous().view(_lib("torch").uint8).numpy().tobytes())
        elif k == "cupy":
            flat = a.reshape(-1)
            h.update(flat[::max(1, flat.size // 65536)].get().tobytes())
        else:
            h.update(repr(a).encode())
    return h.hexdigest()


def host_pairs(out, args, reference, device, snap=None, copy_first=False):
    """[(got, expected), ...] as float64 host arrays, one pair per output, after every check an
    output must pass before its values are compared. `snap` (snapshot's, --untrusted): the outputs
    are copied before anything else runs, and the inputs must be as prepare made them."""
    if reference is None:
        raise BadOutput("no reference: a timing-only benchmark is not checked")
    outs = _arrays(out)
    for o in outs:
        if _kind(o) is None:
            raise _not_an_array(o, "the callable")
        if device == "cpu" and _on_gpu(o):
            raise BadOutput("the callable returned a GPU array on a CPU run: run on the GPU (device='cuda:0')")
    got_values = [_copy(o) for o in outs] if copy_first or snap is not None else outs
    for o in outs:
        if _shares_memory(o, args):
            raise BadOutput("the callable returned its input (or a view of it): return a new array; an in-place "
                            "kernel is checked against inputs it has changed, which proves nothing")
        if _kind(o) == "numpy" and not o.flags.writeable:
            raise BadOutput("the callable returned a read-only array: the harness poisons every output before the "
                            "next run, and a read-only one could be returned again unseen; return a writeable array")
    if snap is not None:
        _unchanged(snap)
    try:
        ref = reference(*args)
    except BadOutput:
        raise
    except Exception as e:  # the reference's own error, named as such
        raise BadOutput(f"the reference raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    if snap is not None:
        _unchanged(snap)  # the reference saw what prepare made
    refs = _arrays(ref)
    if len(outs) != len(refs):
        raise BadOutput(f"the callable returned {len(outs)} output(s), the reference {len(refs)}")
    pairs = []
    for i, (o, r) in enumerate(zip(got_values, refs)):
        which = "the callable" if len(outs) == 1 else f"the callable's output {i}"
        got = _to_host(o, which)
        want = _to_host(r, "the reference")
        if tuple(o.shape) != tuple(r.shape):
            raise BadOutput(f"{which} has shape {tuple(o.shape)}, the reference's is {tuple(r.shape)}")
        if _dtype_name(o) != _dtype_name(r):
            raise BadOutput(f"{which} has dtype {_dtype_name(o)}, the reference's is {_dtype_name(r)}")
        pairs.append((got, want))
    return pairs
