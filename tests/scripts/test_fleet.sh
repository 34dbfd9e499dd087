#!/usr/bin/env bash
# A planted outlier (issue 24): three real CPU runs of the same machine, one of them throttled on
# purpose, go to `roofbench fleet`: exactly that run is flagged, on a DRAM ceiling, exit 1; the
# two healthy runs alone are not judged (fewer than three) and exit 0.
# The throttle: one OpenMP thread, pinned to one CPU that a spinning process shares with it, so
# the run gets about half of one CPU. One thread alone is not enough: on a 2-vCPU VM whose vCPUs
# are SMT siblings or whose DRAM path one core nearly fills, one thread reads nearly as fast as
# two (13-17% below on a Zen 4 VM, a few points from the 10% threshold; a CI run failed here).
# Shared with a spinner, it reads 50-72% below there. A healthy run is never flagged: with the
# throttled run lowest, the lower healthy run is each figure's median.
# Usage: test_fleet.sh ROOFBENCH
set -uo pipefail
bin=$1
tmp=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# DRAM copy and update: saxpy is placed against the better of the two (against copy alone it sat at
# 75-85%, close enough for a run whose roofs were measured in a slow moment to be refused by the
# plausibility gate, and this test to fail on a verdict it is not about; the better roof leaves it
# more room, not all it could want).
run=(run --device cpu --quick --budget 0.1 --filter '^stream/saxpy/' --skip 'ceiling/(dram_(read|write|memcpy|triad)|l1|l2|l3|fp|math|launch)')
"$bin" "${run[@]}" --out "$tmp/runs/healthy-1" >"$tmp/healthy-1.log" 2>&1 || { tail "$tmp/healthy-1.log"; fail "healthy-1 exited $?"; }
# The second through --device all: on the CPU backend it runs once, into OUT/<host>-cpu.
"$bin" run --device cpu --concurrent --quick --filter '^stream/saxpy/' --out "$tmp/x" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--concurrent without --device all was not refused"
run_all=("${run[@]}")
run_all[2]=all
"$bin" "${run_all[@]}" --out "$tmp/runs/all" >"$tmp/all.log" 2>&1 || { tail "$tmp/all.log"; fail "--device all exited $?"; }
healthy2=$(ls -d "$tmp"/runs/all/*-cpu 2>/dev/null)
[ "$(ls "$tmp/runs/all" | wc -l)" = 1 ] && [ -s "$healthy2/results.json" ] ||
  fail "--device all on the CPU: expected one folder <host>-cpu: $(ls -R "$tmp/runs/all")"
cpu=$(awk '/^Cpus_allowed_list:/ { split($2, a, /[,-]/); print a[1] }' /proc/self/status)
[ -n "$cpu" ] || fail "no CPU in this process's Cpus_allowed_list"
taskset -c "$cpu" bash -c 'while :; do :; done' &
hog=$!
sleep 0.2
kill -0 "$hog" 2>/dev/null || fail "the spinning process could not be pinned to CPU $cpu"
OMP_NUM_THREADS=1 taskset -c "$cpu" "$bin" "${run[@]}" --out "$tmp/runs/throttled" >"$tmp/throttled.log" 2>&1 ||
  { tail "$tmp/throttled.log"; fail "throttled exited $?"; }
kill "$hog"; wait "$hog" 2>/dev/null; hog=
[ "$(json "$tmp/runs/throttled/results.json" 'd["device"]["threads"]')" = 1 ] || fail "the throttled run did not run on one thread"

"$bin" fleet "$tmp/runs" --threshold 10 --out "$tmp/fleet" >"$tmp/fleet.txt" 2>&1
rc=$?
cat "$tmp/fleet.txt"
[ $rc -eq 1 ] || fail "fleet exited $rc with an outlier planted, expected 1"
for f in fleet.json fleet.md fleet.html; do [ -s "$tmp/fleet/$f" ] || fail "no $f"; done
flagged=$(json "$tmp/fleet/fleet.json" '[x["label"] for g in d["groups"] for x in g["devices"] if x["outlier"]]')
[ "$flagged" = "['throttled']" ] || fail "flagged $flagged, expected exactly the throttled run"
why=$(json "$tmp/fleet/fleet.json" '[w for g in d["groups"] for x in g["devices"] for w in x["why"]]')
grep -q 'ceiling dram_' <<<"$why" || fail "the throttled run is not flagged on a DRAM ceiling: $why"
# The plant is at least as deep as the issue's 20%: some DRAM ceiling of the throttled run that far below.
deep=$(json "$tmp/fleet/fleet.json" 'max(100 * (1 - f["values"][i] / f["median"])
  for g in d["groups"] for i, x in enumerate(g["devices"]) if x["label"] == "throttled"
  for f in g["figures"] if f["ceiling"] and f["name"].startswith("dram_"))')
[ "${deep%.*}" -ge 20 ] 2>/dev/null ||
  fail "the throttled run's DRAM ceilings are at most $deep% below the median, the plant wants 20%: $why"

"$bin" fleet "$tmp/runs/healthy-1" "$healthy2" >"$tmp/two.txt" 2>&1 || fail "two healthy runs: exit $?"
grep -q 'not judged' "$tmp/two.txt" || fail "two runs were judged: $(cat "$tmp/two.txt")"
"$bin" fleet "$tmp/runs/healthy-1" >/dev/null 2>&1
[ $? -eq 2 ] || fail "one file: expected exit 2"
echo "PASS: the throttled run, and only it, flagged"
