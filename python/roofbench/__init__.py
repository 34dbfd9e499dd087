"""roofbench for Python: any callable (NumPy, PyTorch, Triton, CuPy) timed, checked and placed on
the roofline of the machine it runs on, by the same harness as roofbench's C++ kernels.

    import roofbench as rb
    r = rb.bench(fn, inputs=make_inputs, reference=ref_fn, name="mylib/softmax/fp16",
                 flops=..., bytes=...)
    print(r.roof_pct, r.bound, r.verified)
    rb.run([rb.Benchmark(...), ...]).write("results/")

Each benchmark is a roofbench variant for the length of a run: `inputs(seed)` makes its arguments
afresh, the output it returned last is poisoned, `fn(*args)` is checked against
`reference(*args)` before it is timed and again after on inputs from another seed, then timed with
a cold cache per sample, on the device's own timer (CUDA events on a GPU, never Python's clock),
under the same stop rules, clocks and warnings, placed against the ceilings measured in the same
run and refused when it comes out faster than the machine (IMPLAUSIBLE). The results folder is a
roofbench results folder: `roofbench report`, `compare`, `merge`, `history` and `ab` read it.
docs/python.md has the details.
"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

_PROBE = "ROOFBENCH_OPENBLAS_PROBE"
# The probe's answer, for the Python processes this one starts (`python -m roofbench score` by
# the dozen in a loop): "HOST|CPU MODEL|CHOSEN|BETTER", taken only on the same host and CPU model
# (an environment that travels to another node, as Slurm's does, is asked again).
_PROBED = "ROOFBENCH_OPENBLAS_PROBED"


def _cpu_key():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{platform.node()}|{model}"


def _openblas_cores():
    """(the kernels OpenBLAS chooses here, the core that runs this CPU's ISA when that choice is a
    fallback, else ""), from a child process, or None when there is nothing to ask or it cannot
    tell. OpenBLAS picks its kernels from the CPU model as it loads, and on a VM whose model it does
    not know it falls back to SSE3 ones, several times slower (bench/openblas_core.h). The roofbench
    binary then restarts itself with OPENBLAS_CORETYPE set; a Python process cannot, so its import
    asks a child (this package imported there without this step) first."""
    if (platform.machine() not in ("x86_64", "AMD64") or not sys.executable or getattr(sys, "frozen", False)
            or any(os.environ.get(v) for v in ("OPENBLAS_CORETYPE", "ROOFBENCH_OPENBLAS_FALLBACK", _PROBE))):
        return None
    key = _cpu_key()
    cached = os.environ.get(_PROBED, "").rsplit("|", 2)
    if len(cached) == 3 and cached[0] == key:
        return cached[1], "" if cached[2] == "-" else cached[2]
    # The child imports this very package (its folder first on sys.path, before the working
    # directory's) and prints one line last; anything may print before it.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from roofbench import _roofbench as m; "
            "print(m.openblas_core(), m.openblas_better_core() or '-')")
    try:
        p = subprocess.run([sys.executable, "-c", code, here], env=dict(os.environ, **{_PROBE: "1"}),
                           capture_output=True, text=True, timeout=120)
    except Exception:  # the probe never stops the import: OpenBLAS then chooses as it would
        return None
    lines = p.stdout.strip().splitlines()
    words = lines[-1].split() if lines else []
    if p.returncode != 0 or len(words) != 2:
        return None
    os.environ[_PROBED] = f"{key}|{words[0]}|{words[1]}"
    return words[0], "" if words[1] == "-" else words[1]


_cores = _openblas_cores()
if _cores and _cores[1]:
    # For OpenBLAS's load alone: a library loaded later (NumPy's own OpenBLAS) chooses for itself.
    os.environ["OPENBLAS_CORETYPE"] = _cores[1]
    try:
        from . import _roofbench
    finally:
        del os.environ["OPENBLAS_CORETYPE"]
    if _roofbench.openblas_better_core():
        warnings.warn(f"roofbench: OpenBLAS runs its {_roofbench.openblas_core()} kernels, a fallback on this CPU "
                      "model, and was loaded before roofbench could choose (set OPENBLAS_CORETYPE="
                      f"{_cores[1]} before Python starts): roofbench's OpenBLAS rows run them too")
    else:
        _roofbench.note_openblas_fallback(_cores[0])
else:
    from . import _roofbench
from . import _harness

__all__ = ["Benchmark", "Result", "Run", "bench", "load", "run", "RunError"]

_NAME = re.compile(r"^([a-z0-9_.\-]+)/([a-z0-9_.\-]+)/(fp64|fp32|fp16|bf16)$")
_FILES = ("results.json", "gbench.json", "roofline.svg", "report.html", "summary.md")


class RunError(Exception):
    """A run that wrote no results: bad options or a bad declaration (the message says which)."""


class Benchmark:
    """One callable to measure.

    fn         the kernel: fn(*args) returns its output (an array, or a tuple of arrays)
    inputs     inputs(seed) returns args (a tuple, or one array); called afresh for every check
    reference  reference(*args) returns what fn must return; None: timing only (unchecked, and
               every report says so)
    name       "family/variant/precision", precision one of fp64, fp32, fp16, bf16: the
               precision of its data, which sets the check's tolerance and the roof
    flops, bytes  the work of one call, declared: the fewest bytes it must move between memory
               and the chip, and its floating-point operations (a multiply-add is two). On a
               GPU run with counters=True they may be left out: the bytes and FLOPs CUPTI counts
               for every kernel the callable launched place it (the record says "counted"), and
               where both exist and differ by more than 10% the record warns with both
    params     {"n": 4096}: the problem size, part of the benchmark's name
    level      the memory level its bytes come from: "dram" (default), "l2", "l1"
    unit       "simd" (the CPU), "simt" (a GPU's CUDA cores), "tensor" (its tensor cores);
               default: the device's own
    growth     the check's tolerance: atol + growth x 4 x unit roundoff x |reference| (a K-term
               dot product: about sqrt(K))
    atol       the check's absolute tolerance (default 0)
    compared_with  the "family/variant/precision" of the form this one is a lesson against
    warm       time it warm (no cache flush before a sample)
    """

    def __init__(self, fn, inputs, reference, name, flops=0, bytes=0, params=None, level="dram", unit=None,
                 growth=1.0, atol=0.0, compared_with="", warm=False):
        m = _NAME.match(name or "")
        if not m:
            raise ValueError(f"name {name!r}: expected family/variant/precision, e.g. 'mylib/softmax/fp16' "
                             f"(lower case; precision one of fp64, fp32, fp16, bf16)")
        if not callable(fn):
            raise TypeError(f"{name}: fn is not callable")
        if not callable(inputs):
            raise TypeError(f"{name}: inputs must be a function of the seed, inputs(seed) -> args")
        if reference is not None and not callable(reference):
            raise TypeError(f"{name}: reference must be callable, or None for timing only")
        for what, v in (("flops", flops), ("bytes", bytes)):
            if not isinstance(v, (int, float)) or not v >= 0 or v != v or v == float("inf"):
                raise ValueError(f"{name}: {what} = {v!r}: a number of at least 0")
        self.fn, self.inputs, self.reference = fn, inputs, reference
        self.family, self.variant, self.precision = m.groups()
        self.name = name
        self.flops, self.bytes = float(flops), float(bytes)
        self.params = dict(params or {})
        self.level, self.unit = level, unit
        self.growth, self.atol = float(growth), float(atol)
        self.compared_with, self.warm = compared_with, bool(warm)


class Result:
    """One benchmark of a run, as results.json has it."""

    def __init__(self, record, tampered=None):
        self.record = record
        self.name = record["name"]
        self.verified = bool(record.get("verified"))
        self.error = record.get("error") or tampered
        m = record.get("measurement") or {}
        stats = m.get("stats") or {}
        self.median_s = stats.get("median_s")
        self.rel_iqr = stats.get("rel_iqr")
        self.samples = len(m.get("samples_s") or [])
        p = record.get("placement") or {}
        self.roof_pct = p.get("roof_pct")
        self.bound = p.get("bound")
        self.implausible = bool(p.get("implausible"))
        self.work = p.get("work")  # "declared", or "counted" (by CUPTI: it declared no bytes)
        self.flop_per_s = p.get("flop_per_s")
        self.bytes_per_s = p.get("bytes_per_s")
        self.warnings = list(record.get("warnings") or [])

    @property
    def ok(self):
        """Checked, timed and plausible."""
        return self.verified and not self.error and not self.implausible

    def score(self):
        """The line `python -m roofbench score` prints for it."""
        return {"name": self.name, "time_s": self.median_s, "rel_iqr": self.rel_iqr, "roof_pct": self.roof_pct,
                "bound": self.bound, "work": self.work, "verified": self.verified, "implausible": self.implausible,
                "error": self.error, "ok": self.ok}

    def __repr__(self):
        if self.error:
            return f"<Result {self.name}: FAILED: {self.error}>"
        tag = "IMPLAUSIBLE" if self.implausible else ("verified" if self.verified else "UNVERIFIED")
        pct = "—" if self.roof_pct is None else f"{self.roof_pct:.1f}%"
        return f"<Result {self.name}: {self.median_s:.3g} s, {pct} of its roof ({self.bound}), {tag}>"


class Run:
    """A run's results folder and what it holds."""

    def __init__(self, folder, exit_code, temporary, data=None, tampered=()):
        self.folder, self.exit_code, self._temporary = folder, exit_code, temporary
        if data is None:
            with open(os.path.join(folder, "results.json")) as f:
                data = json.load(f)
        self.data = data
        # What was changed of the code that checks the kernels, found when the run ended (by a
        # thread a kernel left behind, say): every benchmark of the run then fails with it.
        self.tampered = list(tampered)
        why = _tamper_error(self.tampered) if self.tampered else None
        self.results = [Result(b, why) for b in self.data["benchmarks"]]

    def __del__(self):
        if getattr(self, "_temporary", False):
            shutil.rmtree(self.folder, ignore_errors=True)

    def __getitem__(self, name):
        """The result of the benchmark `name` (family/variant/precision, with or without its params)."""
        for r in self.results:
            if r.name == name or r.name.startswith(name + "/"):
                return r
        raise KeyError(f"{name}: not in this run (a failed ceiling, a stopped run?)")

    def write(self, folder):
        """Copies results.json (as stored: compressed, for a loaded one stored so) and the reports
        into `folder` (created; files there are replaced)."""
        os.makedirs(folder, exist_ok=True)
        for f in _FILES + ("results.json.xz", "results.json.gz"):
            src = os.path.join(self.folder, f)
            if os.path.exists(src):
                shutil.copyfile(src, os.path.join(folder, f) + ".tmp")
                os.replace(os.path.join(folder, f) + ".tmp", os.path.join(folder, f))
        return self


