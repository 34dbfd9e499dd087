"""python -m roofbench score: a kernel's score against the measured speed of light, for a person or
an automated optimisation loop.

    python -m roofbench score FILE.py::fn --reference FILE.py::ref --inputs FILE.py::make_inputs \\
        --name mylib/op/fp32 --flops N --bytes N [--device auto|cpu|cuda:N] [--quick] [--counters] \\
        [--ceilings-from RESULTS] [--out DIR]

FILE.py::fn names a callable in a Python file. --inputs defaults to `make_inputs` in fn's file;
--flops, --bytes, --name and --params (JSON) default to the file's FLOPS, BYTES, NAME and PARAMS.
Several kernels: repeat the positional argument (each with the same inputs and reference).

Prints one JSON line per kernel on stdout: name, time_s, rel_iqr, roof_pct, bound, work (whose
work placed it: "declared", or "counted" by CUPTI with --counters on a GPU), verified, implausible,
error, ok; roofbench's console goes to stderr. Exit 0 when every kernel is checked and
plausible, 1 when one is wrong or implausible (or failed), 2 on bad input (one line on stderr).

Its times are roofbench's own, from C++ (a steady clock around each call on the CPU, CUDA events
on a GPU): a kernel that patches Python's timers changes nothing. A kernel that returns a cached
output fails the check made after the timed samples on fresh inputs; one that returns its input,
or no array, or leaves its work for later, fails its check; one that runs faster than the machine
can is IMPLAUSIBLE.
"""

import argparse
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
    mod_name = "_roofbench_score_" + os.path.splitext(os.path.basename(path))[0]
    mod = sys.modules.get(mod_name)
    if mod is None or getattr(mod, "__file__", None) != os.path.abspath(path):
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


def score(argv):
    p = argparse.ArgumentParser(prog="python -m roofbench score", description=__doc__.split("\n\n")[0])
    p.add_argument("kernels", nargs="+", help="FILE.py::fn, one or more")
    p.add_argument("--reference", help="FILE.py::ref (none: timing only, and never ok)")
    p.add_argument("--inputs", help="FILE.py::make_inputs (default: make_inputs in the kernel's file)")
    p.add_argument("--name", help="family/variant/precision (default: NAME in the kernel's file, else score/<fn>/fp32)")
    p.add_argument("--flops", type=float, help="FLOPs of one call (default: FLOPS in the kernel's file)")
    p.add_argument("--bytes", type=float, help="bytes one call must move (default: BYTES in the kernel's file)")
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
    a = p.parse_args(argv)

    import roofbench as rb

    benchmarks = []
    for k in a.kernels:
        mod, fn = _load(k, "kernel")
        inputs = _load(a.inputs, "--inputs")[1] if a.inputs else getattr(mod, "make_inputs", None)
        if inputs is None:
            raise SystemExit(f"roofbench score: {k}: no --inputs and no make_inputs in its file")
        ref = _load(a.reference, "--reference")[1] if a.reference else None
        name = a.name or getattr(mod, "NAME", None) or f"score/{fn.__name__.lower()}/fp32"
        try:
            if len(a.kernels) > 1:  # one name each: the variant is the function's
                parts = name.split("/")
                if len(parts) != 3:
                    raise ValueError(f"name {name!r}: expected family/variant/precision")
                name = f"{parts[0]}/{fn.__name__.lower()}/{parts[2]}"
            params = json.loads(a.params) if a.params else getattr(mod, "PARAMS", None)
            benchmarks.append(rb.Benchmark(
                fn, inputs, ref, name,
                flops=a.flops if a.flops is not None else getattr(mod, "FLOPS", 0),
                bytes=a.bytes if a.bytes is not None else getattr(mod, "BYTES", 0),
                params=params, growth=a.growth if a.growth is not None else getattr(mod, "GROWTH", 1.0)))
        except (ValueError, TypeError) as e:
            raise SystemExit(f"roofbench score: {e}")
    stdout = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):  # what the kernels print, too: stdout is the JSON lines'
            run = rb.run(benchmarks, device=a.device, quick=a.quick, out=a.out, seed=a.seed, counters=a.counters,
                         ceilings_from=a.ceilings_from, quiet_stdout=True,
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
