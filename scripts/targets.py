#!/usr/bin/env python3
"""The GPU baseline's targets, read off the files the suite wrote: one Markdown table.

    scripts/targets.py BASELINE_DIR [--out FILE] [--visits DIR]

BASELINE_DIR is a folder of reports/baselines/ (scripts/visit-baseline.sh writes targets.md into
it with this): results.json (the numbers stage's merged run), and where a later visit added them,
counters/results.json (the quick run with CUPTI counters), agreement.json (two quick runs
compared) and ab.json (`roofbench ab` of the binary against itself). Each row is one target of the GPU visits (issue 17, issue 23's launch and overlap
lessons, and issue 51's table, which raised some and added others): what was measured, from which
benchmarks or ceilings, against what, and whether it was met; a target whose benchmarks the files
do not hold says "not measured" and why. Every number comes from those files, as they were
written (a placement is the model's of the run that wrote it; `roofbench report` re-derives it);
nothing is typed in. Exit 0 when the table is written, 2 when the folder
holds no results file of roofbench's.

Each row's last column spreads its figure over every visit of the same GPU model: the baselines in
--visits DIR (default: BASELINE_DIR's parent, reports/baselines/) whose results name the same
device, listed under the table with their GPU's UUID, driver and power limit. A target met on
one GPU and missed on another says so.

Two rows recompute what the reports print (reports/format.cpp: run_time, spread_of): the run's
wall time over its timed samples and the spread of the kernels of at least 50 us (the row judges
those whose samples did not throttle, and shows the spread of all as summary.md gives it). The
test (tests/scripts/test_targets.py) holds them to summary.md's own lines.
"""
import argparse
import json
import lzma
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_io import read_json, results_file_in  # noqa: E402


def load(path):
    try:
        d = read_json(path)
    except (OSError, ValueError, EOFError, lzma.LZMAError) as e:
        sys.exit(f"targets: cannot read {path}: {e}")
    if not isinstance(d, dict) or d.get("schema") != "roofbench.results.v1":
        sys.exit(f"targets: {path} is not a roofbench results file (schema roofbench.results.v1)")
    return d


def si(v, unit):
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def median_of(b):
    m = b.get("measurement")
    if not b.get("verified") or not m or not m.get("samples_s"):
        return None
    return quantile(m["samples_s"], 0.5)


def median_clock(b):
    """The median of a benchmark's per-sample clocks (Hz), or None where none was read."""
    clocks = [c for c in ((b.get("measurement") or {}).get("sample_clock_hz") or []) if c]
    return quantile(clocks, 0.5) if clocks else None


class Row:
    def __init__(self, what, wanted, source, count=False):
        self.what, self.wanted, self.source = what, wanted, source
        self.measured, self.verdict = "—", "not measured"
        self.value = None  # the measured figure as a number, where there is one (the spread across visits)
        self.count = count  # the figure is a count (spread across visits as whole numbers)

    def missing(self, why):
        self.measured, self.verdict = "—", f"not measured: {why}"
        return self

    def judge(self, text, ok, value=None):
        self.measured = text
        self.verdict = "—" if ok is None else ("met" if ok else "NOT MET")
        self.value = value
        return self


class Baseline:
    def __init__(self, folder):
        try:
            path = results_file_in(folder)
            cpath = results_file_in(os.path.join(folder, "counters"))
        except ValueError as e:
            sys.exit(f"targets: {e}")
        if path is None:
            sys.exit(f"targets: no results.json (nor results.json.xz or .gz) in {folder}")
        self.r = load(path)
        self.name = self.r.get("device", {}).get("name", "?")
        self.h200 = "H200" in self.name
        self.h100 = "H100" in self.name
        self.counters = load(cpath) if cpath else None
        try:
            tpath = results_file_in(os.path.join(folder, "throttle"))
        except ValueError as e:
            sys.exit(f"targets: {e}")
        self.throttle = load(tpath) if tpath else None
        apath = os.path.join(folder, "agreement.json")
        self.agreement = self.aa = None
        if os.path.isfile(apath):
            with open(apath) as f:
                self.agreement = json.load(f)
        if os.path.isfile(os.path.join(folder, "ab.json")):
            with open(os.path.join(folder, "ab.json")) as f:
                self.aa = json.load(f)
        self.ceil = {c["name"]: c for c in self.r.get("ceilings", [])}
        self.bench = {b["name"]: b for b in self.r.get("benchmarks", [])}

    def ceiling(self, name):
        c = self.ceil.get(name)
        return c if c and c.get("value") else None

    def forms(self, name):
        """The measured forms of a ceiling, in the file's order: itself and those named after it with
        a suffix (dram_copy_bulk beside dram_copy; l2_read_4mib beside l2_read), as the reports'
        vendor line takes them (reports/format.cpp, vendor_reference_lines)."""
        return [c for n, c in self.ceil.items() if (n == name or n.startswith(name + "_")) and c.get("value")]

    def time(self, name):
        b = self.bench.get(name)
        if b is None:
            return None, "no such benchmark in results.json"
        t = median_of(b)
        if t is None:
            return None, f"{name} has no verified measurement ({b.get('error') or 'not verified'})"
        return t, None


