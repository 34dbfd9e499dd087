#!/usr/bin/env bash
# scripts/slurm/ for real: a one-node Slurm cluster of this machine (munged, slurmctld and slurmd
# started here on localhost, on free ports, configured in a temporary folder), a sweep submitted
# with scripts/slurm/submit.sh: a job array of three CPU quick runs (`--device all`, filtered to two
# kernels and three ceilings) and the dependent fleet job. Checks the merged fleet report (three
# members, every figure, each from its own task's folder), the coverage file and both jobs' exit
# codes; then a second sweep into the same folder whose runs all fail and whose --nodes names a
# node that does not exist: the fleet job must name both failed tasks and the uncovered node,
# take nothing of the first sweep's records or runs, and exit 1. When Slurm cannot start
# (packages missing, a daemon that dies), the test says why and FAILS: it never passes without
# running the jobs.
# Usage: test_slurm.sh ROOFBENCH
set -uo pipefail
bin=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/roofbench-slurm.XXXXXX)
chmod 700 "$tmp"
# Never the caller's cluster: its configuration stays out of sight, and only the test's own
# controller, once started, is asked to cancel anything.
unset SLURM_CONF SLURM_JOB_ID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID
own_cluster=0
pids=()
cleanup() {
  [ $own_cluster = 1 ] && scancel --quiet -u "$(id -un)" 2>/dev/null
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [ -f "$tmp/munged.pid" ] && kill "$(cat "$tmp/munged.pid")" 2>/dev/null
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in slurmctld.log slurmd.log munged.log; do
    [ -s "$tmp/$f" ] && { echo "--- $f (last lines)" >&2; tail -15 "$tmp/$f" >&2; }
  done
  exit 1
}

for t in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  command -v "$t" >/dev/null || fail "no $t on PATH: Slurm cannot start here (scripts/setup.sh installs slurm-wlm and munge)"
done

# munge: its own key and socket in the temporary folder.
mungekey --create --keyfile="$tmp/munge.key" >/dev/null 2>&1 || fail "mungekey could not create a key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" 2>"$tmp/munged.err" ||
  fail "munged did not start: $(cat "$tmp/munged.err")"
munge -S "$tmp/munge.sock" -n </dev/null | unmunge -S "$tmp/munge.sock" >/dev/null 2>&1 ||
  fail "munged started but does not encode and decode a credential"

# Two free TCP ports for slurmctld and slurmd.
read -r ctld_port d_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
node=$(hostname -s)
user=$(id -un)
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=roofbenchtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=roofbench Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
own_cluster=1
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 1 60); do
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a Slurm daemon exited at start: $(tail -3 "$tmp/slurmctld.out" "$tmp/slurmd.out")"; done
  [ "$(sinfo -h -n "$node" -o %T 2>/dev/null)" = idle ] && { up=1; break; }
  sleep 0.5
done
[ $up = 1 ] || fail "the node did not come up idle in 30 s (sinfo: $(sinfo 2>&1 | tail -2))"
echo "== Slurm up: slurmctld :$ctld_port, slurmd :$d_port, node $node idle ($(sinfo -V))"

# wait_job ID SECONDS: until the job leaves the queue; prints its state and exit code.
wait_job() {
  local id=$1 limit=$2 t=0
  while [ -n "$(squeue -h -j "$id" 2>/dev/null)" ]; do
    [ $t -lt $((limit * 2)) ] || fail "job $id still queued or running after $limit s: $(squeue 2>&1)"
    sleep 0.5
    t=$((t + 1))
  done
  scontrol show job "$id" | grep -oE 'JobState=[A-Z_]+|ExitCode=[0-9]+:[0-9]+' | paste -sd' '
}

# A sweep: three tasks of a quick CPU run, small and fast. The fleet's threshold is 99%: this
# test checks the plumbing, and it runs beside other tests, whose load can take a run's figures
# far down (a task's L1 ceiling came out 94% below the other two's beside a quick run). The
# planted-outlier test, which runs alone, checks the verdict. No DRAM ceiling: saxpy and ReLU
# are left unplaced (a fleet compares rates, not placements), so no task can be refused by the
# plausibility gate for a DRAM roof it measured while the other tests held the cores.
fleet=$tmp/fleet
run_opts=(--quick --budget 0.05 --filter '^(stream/saxpy|lowprec/relu/fp32)/'
          --skip 'ceiling/(dram_|l2_|l3_|fp64|math_|launch_)')
ROOFBENCH=$bin bash "$src/scripts/slurm/submit.sh" "$fleet" --tasks 3 --fleet --threshold=99 -- "${run_opts[@]}" \
  >"$tmp/submit.out" 2>&1 || fail "submit.sh: $(cat "$tmp/submit.out")"
cat "$tmp/submit.out"
array=$(sed -n 's/^array=//p' "$tmp/submit.out") fleet_job=$(sed -n 's/^fleet=//p' "$tmp/submit.out")
[ -n "$array" ] && [ -n "$fleet_job" ] || fail "submit.sh printed no job IDs"
state=$(wait_job "$fleet_job" 240)
echo "== fleet job $fleet_job: $state"
for i in 0 1 2; do
  s=$(scontrol show job "${array}_$i" | grep -oE 'JobState=[A-Z_]+|ExitCode=[0-9]+:[0-9]+' | paste -sd' ')
  [ "$s" = "JobState=COMPLETED ExitCode=0:0" ] || fail "array task $i: $s ($(cat "$fleet/roofbench-node-${array}_$i.out" 2>/dev/null | tail -5))"
