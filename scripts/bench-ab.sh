#!/usr/bin/env bash
# How well does a regression check tell noise from a regression on this machine? Measures both
# paths roofbench offers, on the same kernels and the same machine, and writes what it found:
#   ab       roofbench ab, interleaved rounds of fresh processes of both builds (the new path);
#   compare  two separate runs, then roofbench compare (the old path).
# Each is run REPEATS times as an A/A (one build against itself: every SLOWER or FASTER is a false
# alarm) and as an A/B against a build with a planted regression (examples/fused_op built with
# FUSED_OP_EXTRA_WORK_PERCENT=10: its CPU fused kernel streams 10% more elements than it declares,
# so its rate drops by 9.1%; never a sleep), which must come out SLOWER. The builds are the example project against this build's installed library,
# so each binary holds roofbench's own kernels and the example's.
# It also records where the noise enters: per benchmark, the spread of the rate between fresh
# processes (the A/A rounds), between fresh instances (placements: fresh memory) within one
# process, and within one instance (the first half of its samples against the second half).
# Usage: scripts/bench-ab.sh [BUILD_DIR] [OUT_DIR]
#   env: REPEATS=5 ROUNDS=20 FILTER=... BUDGET=0.25 PLACEMENTS=2 (run --placements)
# 20 rounds: on the 2-vCPU Xeon VM the planted kernel's rate moved 6% (sd) from one fresh process
# to the next, and in the first repeat of 10 rounds its 9.1% drop had p = 0.013, q = 0.08 after
# Benjamini-Hochberg over six kernels; 20 rounds halve the variance of the mean. Two placements
# each keep a round at about 15 s there (the per-process spread, not the per-placement one, was
# the larger).
# Writes OUT_DIR/bench-ab.json and bench-ab.md (the figures the README quotes), and keeps every
# run under OUT_DIR/work/ unless KEEP_WORK=0.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$here/build/release}")
out=${2:-$here/reports/ab/$(hostname -s)}
repeats=${REPEATS:-5}
rounds=${ROUNDS:-20}
filter=${FILTER:-'^(stream/saxpy|lowprec/relu/fp32|fusion/bias_gelu|myops/)'}
budget=${BUDGET:-0.25}
placements=${PLACEMENTS:-2}
[ -x "$build/roofbench" ] || { echo "bench-ab: no $build/roofbench; build first" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-ab.XXXXXX")
trap '[ "${KEEP_WORK:-1}" = 1 ] || rm -rf "$work"' EXIT
log() { echo "== $*" >&2; }

log "install this build and make the two example builds (plain, and +10% work in myops/axpb_relu_fused)"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1
for v in plain:0 planted:10; do
  name=${v%%:*} pct=${v##*:}
  cmake -S "$here/examples/fused_op" -B "$work/$name" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DFUSED_OP_EXTRA_WORK_PERCENT="$pct" >"$work/$name.configure.log" 2>&1
  cmake --build "$work/$name" >"$work/$name.build.log" 2>&1
done
plain=$work/plain/fused_op_bench planted=$work/planted/fused_op_bench
run_opts=(--device cpu --quick --filter "$filter" --budget "$budget" --placements "$placements")

verdicts() {  # FILE.json -> one line of JSON: the verdict per benchmark
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(json.dumps({b["name"]: b["verdict"] for b in c["benchmarks"]}))' "$1"
}

: >"$work/verdicts.jsonl"
for i in $(seq 1 "$repeats"); do
  for kind in aa ab; do
    new=$plain
    [ "$kind" = ab ] && new=$planted
    log "repeat $i/$repeats, $kind: roofbench ab ($rounds rounds)"
    d=$work/$kind-ab-$i
    "$plain" ab "$plain" "$new" --rounds "$rounds" --seed "$i" --out "$d" -- "${run_opts[@]}" >"$d.log" 2>&1 || [ $? = 1 ]
    echo "{\"path\": \"ab\", \"kind\": \"$kind\", \"repeat\": $i, \"dir\": \"$d\", \"verdicts\": $(verdicts "$d/ab.json")}" >>"$work/verdicts.jsonl"

    log "repeat $i/$repeats, $kind: two separate runs and roofbench compare"
    d=$work/$kind-compare-$i
    "$plain" run "${run_opts[@]}" --out "$d/base" >"$d.base.log" 2>&1
    "$new" run "${run_opts[@]}" --out "$d/new" >"$d.new.log" 2>&1
    "$plain" compare "$d/base" "$d/new" --json "$d/compare.json" >"$d.compare.log" 2>&1 || [ $? = 1 ]
    echo "{\"path\": \"compare\", \"kind\": \"$kind\", \"repeat\": $i, \"dir\": \"$d\", \"verdicts\": $(verdicts "$d/compare.json")}" >>"$work/verdicts.jsonl"
  done
done

log "summarise into $out"
python3 - "$work" "$out" "$repeats" "$rounds" "$filter" "$budget" "$placements" <<'PY'
import glob, json, math, os, statistics, subprocess, sys
work, out, repeats, rounds, filt, budget, placements = sys.argv[1:8]
rows = [json.loads(l) for l in open(os.path.join(work, "verdicts.jsonl"))]
planted = "myops/axpb_relu_fused/fp32/"

def tally(path):
    aa = [r for r in rows if r["path"] == path and r["kind"] == "aa"]
    ab = [r for r in rows if r["path"] == path and r["kind"] == "ab"]
    false_alarms = sum(v in ("SLOWER", "FASTER") for r in aa for v in r["verdicts"].values())
    judged = sum(len(r["verdicts"]) for r in aa)
    hits = sum(any(n.startswith(planted) and v == "SLOWER" for n, v in r["verdicts"].items()) for r in ab)
    ab_false = sum(v in ("SLOWER", "FASTER") for r in ab for n, v in r["verdicts"].items() if not n.startswith(planted))
    ab_judged = sum(1 for r in ab for n in r["verdicts"] if not n.startswith(planted))
    counts = {}
    for r in aa:
        for v in r["verdicts"].values():
            counts[v] = counts.get(v, 0) + 1
    return {"aa_repeats": len(aa), "aa_verdicts": judged, "aa_false_alarms": false_alarms, "aa_counts": counts,
            "ab_repeats": len(ab), "planted_detected": hits,
            "ab_other_verdicts": ab_judged, "ab_other_false_alarms": ab_false,
            "planted_verdicts": [v for r in ab for n, v in r["verdicts"].items() if n.startswith(planted)]}

# Where the noise enters, each as the sd of the log ratio of two measurements of the same build:
# two fresh processes (the A/A rounds of ab), two fresh instances in one process (consecutive
# placements), and the two halves of one instance's samples.
def log_median_ratio(a, b):
    return math.log(statistics.median(a) / statistics.median(b))

between, placed, within = {}, {}, {}
for r in rows:
    if r["path"] != "ab" or r["kind"] != "aa":
        continue
    c = json.load(open(os.path.join(r["dir"], "ab.json")))
    for rd in c["rounds"]:
        res = {s: json.load(open(rd[s])) for s in ("base", "new")}
        rate = {s: {b["name"]: b["median_s"] for b in res[s]["benchmarks"] if b.get("median_s")} for s in res}
        for n in rate["base"]:
            if n in rate["new"]:
                between.setdefault(n, []).append(math.log(rate["base"][n] / rate["new"][n]))
        for s in res:
            for b in res[s]["benchmarks"]:
                m = b.get("measurement")
                if not m:
                    continue
                x = m["samples_s"]
                counts = m.get("placement_samples") or [len(x)]
                parts, i = [], 0
                for k in counts:
                    parts.append(x[i:i + k])
                    i += k
                for p, q in zip(parts, parts[1:]):
                    placed.setdefault(b["name"], []).append(log_median_ratio(p, q))
                for p in parts:
                    if len(p) >= 4:
                        h = len(p) // 2
                        within.setdefault(b["name"], []).append(log_median_ratio(p[:h], p[h:]))

def sd_pct(v):
    return 100 * statistics.stdev(v) if len(v) > 1 else None

noise = {n: {"between_processes_sd_pct": sd_pct(between[n]),
             "between_placements_sd_pct": sd_pct(placed.get(n, [])),
             "within_placement_sd_pct": sd_pct(within.get(n, [])),
             "rounds": len(between[n])}
         for n in sorted(between) if len(between[n]) > 1}

first = rows[0]
any_results = glob.glob(os.path.join(first["dir"], "rounds", "01-base", "results.json"))[0]
res = json.load(open(any_results))
result = {
    "schema": "roofbench.bench-ab.v1",
    "device": res["device"], "provenance": res["provenance"],
    "settings": {"repeats": int(repeats), "rounds": int(rounds), "filter": filt, "budget_s": float(budget),
                 "placements": int(placements),
                 "run_options": f"--device cpu --quick --filter '{filt}' --budget {budget} --placements {placements}",
                 "planted": "examples/fused_op built with FUSED_OP_EXTRA_WORK_PERCENT=10: "
                            "myops/axpb_relu_fused streams 10% more elements than it declares (its rate 9.1% lower)"},
    "ab": tally("ab"), "compare": tally("compare"),
    "noise": noise,
    "runs": rows,
}
for r in result["runs"]:
    r["dir"] = os.path.relpath(r["dir"], work)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "bench-ab.json.tmp"), "w") as f:
    json.dump(result, f, indent=2)