def ceiling_ratio(bl, what, name, ref, wanted_ratio, source, forms=False):
    """A ceiling against its datasheet or theoretical value (ref), or against another ceiling.
    forms: the fastest of the ceiling's forms measured (Baseline.forms: the HBM copy's float4
    kernel and its TMA bulk copy), named in the text."""
    row = Row(what, f"≥ {wanted_ratio:.2f}" if wanted_ratio else "(no target)", source)
    measured = bl.forms(name) if forms else [c for c in [bl.ceiling(name)] if c is not None]
    if not measured:
        return row.missing(f"no {name} ceiling")
    c = max(measured, key=lambda x: x["value"])
    if ref in ("datasheet", "theoretical"):
        r = c.get(ref) or {}
        if not r.get("value"):
            return row.missing(f"{c['name']} has no {ref} value for {bl.name}")
        other, other_text = r["value"], f"{ref} {si(r['value'], c['value_unit'])}"
    else:
        o = bl.ceiling(ref)
        if o is None:
            return row.missing(f"no {ref} ceiling")
        other, other_text = o["value"], f"{ref} {si(o['value'], o['value_unit'])}"
    ratio = c["value"] / other
    form = f"{c['name']} " if forms else ""
    text = f"{ratio:.2f} ({form}{si(c['value'], c['value_unit'])} / {other_text})"
    return row.judge(text, None if not wanted_ratio else ratio >= wanted_ratio, ratio)


def gemm_ratio(bl, what, variants, precision, size, unit, wanted, source, same_clock=False):
    """The best of `variants` (None: every variant of `unit`) against cuBLAS, same precision and size.
    same_clock: judged at the same clock, the ratio of their cycles (time × the median of each one's
    per-sample clocks), so a GEMM throttled further than cuBLAS is not read as slower code; not
    measured where either clock was not read (a ratio by time is another figure)."""
    row = Row(what, f"≥ {wanted:.2f}", source)
    shape = f"M:{size}/N:{size}/K:{size}"
    ref = f"gemm/cublas/{precision}/{shape}"
    t_ref, why = bl.time(ref)
    if t_ref is None:
        return row.missing(f"cuBLAS: {why}")
    best, best_t, whys = None, None, []
    for name, b in bl.bench.items():
        parts = name.split("/")
        if len(parts) < 4 or parts[0] != "gemm" or parts[2] != precision or "/".join(parts[3:]) != shape:
            continue
        if b.get("vendor_reference") or parts[1] == "cublas":
            continue
        if variants is not None and parts[1] not in variants:
            continue
        if variants is None and b.get("unit") != unit:
            continue
        t, w = bl.time(name)
        if t is None:
            whys.append(w)
        elif best_t is None or t < best_t:
            best, best_t = parts[1], t
    if best is None:
        return row.missing("; ".join(whys) or f"no {precision} GEMM of {variants or unit} at {size}³")
    ratio = t_ref / best_t
    if not same_clock:
        return row.judge(f"{ratio:.2f} (`{best}` {best_t * 1e3:.3g} ms, cuBLAS {t_ref * 1e3:.3g} ms)", ratio >= wanted,
                         ratio)
    f_best, f_ref = median_clock(bl.bench[f"gemm/{best}/{precision}/{shape}"]), median_clock(bl.bench[ref])
    if f_best is None or f_ref is None:
        return row.missing(f"no per-sample clock of {'cuBLAS' if f_ref is None else f'`{best}`'} "
                           f"({ratio:.2f} by time: `{best}` {best_t * 1e3:.3g} ms, cuBLAS {t_ref * 1e3:.3g} ms)")
    cycles = (t_ref * f_ref) / (best_t * f_best)
    return row.judge(f"{cycles:.2f} (`{best}` {best_t * 1e3:.3g} ms at {f_best / 1e9:.2f} GHz, cuBLAS "
                     f"{t_ref * 1e3:.3g} ms at {f_ref / 1e9:.2f} GHz; {ratio:.2f} by time)", cycles >= wanted, cycles)


