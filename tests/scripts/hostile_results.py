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
import random
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    template = json.load(open(sys.argv[1]))
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

    if wanted("samples"):
        # samples: one benchmark, its samples_s as long as the file allows (about 8.3 bytes each).
        b = json.loads(json.dumps(first))
        n = size // 13  # "0.001004817, " is 13 characters
        b["measurement"]["samples_s"] = [round(1e-3 * (1 + 0.01 * rng.random()), 9) for _ in range(n)]
        b["measurement"]["sample_clock_hz"] = []
        b["measurement"]["throttled_samples"] = []
        write("samples", json.dumps(with_benchmarks([b])))

    if wanted("benchmarks"):
        # benchmarks: copies of the first under new names.
        one = len(json.dumps(first))
        copies = []
        for i in range(size // one):
            c = json.loads(json.dumps(first))
            c["name"] = f"{first['name']}/copy:{i}"
            copies.append(c)
        write("benchmarks", json.dumps(with_benchmarks(copies)))

    if wanted("many"):
        one = len(json.dumps(first))  # many: kMaxBenchmarks benchmarks, each with as many samples as fill the file.
        most = 1000  # bench/results.h: kMaxBenchmarks
        per = max(1, (size // most - one) // 12)
        b = json.loads(json.dumps(first))
        b["measurement"]["samples_s"] = [round(1e-3 * (1 + 0.01 * rng.random()), 9) for _ in range(per)]
        b["measurement"]["sample_clock_hz"] = []
        b["measurement"]["throttled_samples"] = []
        text = json.dumps(b)
        old_name = json.dumps(first["name"])
        parts = [text.replace(old_name, json.dumps(f"{first['name']}/copy:{i}"), 1) for i in range(most)]
        r = json.dumps(with_benchmarks([]))
        write("many", r.replace('"benchmarks": []', '"benchmarks": [' + ", ".join(parts) + "]", 1))

    if wanted("ceilings"):
        # ceilings: copies of the first under new names (at most 32 characters).
        c0 = template["ceilings"][0]
        per = len(json.dumps(c0))
        ceilings = list(template["ceilings"])
        for i in range(size // per):
            c = json.loads(json.dumps(c0))
            c["name"] = f"hostile_{i}"
            ceilings.append(c)
        r = dict(base)
        r["ceilings"] = ceilings
        write("ceilings", json.dumps(r))

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
        write("garbage", text[:cut] + "".join(chr(rng.randrange(32, 127)) for _ in range(min(size, 20_000_000))))

    if wanted("million"):
        b = json.loads(json.dumps(first))
        m = b["measurement"]
        m["samples_s"] = [round(1e-3 * (1 + 0.01 * rng.random()), 9) for _ in range(1_000_000)]
        m["sample_clock_hz"] = [1.9e9] * 1_000_000
        m["throttled_samples"] = []
        c = json.loads(json.dumps(b))
        c["name"] = first["name"] + "/copy:1"
        write("million", json.dumps(with_benchmarks([b, c])))

    return 0


if __name__ == "__main__":
    sys.exit(main())