def _backend(device):
    if device.startswith("cuda"):
        return "cuda"
    if device == "auto":
        return "cuda" if _roofbench.gpu_count() > 0 else "cpu"
    if device == "cpu":
        return "cpu"
    raise ValueError(f"device {device!r}: expected 'auto', 'cpu' or 'cuda:N'")


def _tamper_error(found):
    more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
    return (f"tampered: {'; '.join(found[:3])}{more}, found when the run ended: the code that checks a kernel was "
            f"changed from inside the process (by a kernel, its file or a thread it started), so no check of this "
            f"run can be trusted")


def run(benchmarks, device="auto", quick=False, out=None, counters=False, seed=None, ceilings_from=None,
        budget=None, min_samples=None, verbose=False, quiet_stdout=False, options=(), builtin=None,
        untrusted=False):
    """Runs the benchmarks in one roofbench run (the ceilings measured first and last, unless
    ceilings_from names a results file of this machine) and returns the Run. `out`: the results
    folder (default: a temporary one; Run.write copies it). `builtin`: a regular expression of
    roofbench's own benchmarks to run beside them, in the same run against the same ceilings
    (say, "^gemm/cublas/bf16/M:8192/" beside a torch.matmul). `untrusted`: kernels nobody has
    read (an optimisation loop's; `python -m roofbench score` sets it): fresh inputs from a random
    seed before every timed sample, samples chosen at random checked after they are timed, and the
    modules of each reference and inputs function sealed beside roofbench's own (docs/python.md).
    Raises RunError when the run wrote no results (bad options; the message is roofbench's)."""
    benchmarks = list(benchmarks)
    if any(not isinstance(b, Benchmark) for b in benchmarks):
        raise TypeError("run() takes Benchmark objects")
    if not benchmarks:
        raise ValueError("run() needs at least one Benchmark")
    names = [b.name for b in benchmarks]
    if len(set(names)) != len(names):
        raise ValueError(f"two benchmarks share a name: {sorted(n for n in names if names.count(n) > 1)}")
    backend = _backend(device)
    for b in benchmarks:
        if not b.bytes and not (counters and backend == "cuda"):
            how = ("or run it with counters=True, and CUPTI counts them" if backend == "cuda" else
                   "counting them needs a GPU: CUPTI, with counters=True")
            raise ValueError(f"{b.name}: declare its work (bytes=, and flops= where it computes), {how}: the "
                             f"roofline places a kernel by the bytes it must move and the FLOPs it does")
    _roofbench.forget()
    try:
        for b in benchmarks:
            unit = b.unit or ("simd" if backend == "cpu" else "simt")
            _roofbench.add(b.family, b.variant, b.precision, b.fn, b.inputs, b.reference, b.params, b.flops, b.bytes,
                           b.level, unit, backend, b.compared_with, b.growth, b.atol, b.warm, untrusted)
        temporary = out is None
        folder = tempfile.mkdtemp(prefix="roofbench-") if temporary else out
        results = os.path.join(folder, "results.json")
        before = os.stat(results).st_mtime_ns if os.path.exists(results) else None
        pattern = "^(" + "|".join(re.escape(b.name) for b in benchmarks) + ")(/|$)"
        args = ["run", "--device", device if device != "auto" else backend + (":0" if backend == "cuda" else ""),
                "--filter", pattern + (f"|{builtin}" if builtin else ""), "--out", folder]
        if not builtin:
            args.insert(1, "--no-builtin")
        if quick:
            args.append("--quick")
        if counters:
            args.append("--counters")
        if untrusted:
            args.append("--untrusted")
        if seed is not None:
            args += ["--seed", str(seed)]
        if ceilings_from:
            args += ["--ceilings-from", str(ceilings_from)]
        if budget is not None:
            args += ["--budget", str(budget)]
        if min_samples is not None:
            args += ["--min-samples", str(min_samples)]
        if verbose:
            args.append("--verbose")
        args += list(options)
        if untrusted:
            _roofbench.count_threads_from_here()
        _roofbench.bind_array_types(_harness._exact_types_now())  # unless the score command pinned them
        code = _roofbench.main(args, quiet_stdout)
    finally:
        _roofbench.forget()
    # 0 and 1 write results; 128 + a signal writes what finished, marked partial; 2 (bad input)
    # writes nothing, and a results.json there is an earlier run's.
    written = os.path.exists(results) and os.stat(results).st_mtime_ns != before
    if code not in (0, 1) and code < 128 or not written:
        raise RunError(f"roofbench run exited {code} and wrote no results (its message is above)")
    found = _roofbench.tampered()
    if untrusted and _roofbench.code_that_could_run():
        found.append(_roofbench.code_that_could_run())
    return Run(folder, code, temporary, tampered=found)