def time_ratio(bl, what, slow, fast, lo, hi, source, wanted_text=None):
    """slow's median over fast's: within [lo, hi] (None: no bound on that side)."""
    if wanted_text is None:
        wanted_text = "(no target)" if lo is None and hi is None else (
            f"≥ {lo:g}×" if hi is None else f"{lo:g}× to {hi:g}×")
    row = Row(what, wanted_text, source)
    ts, why = bl.time(slow)
    if ts is None:
        return row.missing(f"{slow}: {why}")
    tf, why = bl.time(fast)
    if tf is None:
        return row.missing(f"{fast}: {why}")
    ratio = ts / tf
    ok = None if lo is None and hi is None else ((lo is None or ratio >= lo) and (hi is None or ratio <= hi))
    return row.judge(f"{ratio:.2f}× ({ts * 1e3:.3g} ms / {tf * 1e3:.3g} ms)", ok, ratio)


def counters_file(bl):
    """The results that carry counters: the numbers stage's when it read them, else counters/."""
    if any(b.get("counters") and b["counters"].get("values") for b in bl.r.get("benchmarks", [])):
        return bl.r, "results.json"
    if bl.counters is not None:
        return bl.counters, "counters/results.json"
    return None, None


def counted(b, key):
    c = b.get("counters") or {}
    if not c.get("values"):
        return None
    d = c.get("derived") or {}
    if key == "dram":
        v = c["values"]
        if "dram__bytes_read.sum" in v and "dram__bytes_write.sum" in v:
            return v["dram__bytes_read.sum"] + v["dram__bytes_write.sum"]
        return None
    return d.get(key)


def counter_rows(bl):
    rows = []
    data, where = counters_file(bl)
    saxpy = Row("SAXPY: HBM bytes counted by CUPTI / declared", "within 5%", "issue 17")
    tensor = Row("tensor GEMMs: FLOPs counted by CUPTI / 2·M·N·K", "within 1%", "issue 17")
    if data is None:
        return [saxpy.missing("no run with counters (the tests stage adds counters/)"),
                tensor.missing("no run with counters (the tests stage adds counters/)")]

    def farthest(row, items, tol, digits, noun, none_why):
        """The measured/declared ratio farthest from 1 of (name, measured, declared) items."""
        if not items:
            return row.missing(f"{none_why} in {where}")
        name, got, declared = max(items, key=lambda x: abs(x[1] / x[2] - 1))
        return row.judge(f"{got / declared:.{digits}f} (`{name}`, {where}; {len(items)} {noun}, the farthest)",
                         abs(got / declared - 1) <= tol, got / declared)

    farthest(saxpy, [(b["name"], counted(b, "dram"), b["bytes"]) for b in data["benchmarks"]
                     if b["name"].startswith("stream/saxpy/fp32/") and counted(b, "dram") is not None],
             0.05, 3, "size(s)", "no SAXPY with HBM counters")
    farthest(tensor, [(b["name"], counted(b, "flops"), b["flops"]) for b in data["benchmarks"]
                      if b["name"].startswith("gemm/") and b.get("unit") == "tensor"
                      and not b.get("vendor_reference") and counted(b, "flops") is not None],
             0.01, 4, "GEMM(s)", "no tensor-core GEMM of ours with counted FLOPs")
    return [saxpy, tensor]


def samples_sum(m):
    return sum(m.get("samples_s") or []) if m else 0.0


def pass_seconds(m):
    """A measurement's sustained hold (held_s, with or without an energy counter read across it) and
    energy pass (an energy_run of kind "pass"), in seconds; 0 where none."""
    if not m:
        return 0.0
    run = m.get("energy_run") or {}
    return m.get("held_s", 0.0) + (run.get("seconds", 0.0) if run.get("kind") == "pass" else 0.0)