done
[ "$state" = "JobState=COMPLETED ExitCode=0:0" ] ||
  fail "the fleet job: $state; its output: $(cat "$fleet/roofbench-fleet-$fleet_job.out" 2>/dev/null | tail -20)"
for f in fleet.json fleet.md fleet.html coverage.txt; do [ -s "$fleet/report/$f" ] || fail "no report/$f"; done
grep -q '^every task ran and exited 0$' "$fleet/report/coverage.txt" || fail "coverage: $(cat "$fleet/report/coverage.txt")"
grep -q "^node $node: 3 tasks" "$fleet/report/coverage.txt" || fail "coverage does not say the node ran three tasks"
python3 - "$fleet" "$array" <<'PY' || fail "the fleet report is not the sweep's"
import json, os, sys
fleet, array = sys.argv[1], sys.argv[2]
f = json.load(open(os.path.join(fleet, "report", "fleet.json")))
assert f["schema"] == "roofbench.fleet.v1", f["schema"]
groups = f["groups"]
assert len(groups) == 1, [g["model"] for g in groups]
g = groups[0]
paths = sorted(m["path"] for m in g["devices"])
assert len(paths) == 3, paths
# One results file per task, each in that task's own folder (runs/<host>-<job>-<task>/<host>-cpu).
for task, p in enumerate(paths):
    rel = os.path.relpath(p, os.path.join(fleet, "runs"))
    assert rel.split(os.sep)[0].endswith(f"-{array}-{task}"), rel
    r = json.load(open(p))
    assert r["partial"] is None and all(b["verified"] for b in r["benchmarks"]), p
assert g["judged"] is True, "three members and not judged"
names = {x["name"] for x in g["figures"]}
ceilings = {x["name"] for x in g["figures"] if x["ceiling"]}
assert {"fp32_fma", "l1_read"} <= ceilings and not any(c.startswith("dram_") for c in ceilings), sorted(ceilings)
kernels = sorted(names - ceilings)
assert any(n.startswith("stream/saxpy/") for n in kernels) and any(n.startswith("lowprec/relu/fp32/") for n in kernels), kernels
for x in g["figures"]:
    assert len(x["values"]) == 3 and all(v is not None and v > 0 for v in x["values"]), x
    assert x["median"] > 0, x
assert not any(any(x["low"]) for x in g["figures"]) and f["flagged"] == 0, "a run was flagged at a 99% threshold"
print(f"fleet report: 1 group, 3 members (one per task), {len(g['figures'])} figures, {len(kernels)} kernels, none flagged")
PY
grep -q "OUTLIER" "$fleet/report/fleet.md" && fail "fleet.md flags an outlier"

# A second sweep into the same folder: its runs all fail (a filter that matches nothing: exit 2
# at once) and its node list names a node that does not exist. The fleet job must name both
# failed tasks and the uncovered node, leave the first sweep's records and runs out (its
# --job), say that roofbench fleet had no runs to read, and exit 1.
ROOFBENCH=$bin bash "$src/scripts/slurm/submit.sh" "$fleet" --nodes "$node,nosuchnode" --fleet --threshold=99 \
  -- --quick --filter '^no-such-kernel$' >"$tmp/submit2.out" 2>&1 || fail "submit.sh (second sweep): $(cat "$tmp/submit2.out")"
array2=$(sed -n 's/^array=//p' "$tmp/submit2.out") fleet_job2=$(sed -n 's/^fleet=//p' "$tmp/submit2.out")
state2=$(wait_job "$fleet_job2" 240)
echo "== fleet job $fleet_job2 (failed tasks, a node not covered): $state2"
cat "$fleet/report/coverage.txt"
[ "$state2" = "JobState=FAILED ExitCode=1:0" ] || fail "the fleet job of the second sweep: $state2, not exit 1"
for want in "PROBLEM: task 0 on $node: roofbench exited 2 (see roofbench-node-${array2}_0.out)" \
            "PROBLEM: task 1 on $node: roofbench exited 2 (see roofbench-node-${array2}_1.out)" \
            "PROBLEM: node nosuchnode: no task ran there" \
            "roofbench fleet exited 2 (it refused its input)"; do
  grep -qxF "$want" "$fleet/report/coverage.txt" || fail "coverage of the second sweep lacks '$want'"
done
grep -q "exit 0" "$fleet/report/coverage.txt" && fail "the second sweep's coverage counted the first sweep's tasks"
grep -q "matches no benchmark" "$fleet/roofbench-node-${array2}_0.out" || fail "task 0's output does not say why it failed"
echo "slurm: a job array of 3 quick runs and its fleet job on a one-node Slurm: report merged, coverage checked; a second sweep's failed tasks and uncovered node fail its fleet job, the first sweep's records unused"