def load(path):
    """The Run of an earlier results file: results.json, or stored compressed (results.json.xz,
    .json.gz, as committed baselines and CI artifacts are), or the folder that holds one. Read by
    the reader every roofbench command uses; ValueError with its one line when it refuses the
    file. Its exit_code is None: no run was made here."""
    path, text = _roofbench.results_text(os.fspath(path))
    return Run(os.path.dirname(path) or ".", None, False, data=json.loads(text))


def bench(fn, inputs, reference=None, name=None, flops=0, bytes=0, **options):
    """One callable in a run of its own: Benchmark(fn, inputs, reference, name, flops, bytes,
    ...) and run(...)'s options; returns its Result."""
    keys = ("params", "level", "unit", "growth", "atol", "compared_with", "warm")
    decl = {k: options.pop(k) for k in keys if k in options}
    b = Benchmark(fn, inputs, reference, name, flops=flops, bytes=bytes, **decl)
    return run([b], **options)[b.name]


def seal_libraries():
    """Seals the array libraries already imported, every module of them (numpy, torch, cupy), and
    torch's Tensor: `python -m roofbench score` calls it once the reference's file is loaded and
    before any kernel's file is, so that a kernel that rebinds torch.Tensor.detach, F.softmax or a
    numpy internal is found."""
    # Every module of numpy, torch and cupy loaded by now: a callable or module rebound in any of
    # them (numpy.random.mtrand's generator, an internal that np.array_equal calls, np.random
    # itself) is found; and their entries in sys.modules, where the check takes them from.
    libs = [name for name in sorted(sys.modules) if name.split(".")[0] in ("numpy", "torch", "cupy")
            and type(sys.modules[name]).__name__ == "module"]
    for name in libs:
        _roofbench.seal(sys.modules[name], name, False)
    _roofbench.seal(sys.modules, "sys.modules", True, names=libs)
    # And the modules their code calls (operator, functools: numpy.random's seeding calls
    # operator.index), a callable rebound there.
    seen = set(libs)
    for name in libs:
        for v in list(vars(sys.modules[name]).values()):
            if type(v).__name__ == "module" and getattr(v, "__name__", None) not in seen:
                seen.add(v.__name__)
                _roofbench.seal(v, v.__name__, False)
    # The array types a check takes, from now on these alone (a torch that appears later in
    # sys.modules, a kernel's own, is no array library of the check's).
    _roofbench.bind_array_types(_harness._exact_types_now(), True)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(getattr(torch, "nn", None), "Parameter"):
        _roofbench.seal(torch.nn.Parameter, "torch.nn.Parameter", True)
    if "torch" in sys.modules and hasattr(sys.modules["torch"], "Tensor"):
        _roofbench.seal(sys.modules["torch"].Tensor, "torch.Tensor", True)