def run_cost_row(bl):
    """reports/format.cpp run_time: wall seconds (a merge: its parts') over seconds in timed samples."""
    row = Row("suite wall time / time in timed samples", "≤ 2×", "issue 51")
    p, r = bl.r.get("provenance", {}), bl.r
    measured_ceilings = False
    if isinstance(p.get("merged_from"), list):
        parts = p["merged_from"]
        if not parts or any(not isinstance(x, dict) or x.get("wall_s") is None for x in parts):
            return row.missing("a part of the merge has no wall_s")
        wall = sum(x["wall_s"] for x in parts)
        measured_ceilings = any("ceilings_from" not in (x.get("settings") or {}) for x in parts)
    else:
        if p.get("wall_s") is None:
            return row.missing("no wall_s in the provenance")
        wall = p["wall_s"]
        measured_ceilings = "ceilings_from" not in (r.get("settings") or {})
    timed = sum(samples_sum(b.get("measurement")) for b in r.get("benchmarks", []))
    passes = sum(pass_seconds(b.get("measurement")) for b in r.get("benchmarks", []))
    if measured_ceilings:
        timed += sum(samples_sum(c.get("measurement")) + samples_sum(c.get("measurement_end"))
                     for c in r.get("ceilings", []))
        passes += sum(pass_seconds(c.get(k)) for c in r.get("ceilings", [])
                      for k in ("measurement", "measurement_end", "measurement_sustained", "measurement_again"))
    if timed <= 0:
        return row.missing("no timed samples")
    # Judged on the samples alone, as the target was set; the energy passes and sustained holds
    # (measuring, not overhead) are said beside, with the ratio over both.
    also = (f"; {passes:.0f} s in energy passes and sustained holds: {wall / (timed + passes):.1f}× the two"
            if passes > 0 else "")
    return row.judge(f"{wall / timed:.1f}× ({wall:.0f} s, {timed:.1f} s of it in timed samples{also})", wall / timed <= 2,
                     wall / timed)


def quantile(xs, q):
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def spread_row(bl):
    """IQR / median of the kernels with a median of at least 50 us: of all of them as reports/format.cpp
    spread_of gives it, then judged on those whose samples did not throttle (each within 1%), the
    throttled ones each flagged by the run (a `clock:` warning) instead."""
    row = Row("IQR / median of the kernels of at least 50 µs that did not throttle", "≤ 1% each; throttled ones flagged",
              "issue 51")
    rel = []
    for b in bl.r.get("benchmarks", []):
        m = b.get("measurement")
        if not m or not m.get("samples_s"):
            continue
        s = m["samples_s"]
        med = quantile(s, 0.5)
        if med < 50e-6:
            continue
        flagged = any(w.startswith("clock:") for w in b.get("warnings") or [])
        rel.append(((quantile(s, 0.75) - quantile(s, 0.25)) / med, b["name"], bool(m.get("throttled_samples")), flagged))
    if not rel:
        return row.missing("no kernel with a median of at least 50 µs")
    within = sum(1 for x in rel if x[0] <= 0.01)
    widest = max(rel)
    text = (f"all: {within} of {len(rel)} within 1% (median {100 * quantile([x[0] for x in rel], 0.5):.2f}%; "
            f"widest {100 * widest[0]:.1f}%, `{widest[1]}`)")
    steady = [x for x in rel if not x[2]]
    throttled = [x for x in rel if x[2]]
    steady_within = sum(1 for x in steady if x[0] <= 0.01)
    text += f"; not throttled: {steady_within} of {len(steady)} within 1%"
    if steady and steady_within < len(steady):
        w = max(steady)
        text += f" (widest {100 * w[0]:.1f}%, `{w[1]}`)"
    flagged = sum(1 for x in throttled if x[3])
    text += f"; throttled: {len(throttled)}, {flagged} flagged"
    return row.judge(text, steady_within == len(steady) and flagged == len(throttled),
                     steady_within / len(steady) if steady else None)


def throttle_row(bl):
    """Issue 47: the tests stage's 8192³ BF16 GEMMs, sampled 3 s each (throttle/): the samples whose
    clock read throttled, and whether the run flagged them (a `clock:` warning)."""
    row = Row("8192³ BF16 GEMMs sampled 3 s: throttled samples flagged", "each throttled one flagged", "issue 47")
    if bl.throttle is None:
        return row.missing("no throttle/ run (the tests stage's, from the next visit on)")
    parts, throttled, flagged = [], 0, 0
    for b in bl.throttle.get("benchmarks", []):
        m = b.get("measurement") or {}
        n, t = len(m.get("samples_s") or []), len(m.get("throttled_samples") or [])
        if not n:
            continue
        if not m.get("sample_clock_hz"):  # no clock read per sample: no throttle could have been seen
            return row.missing(f"`{b['name']}` has no per-sample clock (NVML unavailable?)")
        f = any(w.startswith("clock:") for w in b.get("warnings") or [])
        throttled += t > 0
        flagged += t > 0 and f
        parts.append(f"`{b['name']}` {t} of {n} samples throttled" + (", flagged" if t and f else
                                                                        ", NOT flagged" if t else ""))
    if not parts:
        return row.missing("its run timed no benchmark")
    if not throttled:  # nothing to flag: the GPU held its clock for 3 s, which is no fault of the suite's
        return row.judge("; ".join(parts) + " (the clock held)", None)
    return row.judge("; ".join(parts), flagged == throttled)


