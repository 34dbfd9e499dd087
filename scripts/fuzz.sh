#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (preset `asan`: clang, AddressSanitizer and
# UndefinedBehaviorSanitizer over the whole library) and runs each for SECONDS from a seed corpus:
# the committed results files (reports/baselines/, tests/fixtures/; their per-sample lists cut to
# 8 entries, so that one input stays under 64 KiB), the calibration file, ncu CSV and command
# lines under tests/fuzz/seeds/. Every input must end within 1 s and 2 GiB; a crash, a sanitizer
# report, a time-out or an escaped exception leaves its input under OUT/crashes/ and fails the run.
# Usage: scripts/fuzz.sh [SECONDS] [OUT_DIR]   (default 30 s per target, OUT build/fuzz-runs)
#   env: FUZZ_TARGETS="results compare_history command_line noise ncu_csv metric_list" to run fewer
#        FUZZ_RUNS=N    each target stops after N executions (SECONDS is then its cap)
#        FUZZ_JOBS=N    targets run at once (default: the number of cores)
# Prints, and writes to OUT/fuzz.md and OUT/fuzz.json, per target: executions, executions per
# second, seconds, corpus size, peak memory, findings.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
out=$(realpath -m "${2:-$here/build/fuzz-runs}")
targets=${FUZZ_TARGETS:-results compare_history command_line noise ncu_csv metric_list}
runs=${FUZZ_RUNS:-}
jobs=${FUZZ_JOBS:-$(nproc)}
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;; esac
case "$runs" in *[!0-9]*) echo "fuzz: FUZZ_RUNS must be a whole number, got '$runs'" >&2; exit 2 ;; esac
case "$jobs" in '' | 0 | *[!0-9]*) echo "fuzz: FUZZ_JOBS must be a positive number, got '$jobs'" >&2; exit 2 ;; esac

cd "$here"
./scripts/setup.sh
cmake --preset asan >/dev/null
cmake --build --preset asan --target $(printf 'fuzz_%s ' $targets) >/dev/null

