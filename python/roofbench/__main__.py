"""python -m roofbench score: a kernel's score against the measured speed of light, for a person or
an automated optimisation loop.

    python -m roofbench score FILE.py::fn --reference FILE.py::ref --inputs FILE.py::make_inputs \\
        --name mylib/op/fp32 --flops N --bytes N [--device auto|cpu|cuda:N] [--quick] [--counters] \\
        [--ceilings-from RESULTS] [--out DIR]

FILE.py::fn names a callable in a Python file. The task is the reference's file: --inputs defaults
to its `make_inputs`, and --flops, --bytes, --name, --params (JSON) and --growth to its FLOPS,
BYTES, NAME, PARAMS and GROWTH; only what it lacks (or, with no --reference, everything) comes from
the kernel's file, so a kernel cannot declare more work than the task asks, nor make its inputs.
Several kernels: repeat the positional argument (each with the same inputs and reference).

Prints one JSON line per kernel on stdout: name, time_s, rel_iqr, roof_pct, bound, work (whose
work placed it: "declared", or "counted" by CUPTI with --counters on a GPU), verified, implausible,
error, ok; roofbench's console goes to stderr. Exit 0 when every kernel is checked and
plausible, 1 when one is wrong or implausible (or failed), 2 on bad input (one line on stderr).

Its times are roofbench's own, from C++ (a steady clock around each call on the CPU, CUDA events
on a GPU): a kernel that patches Python's timers changes nothing. The run is --untrusted (--trusted
turns it off): fresh inputs from a random seed before every timed sample, so a cache of results
never hits, and samples chosen at random checked after they are timed. A kernel that returns a
cached output fails the check made after the timed samples on fresh inputs; one that returns its
input, or no array, or leaves its work for later, fails its check; one that changes the code that
checks it (roofbench's, the reference's module, numpy's, torch's) is "tampered"; one that runs
faster than the machine can is IMPLAUSIBLE.
"""

import argparse
import collections
import contextlib
import importlib.util
import json
import os
import sys


def _load(spec, what):
    if "::" not in spec:
        raise SystemExit(f"roofbench score: {what} {spec!r}: expected FILE.py::name")
    path, name = spec.rsplit("::", 1)
    if not os.path.isfile(path):
        raise SystemExit(f"roofbench score: {what} {spec!r}: no file {path}")
    # One name per file: two files of one name (the task's planted.py, a kernel's planted.py) are
    # two modules.
    full = os.path.abspath(path)
    digest = __import__("hashlib").sha1(full.encode()).hexdigest()[:8]
    mod_name = f"_roofbench_score_{os.path.splitext(os.path.basename(path))[0]}_{digest}"
    mod = sys.modules.get(mod_name)
    if mod is None:
        s = importlib.util.spec_from_file_location(mod_name, os.path.abspath(path))
        mod = importlib.util.module_from_spec(s)
        sys.modules[mod_name] = mod
        try:
            s.loader.exec_module(mod)
        except Exception as e:  # the file's own error: one line
            raise SystemExit(f"roofbench score: {path} raised {type(e).__name__} on import: {e}")
    if not hasattr(mod, name):
        raise SystemExit(f"roofbench score: {path} has no {name!r}")
    return mod, getattr(mod, name)


def _roofbench_seal_self():
    # This module reports the scores: sealed like roofbench's own, before any kernel's file runs.
    from roofbench import _roofbench

    _roofbench.seal(sys.modules[__name__], "roofbench's score command", True)