def above_roof_row(bl):
    """No kernel above its roof by more than 3% (the plausibility gate's slack): every placed benchmark's
    roof %, as the run placed it. Left out, and counted: a kernel read against the sustained roof of
    its clock and not refused (the burst roof, the upper bound, holds it), and one timed warm against a
    memory roof its bytes need not have met (the model says which cache's roof it is under)."""
    row = Row("no kernel above its roof by more than 3%", "none above 103%", "issue 51", count=True)
    placed, above, aside = 0, [], 0
    for b in bl.r.get("benchmarks", []):
        pl = b.get("placement")
        if not pl or pl.get("roof_pct") is None:
            continue
        placed += 1
        if pl["roof_pct"] <= 103:
            continue
        warm = (b.get("measurement") or {}).get("cold_cache") is False and pl.get("bound") == "memory"
        if not pl.get("implausible") and (pl.get("roof_clock") == "sustained" or warm):
            aside += 1
            continue
        above.append((pl["roof_pct"], b["name"], binding_roof(pl)))
    if not placed:
        return row.missing("no placed kernel")
    if not above:
        text = f"none above, of {placed} placed"
    else:
        above.sort(reverse=True)
        text = f"{len(above)} of {placed} placed, the highest " + ", ".join(
            f"`{n}` {pct:.0f}% ({roof})" for pct, n, roof in above[:3]) + (", …" if len(above) > 3 else "")
    if aside:
        text += (f"; {aside} above a roof that is no upper bound for it (the sustained roof of its clock, or a "
                 f"memory roof timed warm), held by the gate")
    return row.judge(text, not above, len(above))


def binding_roof(pl):
    """The ceilings of the roof that binds a placement (roofline/model.h, binding_ceilings)."""
    key = {"compute": "compute_ceiling", "launch": "launch_ceiling",
           "transcendental": "transcendental_ceiling"}.get(pl.get("bound"), "bandwidth_ceiling")
    return pl.get(key) or "?"


def sample_cap_row(bl):
    """Tiny kernels stop by their noise rules: none at the sample cap."""
    row = Row("kernels stopped at the sample cap", "none", "issue 51", count=True)
    sampled = [b for b in bl.r.get("benchmarks", []) if (b.get("measurement") or {}).get("stop_reason")]
    if not sampled:
        return row.missing("no benchmark records why its sampling stopped")
    capped = [b["name"] for b in sampled if b["measurement"]["stop_reason"] == "max_samples"]
    cap = (bl.r.get("settings") or {}).get("max_samples")
    text = f"{len(capped)} of {len(sampled)}" + (f" at {cap} samples" if cap else "")
    if capped:
        text += " (" + ", ".join(f"`{n}`" for n in capped[:3]) + (", …" if len(capped) > 3 else "") + ")"
    return row.judge(text, not capped, len(capped))


def graph_node_row(bl, name="launch/graph/fp32/n:1024/ops:1000", ops=1000):
    """One CUDA graph of N kernels: its time per kernel against the graph-node launch ceiling measured in
    the same run (what a node adds), within 1.2x."""
    row = Row("one CUDA graph, N = 1000: time per kernel / the graph-node ceiling's", "≤ 1.2×", "issue 51")
    t, why = bl.time(name)
    if t is None:
        return row.missing(f"{name}: {why}")
    c = bl.ceiling("launch_graph_node")
    if c is None:
        return row.missing("no launch_graph_node ceiling")
    per, node = t / ops, 1 / c["value"]
    return row.judge(f"{per / node:.2f}× ({per * 1e6:.3g} µs per kernel; launch_graph_node "
                     f"{si(c['value'], c['value_unit'])}, {node * 1e6:.3g} µs)", per / node <= 1.2, per / node)


