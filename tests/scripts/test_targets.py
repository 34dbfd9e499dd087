#!/usr/bin/env python3
"""scripts/targets.py, the GPU baseline's target table.

1. On every committed baseline (real files the suite wrote), the two rows that recompute what the
   reports print, the run's wall time over its timed samples and the spread of the kernels of at
   least 50 us, say what `roofbench report` prints in summary.md from the same file.
2. On a hand-built H200 folder (test input, never a baseline: no GPU has run this suite yet), every
   row reads the benchmark or ceiling it names and judges it: targets met and missed as planted,
   a target whose benchmark is absent "not measured", counters from counters/, verdicts from
   agreement.json; and a folder without a results file is refused.
Usage: test_targets.py ROOFBENCH_BIN
"""
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
script = os.path.join(root, "scripts", "targets.py")
roofbench = sys.argv[1]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def table(folder):
    p = subprocess.run([sys.executable, script, folder], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"targets.py {folder} exited {p.returncode}: {p.stderr}")
    rows = {}
    for line in p.stdout.splitlines():
        if line.startswith("| ") and not line.startswith("| target") and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0]] = {"measured": cells[1], "wanted": cells[2], "verdict": cells[3],
                              "across": cells[5] if len(cells) > 5 else None}
    return p.stdout, rows


# ---------------------------------------------------------------- 1. against the suite's own lines
spread_what = "IQR / median of the kernels of at least 50 µs that did not throttle"
with tempfile.TemporaryDirectory() as tmp:
    checked = 0
    # (stored as results.json.xz, as every committed baseline is: report reads it as it is)
    for results in sorted(glob.glob(os.path.join(root, "reports", "baselines", "*", "results.json*"))):
        folder = os.path.dirname(results)
        out = os.path.join(tmp, os.path.basename(folder))
        # (exit 1: the file holds a kernel the plausibility gate refuses; its reports are written all the same)
        rep = subprocess.run([roofbench, "report", results, "--out", out], capture_output=True, text=True)
        if rep.returncode not in (0, 1) or not os.path.exists(os.path.join(out, "summary.md")):
            fail(f"roofbench report {results} exited {rep.returncode}: {rep.stderr}")
        summary = open(os.path.join(out, "summary.md")).read()
        _, rows = table(folder)
        cost = re.search(r"run (\d+) s(?: in \d+ parts)?, [^(]* of it in timed samples \(([\d.]+)×\)", summary)
        got = rows["suite wall time / time in timed samples"]["measured"]
        if cost:
            if not got.startswith(f"{cost.group(2)}× ({cost.group(1)} s,"):
                fail(f"{folder}: the run's cost is '{got}', summary.md says '{cost.group(0)}'")
        elif got != "—":
            fail(f"{folder}: summary.md states no run cost but targets.py found '{got}'")
        spread = re.search(r"\*\*Spread\*\*: of the (\d+) kernels? with a median of at least [^,]*, (\d+) ha(?:s|ve) "
                           r"an IQR within 1\.0% of the median \(median ([\d.]+)%; widest ([\d.]+)%, (\S+)\)", summary)
        got = rows[spread_what]["measured"]
        if spread:
            n, within, med, widest, name = spread.groups()
            want = f"all: {within} of {n} within 1% (median {med}%; widest {widest}%, `{name}`); not throttled: "
            if not got.startswith(want):
                fail(f"{folder}: the spread is '{got}', summary.md says '{want}'")
        elif got != "—":
            fail(f"{folder}: summary.md states no spread but targets.py found '{got}'")
        checked += 1
    if checked == 0:
        fail("no committed baseline to check against")
    print(f"targets: the run's cost and the spread agree with summary.md in {checked} committed baselines")

# ---------------------------------------------------------------- 2. a hand-built H200 folder
# Only the fields targets.py reads. Medians are chosen so that each ratio is known.


def bench(name, median, clock=None, **kw):
    m = {"samples_s": [median * 0.999, median, median * 1.001], "stop_reason": kw.pop("stop_reason", "noise_target")}
    if clock:
        m["sample_clock_hz"] = [clock * 1.01, clock, clock * 0.99]
    b = {"name": name, "verified": True, "measurement": m,
         "flops": kw.pop("flops", 0.0), "bytes": kw.pop("bytes", 0.0), "unit": kw.pop("unit", "simt")}
    b.update(kw)
    return b


