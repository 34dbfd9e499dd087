#!/usr/bin/env python3
"""Writes results files of about SIZE bytes (default 100 MB), each hostile in one way, built from
a real results file so that every part a reader checks is otherwise valid:

    hostile_results.py TEMPLATE.json OUT_DIR [SIZE [NAME...]]

  samples     one benchmark whose samples fill the file (about 7.7 million at 100 MB)
  million     two benchmarks of 1,000,000 samples and clocks each (issue 48's 71 MB file)
  benchmarks  the template's first benchmark copied under new names until the file is full
  many        as many benchmarks as a file may hold (kMaxBenchmarks), their samples filling it
  ceilings    ceilings under new names until the file is full
  warnings    one benchmark carrying a million warnings
  name        a benchmark name as long as the file
  deep        arrays nested to the file's size
  number      one number with as many digits as the file
  garbage     the template cut off at a random point, then random bytes

Writes every kind, or the NAMEs given; prints one line per file: its name and size.
"""
import json
import os
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "scripts"))
from results_io import read_json  # noqa: E402  (a committed baseline is stored as results.json.xz)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    template = read_json(sys.argv[1])
    out = sys.argv[2]
    size = int(float(sys.argv[3])) if len(sys.argv) > 3 else 100_000_000
    only = set(sys.argv[4:])
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261129)
    base = dict(template)
    first = template["benchmarks"][0]

    def wanted(name):
        return not only or name in only

    def write(name, text):
        path = os.path.join(out, name + ".json")
        with open(path, "w") as f:
            f.write(text)
        print(name, os.path.getsize(path))

    def with_benchmarks(benchmarks, **extra):
        r = dict(base)
        r["benchmarks"] = benchmarks
        r.update(extra)
        return r

    def sample_texts(n):
        # n samples as JSON text: a block of 100,000 random ones repeated (writing is the cost here,
        # not drawing: a reader sees the same numbers as from n draws).
        block = [f"{1e-3 * (1 + 0.01 * rng.random()):.9f}" for _ in range(min(n, 100_000))]
        reps, rest = divmod(n, len(block))
        return ", ".join(block) + (", " + ", ".join(block)) * (reps - 1) + (", " + ", ".join(block[:rest]) if rest else "")

    def with_samples(b, n):
        # b's JSON text with n samples in samples_s and no per-sample clocks or throttle flags.
        b = json.loads(json.dumps(b))
        b["measurement"]["samples_s"] = ["@SAMPLES@"]
        b["measurement"]["sample_clock_hz"] = []
        b["measurement"]["throttled_samples"] = []
        return json.dumps(b).replace('"@SAMPLES@"', sample_texts(n), 1)

    def splice(key, items):
        # The template (base) with its `key` list replaced by the JSON texts of items.
        r = dict(base)
        r[key] = []
        return json.dumps(r).replace(f'"{key}": []', f'"{key}": [' + ", ".join(items) + "]", 1)

    def renamed(text, old, new):
        return text.replace(json.dumps(old), json.dumps(new), 1)

    if wanted("samples"):
        # samples: one benchmark, its samples_s as long as the file allows (about 8.3 bytes each).
        write("samples", splice("benchmarks", [with_samples(first, size // 13)]))  # "0.001004817, " is 13 characters

    if wanted("benchmarks"):
        # benchmarks: copies of the first under new names.
        text = json.dumps(first)
        write("benchmarks", splice("benchmarks", [renamed(text, first["name"], f"{first['name']}/copy:{i}")
                                                  for i in range(size // len(text))]))

    if wanted("many"):
        one = len(json.dumps(first))  # many: kMaxBenchmarks benchmarks, each with as many samples as fill the file.
        most = 1000  # bench/results.h: kMaxBenchmarks
        text = with_samples(first, max(1, (size // most - one) // 12))
        write("many", splice("benchmarks", [renamed(text, first["name"], f"{first['name']}/copy:{i}")
                                            for i in range(most)]))

    if wanted("ceilings"):
        # ceilings: copies of the first under new names (at most 32 characters).
        c0 = template["ceilings"][0]
        text = json.dumps(c0)
        ceilings = [json.dumps(c) for c in template["ceilings"]]
        ceilings += [renamed(text, c0["name"], f"hostile_{i}") for i in range(size // len(text))]
        write("ceilings", splice("ceilings", ceilings))

    if wanted("warnings"):
        # warnings: a million of them on one benchmark.
        b = json.loads(json.dumps(first))
        b["warnings"] = [f"warning {i}: " + "x" * 80 for i in range(size // 100)]
        write("warnings", json.dumps(with_benchmarks([b])))

    if wanted("name"):
        # name: one benchmark whose name fills the file.
        b = json.loads(json.dumps(first))
        b["name"] = "n" * size
        write("name", json.dumps(with_benchmarks([b])))

    if wanted("deep"):
        # deep: [[[[...]]]] as deep as the file.
        half = size // 2
        write("deep", "[" * half + "]" * half)

    if wanted("number"):
        # number: one number of `size` digits where a benchmark's median belongs.
        text = json.dumps(with_benchmarks([first]))
        key = '"median_s": '
        at = text.index(key) + len(key)
        end = at
        while text[end] not in ",}":
            end += 1
        write("number", text[:at] + "1" * size + text[end:])

    if wanted("garbage"):
        # garbage: the template cut short, then random bytes to the size.
        text = json.dumps(template)
        cut = rng.randrange(len(text) // 2, len(text))
        printable = bytes(32 + i % 95 for i in range(256))  # each random byte onto ' ' .. '~'
        write("garbage", text[:cut] + rng.randbytes(min(size, 20_000_000)).translate(printable).decode("ascii"))

    if wanted("million"):
        # million: issue 48's file, two benchmarks of 1,000,000 samples and clocks each.
        text = with_samples(first, 1_000_000).replace('"sample_clock_hz": []',
                                                       '"sample_clock_hz": [' + ", ".join(["1900000000.0"] * 1_000_000) + "]", 1)
        write("million", splice("benchmarks", [text, renamed(text, first["name"], first["name"] + "/copy:1")]))

    return 0


if __name__ == "__main__":
    sys.exit(main())