def _seal_own():
    # What checks a kernel and what reports it: roofbench's own modules and classes, any change;
    # the libraries the check and the report use, a callable rebound or removed (docs/python.md).
    import builtins

    _roofbench.seal(sys.modules[__name__], "roofbench", True)
    _roofbench.seal(_harness, "roofbench._harness", True)
    for c in (Benchmark, Result, Run, _harness.BadOutput):
        _roofbench.seal(c, f"roofbench.{c.__name__}", True)
    # The table the check takes the array libraries from (a dict subclass there would run code).
    _roofbench.seal(sys, "sys", True, names=["modules"])
    # Every builtin function and type, but those a session swaps (a notebook's input, on every
    # cell) and the site's helpers.
    _roofbench.seal(builtins, "builtins", names=[
        n for n, v in vars(builtins).items()
        if callable(v) and n not in ("_", "input", "breakpoint", "help", "exit", "quit", "copyright", "credits",
                                     "license", "display", "get_ipython")])
    _roofbench.seal(json, "json")
    try:
        import numpy
    except ImportError:
        _roofbench.bind(_harness, None)
        return
    # The check's functions and the array type it holds in C++, bound now, before any kernel's file.
    _roofbench.bind(_harness, numpy.ndarray)
    import numpy.random  # noqa: F401 (numpy loads it lazily: in numpy's namespace before it is sealed)

    _roofbench.seal(numpy, "numpy")
    _roofbench.seal(numpy.random, "numpy.random")  # where inputs functions draw from


_seal_own()