def ceiling(name, value, unit="B/s", **kw):
    c = {"name": name, "value": value, "value_unit": unit, "datasheet": None, "theoretical": None,
         "measurement": {"samples_s": [0.001] * 10}, "measurement_end": {"samples_s": [0.001] * 10}}
    c.update(kw)
    return c


n28 = "n:268435456"
g4, g8 = "M:4096/N:4096/K:4096", "M:8192/N:8192/K:8192"
results = {
    "schema": "roofbench.results.v1",
    "device": {"kind": "cuda", "name": "NVIDIA H200"},
    "settings": {},
    "provenance": {"git_commit": "0123456789abcdef", "utc_time": "2026-11-27T00:00:00Z", "wall_s": 100.0},
    "ceilings": [
        ceiling("dram_read", 4.56e12, datasheet={"value": 4.8e12, "source": "sheet"}),  # 0.95: met (>= 0.94)
        ceiling("dram_copy", 4.2e12, datasheet={"value": 4.8e12, "source": "sheet"}),
        ceiling("dram_memcpy", 4.0e12),  # copy 1.05x memcpy: met
        ceiling("fp32_fma", 60e12, "FLOP/s", theoretical={"value": 66e12, "source": "x"}),  # 0.909: missed
        ceiling("bf16_mma_sync", 650e12, "FLOP/s", datasheet={"value": 989.5e12, "source": "sheet"}),  # 0.657
        ceiling("bf16_wgmma", 900e12, "FLOP/s", datasheet={"value": 989.5e12, "source": "sheet"}),  # 0.910
        ceiling("l2_read", 10e12),  # met
        ceiling("smem_read", 30e12, theoretical={"value": 33e12, "source": "x"}),  # 0.909: met
        ceiling("pcie_h2d_pinned", 50e9),
        ceiling("launch_graph_node", 1.8e6, "launch/s"),  # 0.556 us a node
    ],
    "benchmarks": [
        bench(f"gemm/cublas/fp32/{g4}", 0.003, vendor_reference=True),
        bench(f"gemm/warp_tiled/fp32/{g4}", 0.0034),  # 0.882: missed (>= 0.90)
        bench(f"gemm/naive/fp32/{g4}", 0.03),
        bench(f"gemm/cublas/bf16/{g8}", 0.0014, 1.98e9, unit="tensor", vendor_reference=True),
        bench(f"gemm/wmma/bf16/{g8}", 0.0035, unit="tensor"),  # 0.40: missed
        bench(f"gemm/mma_sync/bf16/{g8}", 0.0020, unit="tensor"),  # 0.70: met (>= 0.65)
        # 0.933 by time, missed; at the same clock (1.70 GHz against cuBLAS's 1.98) 1.087, met
        bench(f"gemm/wgmma/bf16/{g8}", 0.0015, 1.70e9, unit="tensor"),
        bench(f"gemm/wgmma_bn128/bf16/{g8}", 0.0016, unit="tensor"),
        bench(f"fusion/sincos_unfused/fp32/{n28}", 0.0060),
        bench(f"fusion/sincos_fused/fp32/{n28}", 0.00052, bytes=2.0e9),  # 11.5x; 3.85 TB/s = 0.916 of copy
        bench(f"lowprec/relu/fp32/{n28}", 0.00046),
        bench(f"lowprec/relu/fp16/{n28}", 0.00024),  # 1.92x: met
        bench(f"lowprec/relu/bf16/{n28}", 0.00025),
        bench("divergence/uniform/fp32/n:4194304/iters:512/ways:32", 0.001),
        bench("divergence/divergent/fp32/n:4194304/iters:512/ways:32", 0.02),
        bench("divergence/branchless/fp32/n:4194304/iters:512/ways:32", 0.0011),
        bench("launch/per_op/fp32/n:1024/ops:1000", 0.0025),
        bench("launch/graph/fp32/n:1024/ops:1000", 0.0006),  # 4.17x, no target; 0.6 us a kernel: 1.08x the node's
        # At the sample cap (a tiny kernel its noise rule did not stop), and above its roof by 5%.
        bench("stream/saxpy/fp32/n:4096", 2e-6, stop_reason="max_samples",
              placement={"roof_pct": 105.0, "bound": "memory", "bandwidth_ceiling": "dram_copy"}),
        # Above a roof that is no upper bound for it, and not refused by the gate: the sustained roof
        # of its clock, a memory roof timed warm. Neither counts.
        bench("gemm/wgmma/fp16/M:4096/N:4096/K:4096", 0.0002, unit="tensor",
              placement={"roof_pct": 108.0, "bound": "compute", "compute_ceiling": "bf16_wgmma",
                         "roof_clock": "sustained", "implausible": False}),
        bench("stream/copy/fp32/n:4096", 3e-6, placement={"roof_pct": 150.0, "bound": "memory",
                                                          "bandwidth_ceiling": "dram_copy", "implausible": False}),
        # Throttled (its samples below the clock after warm-up) and flagged by the run: not judged on
        # its spread (6%), counted as flagged.
        bench("gemm/wgmma/bf16/M:4096/N:4096/K:4096", 0.0002, unit="tensor",
              warnings=["clock: 2 of 3 samples ran below 90% of the clock after warm-up"]),
    ],
}
# Overlap: at iters 64 a chunk's kernel is far shorter than its copy; at 2048 they balance (the row
# takes that one); at 8192 the kernel is far longer.
for b in results["benchmarks"]:
    if b["name"] == "stream/copy/fp32/n:4096":
        b["measurement"]["cold_cache"] = False
    if b["name"] == "gemm/wgmma/bf16/M:4096/N:4096/K:4096":
        b["measurement"].update({"samples_s": [0.00019, 0.0002, 0.000214], "throttled_samples": [0, 2]})