def overlap_row(bl, measured=False):
    """The pinned pipelines' overlap efficiency at the intensity where a chunk's copy in and its kernel
    take about as long (by this run's ceilings and the forms' declared passes): against the roofs
    (issue 23; shown, since issue 51 judges it against the passes as measured), or with measured
    against the passes as the serial form ran them (placement.overlap_measured)."""
    if measured:
        row = Row("overlap efficiency, pinned, where copy ≈ compute, against the measured pass times", "≥ 0.90",
                  "issue 51")
    else:
        row = Row("overlap efficiency, pinned, where copy ≈ compute, against the roofs", "(no target)", "issue 23")
    eff = []
    for name, b in bl.bench.items():
        parts = name.split("/")
        if parts[0] != "overlap" or parts[1] not in ("streams2", "streams4"):
            continue
        pl = b.get("placement")
        if not pl or pl.get("roof_pct") is None or median_of(b) is None:
            continue
        balance = balance_of(bl, b)
        if balance is None:
            continue
        eff.append((abs(math.log(balance)), pl.get("overlap_measured") if measured else pl["roof_pct"] / 100, name,
                    balance))
    if not eff:
        return row.missing("no placed pinned overlap form (with its passes' ceilings measured)")
    closest = min(x[0] for x in eff)
    at = [x for x in eff if x[0] == closest]
    if measured:
        at = [x for x in at if x[1] is not None]
        if not at:
            return row.missing("no placement.overlap_measured: the serial form is missing, or the file predates it "
                               "(`roofbench report` derives it from the file)")
    best = max(at, key=lambda x: x[1])
    return row.judge(f"{best[1]:.2f} (`{best[2]}`: kernel / copy-in time by the roofs {best[3]:.2f})",
                     best[1] >= 0.90 if measured else None, best[1])


def balance_of(bl, b):
    """A form's kernel pass time over its copy-in pass time, each at its roof."""
    copy_t = kernel_t = None
    for ph in b.get("phases") or []:
        if ph.get("ceiling"):
            if "h2d" in ph["ceiling"]:
                c = bl.ceiling(ph["ceiling"])
                if c is None:
                    return None
                copy_t = ph["bytes"] / c["value"]
        else:
            fma, dram = bl.ceiling("fp32_fma"), bl.ceiling("dram_copy")
            if fma is None or dram is None:
                return None
            kernel_t = max(ph.get("flops", 0) / fma["value"], ph.get("bytes", 0) / dram["value"])
    if not copy_t or not kernel_t:
        return None
    return kernel_t / copy_t


def counts_text(verdicts):
    """A compare or ab JSON's verdict counts: "3 FASTER, 41 SAME" (those that are not 0)."""
    counts = (verdicts.get("summary") or {}).get("counts") or {}
    return counts, ", ".join(f"{n} {v}" for v, n in sorted(counts.items()) if n) or "no benchmarks"


def agreement_row(bl):
    row = Row("two quick runs compared (repeatability)", "verdicts committed", "issue 17")
    if bl.agreement is None:
        return row.missing("no agreement.json (the repeat stage adds it)")
    return row.judge(counts_text(bl.agreement)[1], None)


def aa_row(bl):
    """Issue 51: `roofbench ab` of the binary against itself (the repeat stage's A/A). Any FASTER or
    SLOWER is a false verdict. Not met either where a kernel failed in a round (FAILED; or, failed
    in a round of the first build, listed as only in the other), or came out IMPLAUSIBLE. (An ab
    whose round could not run writes no ab.json: the repeat stage's summary says so.)"""
    row = Row("`roofbench ab` of the binary against itself (A/A): false verdicts",
              "none, and no kernel failed or implausible", "issue 51", count=True)
    if bl.aa is None:
        return row.missing("no ab.json (the repeat stage adds it)")
    counts, text = counts_text(bl.aa)
    false = counts.get("FASTER", 0) + counts.get("SLOWER", 0)
    lost = len(bl.aa.get("only_in_base") or []) + len(bl.aa.get("only_in_new") or [])
    if lost:
        text += f", {lost} in one build's rounds only"
    return row.judge(f"{false} ({text}; {len(bl.aa.get('rounds') or [])} rounds)",
                     false == 0 and not lost and not counts.get("FAILED") and not counts.get("IMPLAUSIBLE"), false)