rm -rf "$out"
mkdir -p "$out/crashes"
seeds=$out/seeds
for t in $targets; do mkdir -p "$seeds/$t" "$out/corpus/$t"; done
# Seeds: every committed results file, cut down, and the other kinds from tests/fuzz/seeds/.
if [ -d "$seeds/results" ] || [ -d "$seeds/compare_history" ]; then
  mkdir -p "$seeds/results"
  python3 - "$seeds/results" reports/baselines/*/results.json* tests/fixtures/*.json <<'PY'
import gzip, json, lzma, sys
# Per-sample lists (samples, clocks, placements' samples) cut to 8 entries and the indexes into
# them kept in range: the file stays one the reader takes, with every field it had.
def cut(v):
    if isinstance(v, list):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            return v[:8]
        return [cut(x) for x in v]
    if isinstance(v, dict):
        d = {k: cut(x) for k, x in v.items()}
        if isinstance(d.get("throttled_samples"), list):
            d["throttled_samples"] = [i for i in v["throttled_samples"] if isinstance(i, int) and i < 8]
        return d
    return v
for i, path in enumerate(sys.argv[2:], 1):
    opener = lzma.open if path.endswith(".xz") else gzip.open if path.endswith(".gz") else open
    text = json.dumps(cut(json.load(opener(path, "rt"))), separators=(",", ":"))
    open(f"{sys.argv[1]}/{i}.json", "w").write(text)
    if i <= 2:  # the reader takes them compressed too: the first two also as xz and gzip
        open(f"{sys.argv[1]}/{i}.json.xz", "wb").write(lzma.compress(text.encode()))
        open(f"{sys.argv[1]}/{i}.json.gz", "wb").write(gzip.compress(text.encode(), mtime=0))
PY
fi
if [ -d "$seeds/compare_history" ]; then cp "$seeds"/results/*.json "$seeds/compare_history/"; fi
if [ -d "$seeds/noise" ]; then cp tests/fuzz/seeds/noise.json "$seeds/noise/"; fi
if [ -d "$seeds/ncu_csv" ]; then cp tests/fuzz/seeds/ncu.csv "$seeds/ncu_csv/"; fi
if [ -d "$seeds/command_line" ]; then  # one command line a file, its words split by NUL bytes
  i=0
  while read -r line; do
    i=$((i + 1))  # (not inside the pipeline's redirection: that runs in a subshell)
    printf '%s' "$line" | tr ' ' '\0' >"$seeds/command_line/$i"
  done <tests/fuzz/seeds/command_lines.txt
fi
if [ -d "$seeds/metric_list" ]; then
  i=0
  while read -r line; do
    i=$((i + 1))
    printf '%s' "$line" >"$seeds/metric_list/$i"
  done <tests/fuzz/seeds/metric_list.txt
fi

# One target: its log, then a line of figures in OUT/rows/TARGET.json.
fuzz_one() {
  local t=$1 log=$out/$1.log start=$EPOCHREALTIME rc=0 extra=()
  case "$t" in results | noise) extra+=(-dict="$here/tests/fuzz/json.dict") ;; esac
  case "$t" in results) extra+=(-max_len=65536) ;; esac
  [ -n "$runs" ] && extra+=(-runs="$runs")
  # ASan's leak check stays on; -timeout=1 makes any input over a second a finding.
  "build/asan/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/$t-" "${extra[@]}" "$out/corpus/$t" "$seeds/$t" >"$log" 2>&1 || rc=$?
  local wall findings
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n1; }
  findings=$(find "$out/crashes" -name "$t-*" | wc -l)
  printf '{"target": "%s", "executions": %s, "exec_per_s": %s, "seconds": %.0f, "corpus": %s, "peak_rss_mb": %s, "findings": %s, "exit": %s}\n' \
    "$t" "$(stat number_of_executed_units || echo 0)" "$(stat average_exec_per_sec || echo 0)" "$wall" \
    "$(find "$out/corpus/$t" -type f | wc -l)" "$(stat peak_rss_mb || echo 0)" "$findings" "$rc" >"$out/rows/$t.json"
}

mkdir -p "$out/rows"
running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
: >"$out/rows.jsonl"
failed=0
for t in $targets; do
  [ -f "$out/rows/$t.json" ] || { echo "fuzz: $t wrote no figures (see $out/$t.log)" >&2; failed=1; continue; }
  cat "$out/rows/$t.json" >>"$out/rows.jsonl"
  grep -q '"findings": 0, "exit": 0}' "$out/rows/$t.json" || failed=1
done

python3 - "$out" "$seconds" "$runs" "$jobs" <<'PY'
import json, os, platform, subprocess, sys, time
out, seconds, runs, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rows = [json.loads(l) for l in open(os.path.join(out, "rows.jsonl"))]
def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
provenance = {"git_commit": sh("git", "rev-parse", "HEAD"),
              "git_dirty": bool(sh("git", "status", "--porcelain", "--untracked-files=no")),
              "utc_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "host_cpu": cpu, "cores": os.cpu_count(), "compiler": sh("clang++", "--version").splitlines()[0]}
doc = {"schema": "roofbench.fuzz.v1", "provenance": provenance, "seconds_per_target": seconds,
       "runs_per_target": int(runs) if runs else None, "targets_at_once": jobs, "timeout_s": 1,
       "rss_limit_mb": 2048, "sanitizers": "address, undefined (no recovery), leak", "targets": rows}
with open(os.path.join(out, "fuzz.json"), "w") as f:
    json.dump(doc, f, indent=2)
how = f"FUZZ_RUNS={runs} " if runs else ""
md = [f"`{how}scripts/fuzz.sh {seconds}` ({jobs} targets at once) on {cpu} ({os.cpu_count()} cores), commit {provenance['git_commit'][:12]}"
      f"{' (dirty)' if provenance['git_dirty'] else ''}, {provenance['utc_time']}, {provenance['compiler']}; "
      "AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer; 1 s and 2 GiB per input.", "",
      "| target | executions | per second | seconds | corpus | peak memory | findings |", "|---|--:|--:|--:|--:|--:|--:|"]
for r in rows:
    md.append(f"| `fuzz_{r['target']}` | {r['executions']:,} | {r['exec_per_s']:,} | {r['seconds']} | {r['corpus']} | "
              f"{r['peak_rss_mb']} MB | {r['findings']}{'' if r['exit'] == 0 else ' (exit ' + str(r['exit']) + ')'} |")
open(os.path.join(out, "fuzz.md"), "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
if [ "$failed" -ne 0 ]; then
  echo "fuzz: FAILED: findings under $out/crashes (reproduce: build/asan/tests/fuzz/fuzz_TARGET FILE); logs $out/*.log" >&2
  exit 1
fi
echo "fuzz: no findings; logs and corpora under $out"