chunk_bytes = 4 * 67108864
# Against the roofs (shown) and against the passes as measured (judged).
for iters, eff2, eff4, meas2, meas4 in ((64, 0.99, 0.99, 0.99, 0.99), (2048, 0.80, 0.88, 0.95, 0.97),
                                        (8192, 0.95, 0.96, 0.99, 0.99)):
    flops = 2.0 * 67108864 * iters
    for form, eff, meas in (("streams2", eff2, meas2), ("streams4", eff4, meas4)):
        b = bench(f"overlap/{form}/fp32/n:67108864/chunks:16/iters:{iters}", 0.01,
                  phases=[{"name": "copy in", "bytes": chunk_bytes, "flops": 0, "ceiling": "pcie_h2d_pinned"},
                          {"name": "kernel", "bytes": 2 * chunk_bytes, "flops": flops},
                          {"name": "copy out", "bytes": chunk_bytes, "flops": 0, "ceiling": "pcie_d2h_pinned"}],
                  placement={"roof_pct": 100 * eff, "overlap_measured": meas})
        results["benchmarks"].append(b)
# Copy in: 268 MB at 50 GB/s = 5.4 ms; the kernel at 2048: 275 GFLOP at 60 TFLOP/s = 4.6 ms.
n50 = sum(1 for b in results["benchmarks"] if sorted(b["measurement"]["samples_s"])[1] >= 50e-6)
n_placed = sum(1 for b in results["benchmarks"] if "placement" in b)
timed = sum(sum(b["measurement"]["samples_s"]) for b in results["benchmarks"]) + 0.02 * len(results["ceilings"])

counters = {
    "schema": "roofbench.results.v1",
    "device": {"kind": "cuda", "name": "NVIDIA H200"},
    "benchmarks": [
        {"name": "stream/saxpy/fp32/n:67108864", "bytes": 805306368.0, "flops": 0,
         "counters": {"values": {"dram__bytes_read.sum": 540e6, "dram__bytes_write.sum": 270e6}}},  # 1.006
        {"name": "gemm/wgmma/bf16/M:2048/N:2048/K:2048", "unit": "tensor", "flops": 2.0 * 2048 ** 3,
         "bytes": 1.0, "counters": {"values": {"x": 1}, "derived": {"flops": 2.0 * 2048 ** 3 * 1.003}}},  # 1.003
    ],
}
agreement = {"summary": {"counts": {"SAME": 40, "UNSURE": 3, "SLOWER": 0, "FASTER": 1}}}
aa = {"schema": "roofbench.ab.v1", "rounds": [{}] * 5,
      "summary": {"counts": {"SAME": 3, "UNSURE": 1, "SLOWER": 0, "FASTER": 0, "FAILED": 0}}}


def write(folder, r, c=None, a=None, ab=None, th=None):
    os.makedirs(folder, exist_ok=True)
    json.dump(r, open(os.path.join(folder, "results.json"), "w"))
    if th is not None:
        os.makedirs(os.path.join(folder, "throttle"), exist_ok=True)
        json.dump(th, open(os.path.join(folder, "throttle", "results.json"), "w"))
    if c is not None:
        os.makedirs(os.path.join(folder, "counters"), exist_ok=True)
        json.dump(c, open(os.path.join(folder, "counters", "results.json"), "w"))
    if a is not None:
        json.dump(a, open(os.path.join(folder, "agreement.json"), "w"))
    if ab is not None:
        json.dump(ab, open(os.path.join(folder, "ab.json"), "w"))