def rows(bl):
    read_want = 0.94 if bl.h200 else (0.90 if bl.h100 else None)
    n28, g, i51 = "n:268435456", "issue 17", "issue 51"
    out = [
        ceiling_ratio(bl, "HBM read ceiling / datasheet", "dram_read", "datasheet", read_want, g),
        ceiling_ratio(bl, "HBM copy ceiling / cudaMemcpy (same run)", "dram_copy", "dram_memcpy", 1.0, i51, forms=True),
        ceiling_ratio(bl, "HBM copy ceiling / datasheet", "dram_copy", "datasheet", None, g, forms=True),
        ceiling_ratio(bl, "FP32 FMA ceiling / SMs × 128 × 2 × measured clock", "fp32_fma", "theoretical", 0.94, g),
        ceiling_ratio(bl, "mma.sync BF16 ceiling / dense BF16 datasheet", "bf16_mma_sync", "datasheet", 0.61, g),
        ceiling_ratio(bl, "wgmma BF16 ceiling / dense BF16 datasheet", "bf16_wgmma", "datasheet", 0.90, g),
        gemm_ratio(bl, "best SIMT SGEMM / cuBLAS, 4096³", None, "fp32", 4096, "simt", 0.90, i51),
        gemm_ratio(bl, "WMMA BF16 / cuBLAS, 8192³", {"wmma"}, "bf16", 8192, None, 0.50, i51),
        gemm_ratio(bl, "mma.sync + ldmatrix BF16 / cuBLAS, 8192³", {"mma_sync"}, "bf16", 8192, None, 0.65, i51),
        gemm_ratio(bl, "wgmma BF16 / cuBLAS, 8192³, at the same clock", {"wgmma", "wgmma_bn128", "wgmma_persistent"},
                   "bf16", 8192, None, 0.95, i51, same_clock=True),
        time_ratio(bl, "sin²+cos² unfused / fused, 2^28 FP32", f"fusion/sincos_unfused/fp32/{n28}",
                   f"fusion/sincos_fused/fp32/{n28}", 5, None, g),
        fused_share_row(bl, n28),
        time_ratio(bl, "ReLU FP32 / FP16 time, 2^28", f"lowprec/relu/fp32/{n28}", f"lowprec/relu/fp16/{n28}", 1.8,
                   2.2, g, "≈ 2× (1.8× to 2.2×)"),
        time_ratio(bl, "ReLU FP32 / BF16 time, 2^28", f"lowprec/relu/fp32/{n28}", f"lowprec/relu/bf16/{n28}", None,
                   None, g),
        time_ratio(bl, "divergence: 32-way divergent / uniform time", *div_names(bl, "divergent"), None, None, g),
        time_ratio(bl, "divergence: 32-way divergent / branchless time", *div_names(bl, "divergent", "branchless"),
                   None, None, g),
        l2_row(bl),
        ceiling_ratio(bl, "shared-memory ceiling / SMs × 128 B/clock × measured clock", "smem_read", "theoretical",
                      0.90, g),
    ]
    out[-1].wanted = "near 1 (≥ 0.90)"
    out += counter_rows(bl)
    out += [
        run_cost_row(bl),
        sample_cap_row(bl),
        spread_row(bl),
        throttle_row(bl),
        above_roof_row(bl),
        agreement_row(bl),
        aa_row(bl),
        # Issue 51: the old 5x was above what the launch paths allow; the graph is held to its node ceiling.
        time_ratio(bl, "launches one by one / one CUDA graph, N = 1000 (time per kernel)",
                   "launch/per_op/fp32/n:1024/ops:1000", "launch/graph/fp32/n:1024/ops:1000", None, None, "issue 23"),
        graph_node_row(bl),
        overlap_row(bl),
        overlap_row(bl, measured=True),
    ]
    return out


def div_names(bl, slow, fast="uniform"):
    """The divergence family's 32-way forms (whatever n and iters the run used)."""
    def find(form):
        for name in bl.bench:
            p = name.split("/")
            if p[0] == "divergence" and p[1] == form and p[-1] == "ways:32":
                return name
        return f"divergence/{form}/…/ways:32"
    return find(slow), find(fast)


def fused_share_row(bl, n):
    row = Row("fused sin²+cos²: bytes/s / HBM copy ceiling, 2^28", "≥ 0.90", "issue 17")
    name = f"fusion/sincos_fused/fp32/{n}"
    t, why = bl.time(name)
    if t is None:
        return row.missing(why)
    # Against the float4 copy, the ceiling the model places the fused kernel on (a pass at the copy's
    # shape stays at dram_copy): the TMA bulk copy is a form the float4 kernel cannot use.
    c = bl.ceiling("dram_copy")
    if c is None:
        return row.missing("no dram_copy ceiling")
    rate = bl.bench[name]["bytes"] / t
    return row.judge(f"{rate / c['value']:.2f} ({si(rate, 'B/s')} / {si(c['value'], 'B/s')})", rate / c["value"] >= 0.9,
                     rate / c["value"])


def l2_row(bl):
    """The L2 roof: the fastest of the working sets measured (l2_read is 16 MiB; files before the
    sweep have only it), named with the others' values where there are several."""
    row = Row("L2 read ceiling", "≥ 9.5 TB/s" if bl.h200 else "(no target for this GPU)", "issue 51")
    sweep = bl.forms("l2_read")
    if not sweep:
        return row.missing("no l2_read ceiling")
    c = max(sweep, key=lambda x: x["value"])
    text = si(c["value"], "B/s")
    if len(sweep) > 1:
        text += f" (`{c['name']}`; " + ", ".join(f"`{x['name']}` {si(x['value'], 'B/s')}" for x in sweep if x is not c) + ")"
    return row.judge(text, c["value"] >= 9.5e12 if bl.h200 else None, c["value"] / 1e12)


