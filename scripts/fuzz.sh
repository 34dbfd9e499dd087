#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (preset `fuzz`: clang, AddressSanitizer and
# UndefinedBehaviorSanitizer over the whole library) and runs each for SECONDS from a seed corpus:
# the committed results files (reports/baselines/, tests/fixtures/), the calibration file, ncu
# CSV and command lines under tests/fuzz/seeds/. Every input must end within 1 s and 2 GiB; a
# crash, a sanitizer report, a time-out or an escaped exception leaves its input under
# OUT/crashes/ and fails the run.
# Usage: scripts/fuzz.sh [SECONDS] [OUT_DIR]   (default 30 s per target, OUT build/fuzz-runs)
#   env: FUZZ_TARGETS="results command_line noise ncu_csv metric_list" to run fewer
# Prints, and writes to OUT/fuzz.md and OUT/fuzz.json, per target: executions, executions per
# second, seconds, corpus size, peak memory, findings.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
out=$(realpath -m "${2:-$here/build/fuzz-runs}")
targets=${FUZZ_TARGETS:-results command_line noise ncu_csv metric_list}
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;; esac

cd "$here"
./scripts/setup.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target $(printf 'fuzz_%s ' $targets) >/dev/null

rm -rf "$out"
mkdir -p "$out/crashes"
seeds=$out/seeds
for t in $targets; do mkdir -p "$seeds/$t" "$out/corpus/$t"; done
# Seeds: every committed results file, and the other kinds from tests/fuzz/seeds/.
i=0
if [ -d "$seeds/results" ]; then
  for f in reports/baselines/*/results.json tests/fixtures/*.json; do cp "$f" "$seeds/results/$((i += 1)).json"; done
fi
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

failed=0
: >"$out/rows.jsonl"
for t in $targets; do
  dict=()
  case "$t" in results | noise) dict=(-dict="$here/tests/fuzz/json.dict") ;; esac
  log=$out/$t.log
  start=$EPOCHREALTIME
  rc=0
  # ASan's leak check stays on; -timeout=1 makes any input over a second a finding.
  "build/fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/$t-" "${dict[@]}" "$out/corpus/$t" "$seeds/$t" >"$log" 2>&1 || rc=$?
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n1; }
  findings=$(find "$out/crashes" -name "$t-*" | wc -l)
  [ "$rc" -eq 0 ] && [ "$findings" -eq 0 ] || failed=1
  printf '{"target": "%s", "executions": %s, "exec_per_s": %s, "seconds": %.0f, "corpus": %s, "peak_rss_mb": %s, "findings": %s, "exit": %s}\n' \
    "$t" "$(stat number_of_executed_units || echo 0)" "$(stat average_exec_per_sec || echo 0)" "$wall" \
    "$(find "$out/corpus/$t" -type f | wc -l)" "$(stat peak_rss_mb || echo 0)" "$findings" "$rc" >>"$out/rows.jsonl"
done

python3 - "$out" "$seconds" <<'PY'
import json, os, platform, subprocess, sys, time
out, seconds = sys.argv[1], int(sys.argv[2])
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
doc = {"schema": "roofbench.fuzz.v1", "provenance": provenance, "seconds_per_target": seconds, "timeout_s": 1,
       "rss_limit_mb": 2048, "sanitizers": "address, undefined (no recovery), leak", "targets": rows}
with open(os.path.join(out, "fuzz.json"), "w") as f:
    json.dump(doc, f, indent=2)
md = [f"`scripts/fuzz.sh {seconds}` on {cpu} ({os.cpu_count()} cores), commit {provenance['git_commit'][:12]}"
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
  echo "fuzz: FAILED: findings under $out/crashes (reproduce: build/fuzz/tests/fuzz/fuzz_TARGET FILE); logs $out/*.log" >&2
  exit 1
fi
echo "fuzz: no findings; logs and corpora under $out"