# The tests stage's 8192³ BF16 GEMMs sampled 3 s each: one throttled in 2 of its 3 samples and
# flagged, one that held its clock.
def throttle_run(flag=True, throttled=True):
    clocks = [1.98e9, 1.5e9, 1.5e9] if throttled else [1.98e9] * 3
    wg = {"name": "gemm/wgmma/bf16/M:8192/N:8192/K:8192", "warnings": ["clock: 2 of 3 samples (67%) ran below 90%"]
          if flag else [], "measurement": {"samples_s": [1.1e-3, 1.3e-3, 1.3e-3], "sample_clock_hz": clocks,
                                           "throttled_samples": [1, 2] if throttled else []}}
    cb = {"name": "gemm/cublas/bf16/M:8192/N:8192/K:8192", "warnings": [],
          "measurement": {"samples_s": [1.0e-3, 1.0e-3, 1.0e-3], "sample_clock_hz": [1.98e9] * 3,
                          "throttled_samples": []}}
    return {"schema": results["schema"], "device": results["device"], "benchmarks": [wg, cb], "ceilings": []}


expected = {
    "8192³ BF16 GEMMs sampled 3 s: throttled samples flagged": (
        "`gemm/wgmma/bf16/M:8192/N:8192/K:8192` 2 of 3 samples throttled, flagged; "
        "`gemm/cublas/bf16/M:8192/N:8192/K:8192` 0 of 3 samples throttled", "met"),
    "HBM read ceiling / datasheet": ("0.95 (", "met"),
    "HBM copy ceiling / cudaMemcpy (same run)": ("1.05 (", "met"),
    "HBM copy ceiling / datasheet": ("0.88 (", "—"),
    "FP32 FMA ceiling / SMs × 128 × 2 × measured clock": ("0.91 (", "NOT MET"),
    "mma.sync BF16 ceiling / dense BF16 datasheet": ("0.66 (", "met"),
    "wgmma BF16 ceiling / dense BF16 datasheet": ("0.91 (", "met"),
    "best SIMT SGEMM / cuBLAS, 4096³": ("0.88 (`warp_tiled`", "NOT MET"),
    "WMMA BF16 / cuBLAS, 8192³": ("0.40 (`wmma`", "NOT MET"),
    "mma.sync + ldmatrix BF16 / cuBLAS, 8192³": ("0.70 (`mma_sync` 2 ms", "met"),
    "wgmma BF16 / cuBLAS, 8192³, at the same clock": ("1.09 (`wgmma` 1.5 ms at 1.70 GHz, cuBLAS 1.4 ms at 1.98 GHz; "
                                                      "0.93 by time)", "met"),
    "sin²+cos² unfused / fused, 2^28 FP32": ("11.54×", "met"),
    "fused sin²+cos²: bytes/s / HBM copy ceiling, 2^28": ("0.92 (", "met"),
    "ReLU FP32 / FP16 time, 2^28": ("1.92×", "met"),
    "ReLU FP32 / BF16 time, 2^28": ("1.84×", "—"),
    "divergence: 32-way divergent / uniform time": ("20.00×", "—"),
    "divergence: 32-way divergent / branchless time": ("18.18×", "—"),
    "L2 read ceiling": ("10 TB/s", "met"),
    "shared-memory ceiling / SMs × 128 B/clock × measured clock": ("0.91 (", "met"),
    "SAXPY: HBM bytes counted by CUPTI / declared": ("1.006 (`stream/saxpy/fp32/n:67108864`, counters/results.json", "met"),
    "tensor GEMMs: FLOPs counted by CUPTI / 2·M·N·K": ("1.0030 (`gemm/wgmma/bf16/M:2048/N:2048/K:2048`", "met"),
    "suite wall time / time in timed samples": (f"{100 / timed:.1f}× (100 s,", "NOT MET" if 100 / timed > 2 else "met"),
    "kernels stopped at the sample cap": (f"1 of {len(results['benchmarks'])} (`stream/saxpy/fp32/n:4096`)", "NOT MET"),
    "IQR / median of the kernels of at least 50 µs that did not throttle": (
        f"all: {n50 - 1} of {n50} within 1% (median 0.10%; widest 6.0%, `gemm/wgmma/bf16/M:4096/N:4096/K:4096`); "
        f"not throttled: {n50 - 1} of {n50 - 1} within 1%; throttled: 1, 1 flagged", "met"),
    "no kernel above its roof by more than 3%": (
        f"1 of {n_placed} placed, the highest `stream/saxpy/fp32/n:4096` 105% (dram_copy); 2 above a roof that is no "
        "upper bound for it", "NOT MET"),
    "two quick runs compared (repeatability)": ("1 FASTER, 40 SAME, 3 UNSURE", "—"),
    "`roofbench ab` of the binary against itself (A/A): false verdicts": ("0 (3 SAME, 1 UNSURE; 5 rounds)", "met"),
    "launches one by one / one CUDA graph, N = 1000 (time per kernel)": ("4.17×", "—"),
    "one CUDA graph, N = 1000: time per kernel / the graph-node ceiling's": ("1.08× (0.6 µs per kernel; launch_graph_node "
                                                                            "1.8 Mlaunch/s, 0.556 µs)", "met"),
    "overlap efficiency, pinned, where copy ≈ compute, against the roofs": (
        "0.88 (`overlap/streams4/fp32/n:67108864/chunks:16/iters:2048`", "—"),
    "overlap efficiency, pinned, where copy ≈ compute, against the measured pass times": (
        "0.97 (`overlap/streams4/fp32/n:67108864/chunks:16/iters:2048`", "met"),
}
with tempfile.TemporaryDirectory() as tmp:
    full = os.path.join(tmp, "h200")
    write(full, results, counters, agreement, aa, throttle_run())
    text, rows = table(full)
    if set(rows) != set(expected):
        fail(f"rows: {sorted(set(rows) ^ set(expected))} differ")
    for what, (measured, verdict) in expected.items():
        got = rows[what]
        if not got["measured"].startswith(measured) or got["verdict"] != verdict:
            fail(f"'{what}': measured '{got['measured']}', verdict '{got['verdict']}'; "
                 f"expected '{measured}…', '{verdict}'")
    if "counters/results.json`, `throttle/results.json`, `agreement.json`, `ab.json`" not in text:
        fail(f"the header does not name the files read: {text.splitlines()[2]}")
    m = re.search(r"^(\d+) of (\d+) judged targets met; (\d+) not measured\.$", text, re.M)
    judged = [v for _, v in expected.values() if v in ("met", "NOT MET")]
    if not m or (int(m.group(1)), int(m.group(2)), int(m.group(3))) != (judged.count("met"), len(judged), 0):
        fail(f"the tally: {m.group(0) if m else text[-200:]}")

    # A merged file (the numbers stage's parts): the parts' wall time, and the ceilings' samples
    # counted when one part measured them (the others took them --ceilings-from), not when none did.
    merged = copy.deepcopy(results)
    merged["provenance"]["merged_from"] = [{"wall_s": 30.0, "settings": {}},
                                           {"wall_s": 70.0, "settings": {"ceilings_from": {"path": "x"}}}]
    del merged["provenance"]["wall_s"]
    write(os.path.join(tmp, "merged"), merged)
    _, rows = table(os.path.join(tmp, "merged"))
    cost = "suite wall time / time in timed samples"
    if rows[cost]["measured"] != table(full)[1][cost]["measured"]:
        fail(f"a merge whose first part measured the ceilings: {rows[cost]} (one run: {table(full)[1][cost]})")
    merged["provenance"]["merged_from"][0]["settings"] = {"ceilings_from": {"path": "y"}}
    write(os.path.join(tmp, "merged"), merged)
    _, rows = table(os.path.join(tmp, "merged"))
    kernels_only = timed - 0.02 * len(results["ceilings"])
    if not rows[cost]["measured"].startswith(f"{100 / kernels_only:.1f}× (100 s,"):
        fail(f"a merge whose parts all took the ceilings from elsewhere: {rows[cost]}")

    # A throttled GEMM the run did not flag fails the row; GEMMs that held their clock leave nothing to judge.
    th = "8192³ BF16 GEMMs sampled 3 s: throttled samples flagged"
    unread = throttle_run(throttled=False)
    for b in unread["benchmarks"]:
        del b["measurement"]["sample_clock_hz"]
    for name, run, verdict, says in (("unflagged", throttle_run(flag=False), "NOT MET", "throttled, NOT flagged"),
                                     ("held", throttle_run(throttled=False), "—", "(the clock held)"),
                                     ("unread", unread, "not measured: `gemm/wgmma/bf16/M:8192/N:8192/K:8192` has no "
                                      "per-sample clock (NVML unavailable?)", "—")):
        write(os.path.join(tmp, name), results, counters, agreement, aa, run)
        got = table(os.path.join(tmp, name))[1][th]
        if got["verdict"] != verdict or says not in got["measured"]:
            fail(f"throttle run {name}: {got}")

    # Energy passes and sustained holds are said beside, with the ratio over both; the verdict
    # stays on the samples alone.
    passes = copy.deepcopy(results)
    passes["benchmarks"][0]["measurement"]["energy_run"] = {"kind": "pass", "seconds": 15.0, "joules": 1.0,
                                                            "busy_s": 14.0, "runs": 10}
    passes["benchmarks"][1]["measurement"]["held_s"] = 5.0  # a hold with no counter to read across it
    write(os.path.join(tmp, "passes"), passes)
    _, rows = table(os.path.join(tmp, "passes"))
    want = f"{100 / timed:.1f}× (100 s, {timed:.1f} s of it in timed samples; 20 s in energy passes and sustained " \
           f"holds: {100 / (timed + 20):.1f}× the two)"
    if rows[cost]["measured"] != want or rows[cost]["verdict"] != table(full)[1][cost]["verdict"]:
        fail(f"a run with an energy pass: {rows[cost]}, wanted {want!r} and the samples' verdict")

    # An H100 is held to 0.90 of its datasheet's HBM read and has no L2 target.
    h100 = copy.deepcopy(results)
    h100["device"]["name"] = "NVIDIA H100 80GB HBM3"
    h100["ceilings"][0]["value"] = 0.92 * 4.8e12
    write(os.path.join(tmp, "h100"), h100)
    _, rows = table(os.path.join(tmp, "h100"))
    if rows["HBM read ceiling / datasheet"]["verdict"] != "met" or rows["HBM read ceiling / datasheet"]["wanted"] != "≥ 0.90":
        fail(f"H100's HBM read: {rows['HBM read ceiling / datasheet']}")
    if rows["L2 read ceiling"]["verdict"] != "—":
        fail(f"H100's L2: {rows['L2 read ceiling']}")
    # Without counters/ and agreement.json, and with a benchmark gone or failed: not measured, saying why.
    if not rows["SAXPY: HBM bytes counted by CUPTI / declared"]["verdict"].startswith("not measured: no run with counters"):
        fail(f"no counters: {rows['SAXPY: HBM bytes counted by CUPTI / declared']}")
    if not rows["two quick runs compared (repeatability)"]["verdict"].startswith("not measured: no agreement.json"):
        fail(f"no agreement: {rows['two quick runs compared (repeatability)']}")
    aa_what = "`roofbench ab` of the binary against itself (A/A): false verdicts"
    if not rows[aa_what]["verdict"].startswith("not measured: no ab.json"):
        fail(f"no A/A: {rows[aa_what]}")
    # An A/A that called a kernel FASTER (a false verdict), or in which a kernel failed in a round
    # (FAILED; or, failed in a round of the first build, only in the other's) or came out
    # IMPLAUSIBLE: not met.
    for planted, lost, want in (({"FASTER": 1, "SAME": 3}, [], "1 (1 FASTER, 3 SAME; 5 rounds)"),
                                ({"FAILED": 1, "SAME": 3}, [], "0 (1 FAILED, 3 SAME; 5 rounds)"),
                                ({"SAME": 3}, ["stream/saxpy/fp32/n:1"], "0 (3 SAME, 1 in one build's rounds only; 5 rounds)"),
                                ({"IMPLAUSIBLE": 1, "SAME": 3}, [], "0 (1 IMPLAUSIBLE, 3 SAME; 5 rounds)")):
        write(os.path.join(tmp, "h100"), h100, ab=dict(aa, summary={"counts": planted}, only_in_new=lost))
        got = table(os.path.join(tmp, "h100"))[1][aa_what]
        if got["verdict"] != "NOT MET" or got["measured"] != want:
            fail(f"an A/A with {planted}: {got}")
    broken = copy.deepcopy(results)
    broken["benchmarks"] = [b for b in broken["benchmarks"] if not b["name"].startswith("launch/graph/")]
    for b in broken["benchmarks"]:
        if b["name"].startswith("gemm/wmma/"):
            b["verified"], b["measurement"], b["error"] = False, None, "mismatch at 17"
    for b in broken["benchmarks"]:
        if b["name"] == "gemm/wgmma/bf16/M:4096/N:4096/K:4096":  # throttled and not flagged
            b["warnings"] = []
        if b["name"] == "gemm/wgmma/fp16/M:4096/N:4096/K:4096":  # above the sustained roof, refused
            b["placement"]["implausible"] = True
    write(os.path.join(tmp, "broken"), broken)
    _, rows = table(os.path.join(tmp, "broken"))
    if rows[spread_what]["verdict"] != "NOT MET" or "throttled: 1, 0 flagged" not in rows[spread_what]["measured"]:
        fail(f"a throttled kernel the run did not flag: {rows[spread_what]}")
    above = rows["no kernel above its roof by more than 3%"]
    if not above["measured"].startswith("2 of ") or "`gemm/wgmma/fp16/M:4096/N:4096/K:4096` 108% (bf16_wgmma)" not in \
            above["measured"]:
        fail(f"a kernel refused above the sustained roof counts: {above}")
    for what, why in (("launches one by one / one CUDA graph, N = 1000 (time per kernel)", "no such benchmark"),
                      ("WMMA BF16 / cuBLAS, 8192³", "no verified measurement (mismatch at 17)")):
        if not rows[what]["verdict"].startswith("not measured") or why not in rows[what]["verdict"]:
            fail(f"'{what}' without its benchmark: {rows[what]}")

    # A folder with no results file, or one of another schema: refused.
    os.makedirs(os.path.join(tmp, "empty"))
    for folder, setup in (("empty", None), ("other", {"schema": "something.else"})):
        if setup is not None:
            write(os.path.join(tmp, folder), setup)
        p = subprocess.run([sys.executable, script, os.path.join(tmp, folder)], capture_output=True, text=True)
        if p.returncode == 0 or "targets:" not in p.stderr or p.stdout:
            fail(f"a folder '{folder}' was not refused: exit {p.returncode}, {p.stderr} {p.stdout[:100]}")