def _judge(argv, a):
    """The process that prints the scores and chooses the exit code. It never runs a kernel's file:
    a worker process (this command again, --worker) does, and writes results.json from C++. A
    kernel that ends its process early (os._exit(0)), or prints a line of its own, then changes
    nothing here: each line printed is the results file's record, and a kernel the file does not
    hold as finished is not ok."""
    import subprocess
    import tempfile

    import roofbench as rb

    folder = a.out or tempfile.mkdtemp(prefix="roofbench-score-")
    results = os.path.join(folder, "results.json")
    before = os.stat(results).st_mtime_ns if os.path.exists(results) else None
    try:
        p = subprocess.run([sys.executable, "-m", "roofbench", "score", "--worker", *argv, "--out", folder],
                           stdout=subprocess.PIPE, text=True, errors="replace")
        if p.returncode == 2:
            return 2  # bad input: its one line is on stderr already
        # The worker's lines, by name: only what they add is taken (a kernel found tampered when
        # the run ended); a line a kernel printed itself can make a score worse, never better.
        claimed = {}
        for line in p.stdout.splitlines():
            try:
                c = json.loads(line)
            except ValueError:
                continue
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                claimed.setdefault(c["name"], []).append(c)
        written = os.path.exists(results) and os.stat(results).st_mtime_ns != before
        ended = f"the scoring process ended with exit {p.returncode}"
        try:
            run = rb.load(folder) if written else None
        except ValueError as e:  # a results file the reader refuses: nothing in it counts
            run, ended = None, f"{ended}; its results file was refused: {e}"
        finished = run is not None and not run.data.get("partial")
        if run is not None and not finished:
            ended += ", before its run finished"
        ok = p.returncode in (0, 1) and finished
        if not ok:  # every line says so, not only the exit code
            finished = False
        # The run as asked for: untrusted unless --trusted, every kernel's samples on fresh inputs
        # and spot-checked (a kernel that reached the worker's options could have turned it off).
        asked = not a.trusted
        settings_ok = run is None or not asked or (run.data.get("settings") or {}).get("untrusted") is True
        records = run.results if run is not None else []
        for r in records:
            out = r.score()
            u = (r.record.get("measurement") or {}).get("untrusted") or {}
            if out["ok"] and asked and not (settings_ok and u.get("fresh_inputs") is True
                                            and u.get("spot_checks", 0) >= min(2, r.samples)):
                out["ok"] = False
                out["error"] = ("not ok: the worker's run was not untrusted as asked (no fresh inputs or spot checks "
                                "recorded): its options were changed from inside it")
            lines = claimed.get(r.name, [])
            worse = next((c for c in lines if c.get("ok") is not True), None)
            if out["ok"] and (worse is not None or not lines or not finished):
                out["ok"] = False
                out["error"] = (worse or {}).get("error") or f"not ok: {ended}"
            ok = ok and out["ok"]
            print(json.dumps(out), flush=True)
        for k in a.kernels[len(records):]:  # not in the file: the run ended before them
            ok = False
            print(json.dumps({"name": k, "error": f"not measured: {ended}", "ok": False}), flush=True)
        return 0 if ok else 1
    finally:
        if not a.out:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def score(argv):
    p = argparse.ArgumentParser(prog="python -m roofbench score", description=__doc__.split("\n\n")[0])
    p.add_argument("kernels", nargs="+", help="FILE.py::fn, one or more")
    p.add_argument("--reference", help="FILE.py::ref (none: timing only, and never ok)")
    p.add_argument("--inputs", help="FILE.py::make_inputs (default: make_inputs in the reference's file, else the kernel's)")
    p.add_argument("--name", help="family/variant/precision (default: NAME in the reference's file, else the kernel's, else score/<fn>/fp32)")
    p.add_argument("--flops", type=float, help="FLOPs of one call (default: FLOPS in the reference's file, else the kernel's)")
    p.add_argument("--bytes", type=float, help="bytes one call must move (default: BYTES in the reference's file, else the kernel's)")
    p.add_argument("--params", help='the problem size as JSON, e.g. \'{"n": 4096}\'')
    p.add_argument("--growth", type=float, default=None, help="the check's growth factor (default 1)")
    p.add_argument("--device", default="auto")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--counters", action="store_true",
                   help="count each kernel's bytes and FLOPs with CUPTI (a GPU): they place a kernel that declares none")
    p.add_argument("--ceilings-from", help="a results file of this machine whose ceilings to use")
    p.add_argument("--out", help="keep the results folder here")
    p.add_argument("--skip", help="roofbench run --skip: ceilings left out (a REGEX over their names)")
    p.add_argument("--seed", type=int)
    p.add_argument("--trusted", action="store_true",
                   help="kernels you have read: the same inputs for every timed sample and no spot checks (faster)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if not a.worker:
        return _judge(argv, a)
    # The options, frozen before any kernel's file runs: a kernel that walks the frames up to here
    # may not turn the run --trusted or loosen its tolerance (the judge checks the file besides).
    a.kernels = tuple(a.kernels)
    a = collections.namedtuple("Options", vars(a))(**vars(a))
    stdout = sys.stdout  # taken before any kernel's file runs: the JSON lines go here

    import roofbench as rb

    _roofbench_seal_self()
    # The task first: the reference's file, its declarations and the libraries it imports, sealed
    # before any kernel's file runs.
    task, ref = _load(a.reference, "--reference") if a.reference else (None, None)
    inputs_mod, given_inputs = _load(a.inputs, "--inputs") if a.inputs else (None, None)
    rb.seal_libraries()
    # The task's files, every name in them, as they are before any kernel's file runs (a kernel
    # that cuts the task's N is found); not a file a kernel is defined in too, whose state is the
    # kernel's to change.
    kernel_files = {os.path.abspath(k.rsplit("::", 1)[0]) for k in a.kernels if "::" in k}
    if not a.trusted:
        for mod, what in ((task, "the reference's module"), (inputs_mod, "the inputs function's module")):
            if mod is None or os.path.abspath(mod.__file__) in kernel_files:
                continue
            rb._roofbench.seal(vars(mod), f"{what} {os.path.basename(mod.__file__)}", True)
            # The modules its code reaches by name (math, a helper package): a callable rebound there.
            for name, v in vars(mod).items():
                if type(v).__name__ == "module":
                    rb._roofbench.seal(v, getattr(v, "__name__", name), False)
    if not a.trusted:  # the threads from here on are a kernel's
        rb._roofbench.count_threads_from_here(pin=True)

    def declared(mod, key, default=None):
        # With a reference, the task's file alone: a kernel's file declares nothing (a GROWTH that
        # would pass anything, FLOPS that make a memory-bound kernel look compute-bound).
        m = task if task is not None else mod
        return getattr(m, key, default)

    benchmarks = []
    for k in a.kernels:
        mod, fn = _load(k, "kernel")
        inputs = given_inputs or declared(mod, "make_inputs")
        if inputs is None:
            raise SystemExit(f"roofbench score: {k}: no --inputs and no make_inputs in the reference's file or its own")
        name = a.name or declared(mod, "NAME") or f"score/{fn.__name__.lower()}/fp32"
        try:
            if len(a.kernels) > 1:  # one name each: the variant is the function's
                parts = name.split("/")
                if len(parts) != 3:
                    raise ValueError(f"name {name!r}: expected family/variant/precision")
                name = f"{parts[0]}/{fn.__name__.lower()}/{parts[2]}"
            params = json.loads(a.params) if a.params else declared(mod, "PARAMS")
            benchmarks.append(rb.Benchmark(
                fn, inputs, ref, name,
                flops=a.flops if a.flops is not None else declared(mod, "FLOPS", 0),
                bytes=a.bytes if a.bytes is not None else declared(mod, "BYTES", 0),
                params=params, growth=a.growth if a.growth is not None else declared(mod, "GROWTH", 1.0)))
        except (ValueError, TypeError) as e:
            raise SystemExit(f"roofbench score: {e}")
    if not a.trusted:
        # Each kernel as its file left it: another kernel's file (loaded after it) may not rewrite it.
        for b in benchmarks:
            rb._roofbench.seal(b.fn, f"the kernel {b.name}", False, True)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # what the kernels print, too: stdout is the JSON lines'
            run = rb.run(benchmarks, device=a.device, quick=a.quick, out=a.out, seed=a.seed, counters=a.counters,
                         ceilings_from=a.ceilings_from, quiet_stdout=True, untrusted=not a.trusted,
                         options=["--skip", a.skip] if a.skip else [])
    except (rb.RunError, ValueError) as e:
        raise SystemExit(f"roofbench score: {e}")
    ok = run.exit_code in (0, 1)
    for b in benchmarks:
        try:
            r = run[b.name]
        except KeyError:
            ok = False  # not in the results: a stopped run
            print(json.dumps({"name": b.name, "error": "not measured: the run stopped before it", "ok": False}),
                  file=stdout, flush=True)
            continue
        ok = ok and r.ok
        print(json.dumps(r.score()), file=stdout, flush=True)
    return 0 if ok else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "score":
        print("usage: python -m roofbench score FILE.py::fn --reference FILE.py::ref ... (see --help)",
              file=sys.stderr)
        return 2
    try:
        return score(argv[1:])
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            return 2
        return e.code if isinstance(e.code, int) else 2


if __name__ == "__main__":
    sys.exit(main())