def visits_of(bl, folder, root):
    """Every baseline folder under root whose results hold the same device model as bl's, bl's first."""
    out = [(os.path.basename(os.path.normpath(folder)), bl)]
    if not root or not os.path.isdir(root):
        return out
    mine = os.path.realpath(folder)
    for name in sorted(os.listdir(root)):
        other = os.path.join(root, name)
        if os.path.realpath(other) == mine or not os.path.isdir(other):
            continue
        try:  # a folder that is not a baseline of roofbench's is no visit
            path = results_file_in(other)
            if path is None:
                continue
            d = read_json(path)
        except (OSError, ValueError, EOFError, lzma.LZMAError):
            continue
        if not isinstance(d, dict) or d.get("schema") != "roofbench.results.v1":
            continue
        if (d.get("device") or {}).get("name") == bl.name:
            out.append((name, Baseline(other)))
    return out


def spread_text(visits, i):
    """Row i across the visits: the range of its figure, and how many met its target."""
    rows = [rows_of_visit[i] for _, rows_of_visit in visits]
    values = [r.value for r in rows if r.value is not None]
    if not values:
        return "—"
    judged = [r for r in rows if r.verdict in ("met", "NOT MET")]
    met = sum(1 for r in judged if r.verdict == "met")
    form = "{:.0f}" if rows[0].count else "{:.2f}"
    lo, hi = form.format(min(values)), form.format(max(values))
    span = lo if lo == hi else f"{lo} to {hi}"
    text = f"{span} over {len(values)}"
    if judged:
        text += f", met in {met} of {len(judged)}"
        if 0 < met < len(judged):
            text += ": MET ON SOME, NOT ALL"
    return text


def visit_line(name, bl):
    d = bl.r.get("device", {})
    limit = d.get("power_limit_w")
    driver = (f"driver {d['nvidia_driver_version']} (CUDA {d.get('driver_version', '?')})" if d.get("nvidia_driver_version")
              else f"driver {d.get('driver_version', 'not recorded')} (the CUDA driver API's; the NVIDIA driver not recorded)")
    return (f"- `{name}`: GPU {d.get('uuid', 'UUID not recorded')}, {driver}, "
            f"power limit {f'{limit:.0f} W' if isinstance(limit, (int, float)) else 'not recorded'}")


def main():
    ap = argparse.ArgumentParser(description="The GPU baseline's targets from the files the suite wrote")
    ap.add_argument("folder")
    ap.add_argument("--out", help="write the table here (default: stdout)")
    ap.add_argument("--visits", metavar="DIR",
                    help="the folder of baselines whose visits of the same model are spread per target (default: "
                         "the folder's parent, as reports/baselines/ is)")
    a = ap.parse_args()
    bl = Baseline(a.folder)
    root = a.visits if a.visits is not None else os.path.dirname(os.path.abspath(os.path.normpath(a.folder)))
    visits = [(name, rows(b)) for name, b in visits_of(bl, a.folder, root)]
    p = bl.r.get("provenance", {})
    lines = [f"### Targets: {bl.name}", "",
             f"From `results.json` (commit {str(p.get('git_commit', '?'))[:12]}, {p.get('utc_time', '?')})"
             + (", `counters/results.json`" if bl.counters else "")
             + (", `throttle/results.json`" if bl.throttle else "")
             + (", `agreement.json`" if bl.agreement else "")
             + (", `ab.json`" if bl.aa else "")
             + ", written by `scripts/targets.py`; every number is the suite's. `—`: shown, no target.", "",
             f"| target | measured | wanted | verdict | from | across {len(visits)} visit(s) of this model |",
             "|---|---|---|---|---|---|"]
    table = visits[0][1]
    for i, r in enumerate(table):
        cells = [r.what, r.measured, r.wanted, r.verdict, r.source, spread_text(visits, i)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    met = sum(1 for r in table if r.verdict == "met")
    judged = sum(1 for r in table if r.verdict in ("met", "NOT MET"))
    unmeasured = sum(1 for r in table if r.verdict.startswith("not measured"))
    lines += ["", f"{met} of {judged} judged targets met; {unmeasured} not measured.", "",
              f"The visits of {bl.name} (each row's last column: the range of its figure over them):"]
    lines += [visit_line(name, b) for name, b in visits_of(bl, a.folder, root)]
    text = "\n".join(lines) + "\n"
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