# ---------------------------------------------------------------- 3. across the visits of one model
# Two hand-built visits of an H200 (two GPUs), a target met on one and missed on the other, and an
# H100 beside them that is no visit of the H200's.
with tempfile.TemporaryDirectory() as tmp:
    a = copy.deepcopy(results)
    a["device"].update({"uuid": "aaaa0000", "driver_version": "13.0", "nvidia_driver_version": "580.95.05",
                        "power_limit_w": 700.0})
    b = copy.deepcopy(a)
    b["device"].update({"uuid": "bbbb1111"})
    del b["device"]["power_limit_w"]
    del b["device"]["nvidia_driver_version"]  # a file from before NVML's driver version was read
    for x in b["benchmarks"]:  # cuBLAS faster on the second GPU, both at one clock: 0.93 -> 0.83
        if x["name"].startswith("gemm/cublas/bf16/M:8192"):
            x["measurement"]["samples_s"] = [t * 0.83 / 0.93 for t in x["measurement"]["samples_s"]]
        if x["name"].startswith("gemm/wgmma/bf16/M:8192"):
            x["measurement"]["sample_clock_hz"] = [1.98e9] * 3
    h100 = copy.deepcopy(a)
    h100["device"]["name"] = "NVIDIA H100 80GB HBM3"
    write(os.path.join(tmp, "h200-a"), a)
    write(os.path.join(tmp, "h200-b"), b)
    write(os.path.join(tmp, "h100"), h100)
    write(os.path.join(tmp, "other"), {"schema": "something.else"})
    text, rows = table(os.path.join(tmp, "h200-a"))
    wg = rows["wgmma BF16 / cuBLAS, 8192³, at the same clock"]
    if wg["verdict"] != "met" or wg["across"] != "0.83 to 1.09 over 2, met in 1 of 2: MET ON SOME, NOT ALL":
        fail(f"wgmma across two visits: {wg}")
    wg_b = table(os.path.join(tmp, "h200-b"))[1]["wgmma BF16 / cuBLAS, 8192³, at the same clock"]
    if wg_b["verdict"] != "NOT MET" or not wg_b["measured"].startswith("0.83 (`wgmma` 1.5 ms at 1.98 GHz, cuBLAS"):
        fail(f"wgmma at cuBLAS's clock: {wg_b}")
    # Without cuBLAS's clock: not measured (a ratio by time is another figure), its time ratio said.
    for x in b["benchmarks"]:
        if x["name"].startswith("gemm/cublas/bf16/M:8192"):
            del x["measurement"]["sample_clock_hz"]
    write(os.path.join(tmp, "h200-b"), b)
    wg_b = table(os.path.join(tmp, "h200-b"))[1]["wgmma BF16 / cuBLAS, 8192³, at the same clock"]
    if wg_b["verdict"] != "not measured: no per-sample clock of cuBLAS (0.83 by time: `wgmma` 1.5 ms, cuBLAS 1.25 ms)":
        fail(f"wgmma without cuBLAS's clock: {wg_b}")
    # The persistent wgmma is one of the rung's variants: the best of them by time is judged.
    with tempfile.TemporaryDirectory() as alone:
        p = copy.deepcopy(a)
        p["benchmarks"].append(bench("gemm/wgmma_persistent/bf16/M:8192/N:8192/K:8192", 0.00141, 1.98e9,
                                     unit="tensor"))
        write(os.path.join(alone, "h200"), p)
        wg_p = table(os.path.join(alone, "h200"))[1]["wgmma BF16 / cuBLAS, 8192³, at the same clock"]
        if wg_p["verdict"] != "met" or not wg_p["measured"].startswith("0.99 (`wgmma_persistent` 1.41 ms at 1.98 GHz"):
            fail(f"the persistent wgmma, faster: {wg_p}")
    # The TMA bulk copy is a form of the HBM copy ceiling: the faster of the two is the copy roof.
    with tempfile.TemporaryDirectory() as alone:
        p = copy.deepcopy(a)
        p["ceilings"].append(ceiling("dram_copy_bulk", 4.4e12, datasheet={"value": 4.8e12, "source": "sheet"}))
        write(os.path.join(alone, "h200"), p)
        got = table(os.path.join(alone, "h200"))[1]
        # The fused float4 kernel's share stays against the float4 copy, where the model places it.
        for what, want in (("HBM copy ceiling / cudaMemcpy (same run)", "1.10 (dram_copy_bulk "),
                           ("HBM copy ceiling / datasheet", "0.92 (dram_copy_bulk "),
                           ("fused sin²+cos²: bytes/s / HBM copy ceiling, 2^28", "0.92 (")):
            if not got[what]["measured"].startswith(want):
                fail(f"{what} with a faster bulk copy: {got[what]}")
    # The L2 sweep: the fastest working set is the L2 read ceiling, the others named beside it.
    with tempfile.TemporaryDirectory() as alone:
        p = copy.deepcopy(a)
        p["ceilings"] = [c for c in p["ceilings"] if c["name"] != "l2_read"]
        p["ceilings"] += [ceiling("l2_read_4mib", 9.7e12), ceiling("l2_read", 8.6e12), ceiling("l2_read_32mib", 8.1e12)]
        write(os.path.join(alone, "h200"), p)
        l2 = table(os.path.join(alone, "h200"))[1]["L2 read ceiling"]
        if l2["verdict"] != "met" or not l2["measured"].startswith("9.7 TB/s (`l2_read_4mib`; `l2_read` 8.6 TB/s, "):
            fail(f"the L2 sweep's fastest: {l2}")
    cap = rows["kernels stopped at the sample cap"]
    if cap["across"] != "1 over 2, met in 0 of 2":
        fail(f"a count across two visits is a whole number: {cap}")
    if rows["HBM read ceiling / datasheet"]["across"] != "0.95 over 2, met in 2 of 2":
        fail(f"HBM read across two visits: {rows['HBM read ceiling / datasheet']}")
    if "across 2 visit(s) of this model" not in text:
        fail(f"the header does not count the visits: {text[:400]}")
    for line in ("- `h200-a`: GPU aaaa0000, driver 580.95.05 (CUDA 13.0), power limit 700 W",
                 "- `h200-b`: GPU bbbb1111, driver 13.0 (the CUDA driver API's; the NVIDIA driver not recorded), "
                 "power limit not recorded"):
        if line not in text:
            fail(f"no line '{line}' in {text[-400:]}")
    if "h100" in text.split("The visits of")[-1]:
        fail("an H100 is listed as a visit of the H200")
print("targets: every row of a hand-built H200 folder judged as planted; missing inputs not measured; bad folders "
      "refused; a target's spread across two visits of one model, met on one only")