os.replace(os.path.join(out, "bench-ab.json.tmp"), os.path.join(out, "bench-ab.json"))

def line(path, t):
    return (f"| {path} | {t['aa_false_alarms']} of {t['aa_verdicts']} ({t['aa_repeats']} repeats) | "
            f"{t['planted_detected']} of {t['ab_repeats']} | {t['ab_other_false_alarms']} of {t['ab_other_verdicts']} |")
md = [f"# Regression check on a noisy machine: interleaved A/B against two separate runs",
      "",
      f"{res['device'].get('name', '?')} ({res['device'].get('kind', '?')}), roofbench {res['provenance'].get('roofbench_version', '?')} "
      f"commit {res['provenance'].get('git_commit', '?')[:12]}, {res['provenance'].get('utc_time', '?')}. "
      f"Written by `scripts/bench-ab.sh`; run options `{result['settings']['run_options']}`; "
      f"ab with {rounds} rounds; {repeats} repeats of each.",
      "",
      "| path | A/A: SLOWER or FASTER (false alarms) | planted 10% slowdown found SLOWER | A/B: false alarms on the other kernels |",
      "|---|---|---|---|",
      line("`roofbench ab` (interleaved rounds)", result["ab"]),
      line("two runs + `roofbench compare`", result["compare"]),
      "",
      "Where the noise enters (sd of the log ratio of two medians, percent): two fresh processes, two fresh "
      "instances (fresh memory) in one process, the two halves of one instance's samples.",
      "",
      "| benchmark | between processes | between instances in a process | within an instance | rounds |",
      "|---|--:|--:|--:|--:|"]
def cell(v):
    return "—" if v is None else f"{v:.1f}%"
for n, v in noise.items():
    md.append(f"| `{n}` | {cell(v['between_processes_sd_pct'])} | {cell(v['between_placements_sd_pct'])} | "
              f"{cell(v['within_placement_sd_pct'])} | {v['rounds']} |")
with open(os.path.join(out, "bench-ab.md"), "w") as f:
    f.write("\n".join(md) + "\n")
print("\n".join(md))
PY
