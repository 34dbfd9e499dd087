#!/usr/bin/env python3
"""Readers that hold: every hostile results file of about 100 MB that hostile_results.py writes
(and issue 48's 71 MB file of a million samples a benchmark) is compared, or refused with one
line, within 5 s of wall time, by `roofbench compare F F` and `roofbench history F F`.

    test_hostile_files.py ROOFBENCH TEMPLATE.json [SIZE]
    test_hostile_files.py ROOFBENCH --files DIR

The first writes one file at a time (written, read, deleted), so it needs about SIZE of disk. The
second reads the files `hostile_results.py TEMPLATE DIR` wrote beforehand (about ten times SIZE),
deleting each once read: ctest writes them beside other tests (a fixture) and times only the
reads, alone. Exit 1 with every failure. Run it alone (ctest RUN_SERIAL): the limit is wall time
on this machine.
"""
import os
import pathlib
import subprocess
import sys
import tempfile
import time

# Each kind and what must become of it: compared (exit 0 or 1), or refused (exit 2) with a line
# that names why.
KINDS = {"samples": "compared", "million": "compared", "many": "compared", "warnings": "compared",
         "benchmarks": "benchmarks: a results file holds at most", "ceilings": "ceilings: a results file holds at most",
         "name": "a string of 100000000 characters", "deep": "nested deeper than 64 levels",
         "number": "not valid JSON", "garbage": "not valid JSON"}
LIMIT_S = 5.0


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    roofbench = sys.argv[1]
    if sys.argv[2] == "--files" and len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    written = sys.argv[3] if sys.argv[2] == "--files" else None
    template = None if written else sys.argv[2]
    size = sys.argv[3] if len(sys.argv) > 3 and not written else "100000000"
    writer = pathlib.Path(__file__).with_name("hostile_results.py")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            if written:
                path = pathlib.Path(written) / f"{kind}.json"
                if not path.is_file():
                    failures.append(f"{kind}: no {path}: hostile_results.py did not write it")
                    continue
            else:
                made = subprocess.run([sys.executable, str(writer), template, tmp, size, kind], capture_output=True,
                                      text=True)
                path = pathlib.Path(tmp) / f"{kind}.json"
                if made.returncode != 0 or not path.is_file():
                    failures.append(f"{kind}: hostile_results.py wrote nothing: {made.stderr.strip()[-300:]}")
                    continue
            mb = path.stat().st_size / 1e6
            for command in ("compare", "history"):
                start = time.monotonic()
                try:
                    r = subprocess.run([roofbench, command, str(path), str(path)], capture_output=True, text=True,
                                       timeout=60)
                    rc, err = r.returncode, r.stderr.strip()
                except subprocess.TimeoutExpired:
                    rc, err = None, "still running after 60 s"
                took = time.monotonic() - start
                what = "compared" if rc in (0, 1) else "refused" if rc == 2 else f"rc {rc}"
                print(f"{kind:11s} {mb:6.1f} MB  {command:8s} {what:8s} in {took:4.1f} s  {err.splitlines()[-1][:110] if err else ''}")
                want = KINDS[kind]
                if rc not in (0, 1, 2):
                    failures.append(f"{kind}: {command} neither compared nor refused (rc {rc}): {err[-300:]}")
                elif want == "compared" and rc == 2:
                    failures.append(f"{kind}: {command} refused a file it must compare: {err[-300:]}")
                elif want != "compared" and (rc != 2 or want not in err):
                    failures.append(f"{kind}: {command} must refuse it with '{want}'; rc {rc}: {err[-300:]}")
                elif rc == 2 and (len(err.splitlines()) != 1 or not err.startswith("roofbench: ")):
                    failures.append(f"{kind}: {command} refused without one 'roofbench: ' line: {err[-300:]}")
                if took > LIMIT_S:
                    failures.append(f"{kind} ({mb:.0f} MB): {command} took {took:.1f} s, more than {LIMIT_S:.0f} s")
            path.unlink()
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
