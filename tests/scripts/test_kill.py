#!/usr/bin/env python3
"""Killed and starved runs lose nothing.

`roofbench run` is killed with SIGKILL (1) at every step of its writes, through the LD_PRELOAD
fault injector (tests/fault/fault_inject.cpp) that stops it right before the N-th call changing
the output folder, (2) at random moments, ceilings and benchmarks included, KILLS times
(default 30); (3) two runs start on one folder at once; (4) the disk is full: an injected
ENOSPC on every write, and a real full tmpfs where this machine lets the test mount one.

After each, the output folder must hold, as any reader sees it (links followed):
  previous  the last complete set, byte for byte;
  partial   that set with results.json replaced by a valid partial results file of the new run;
  new       a complete new set: results.json whole and not partial, and roofline.svg,
            report.html and summary.md exactly what `roofbench report` makes of it.
Anything else (a mix of two runs, a torn file, a missing file, a temporary name) fails.

Usage: test_kill.py ROOFBENCH FAULT_INJECT_SO     env: KILLS (default 30), SEED (default: time)
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN, SHIM = sys.argv[1], sys.argv[2]
KILLS = int(os.environ.get("KILLS", "30"))
SEED = int(os.environ.get("SEED", str(int(time.time()))))
SET = {"results.json", "gbench.json", "roofline.svg", "report.html", "summary.md"}
REPORTS = ["roofline.svg", "report.html", "summary.md"]
# A small run: one benchmark and one ceiling (the L1 read), measured first and again last: three
# results to write, three partial snapshots and the final set (a second ceiling, the FP32 FMA's,
# added to every run and nothing to what is written); warm (no cache flush
# before each sample, 554 MB on a VM with a 260 MiB LLC), since what is tested is the writing.
RUN = [BIN, "run", "--device", "cpu", "--quick", "--warm", "--budget", "0.05", "--filter", "^lowprec/relu/fp32/",
       "--skip", "ceiling/(dram|l2|l3|fp|math_|launch_)"]

work = tempfile.mkdtemp(prefix="roofbench-kill-")
out = os.path.join(work, "out")
tally = {"previous": 0, "partial": 0, "new": 0}


def fail(why):
    print(f"FAIL (seed {SEED}): {why}", file=sys.stderr)
    listing = subprocess.run(["ls", "-laR", out], capture_output=True, text=True).stdout
    print(listing[-4000:], file=sys.stderr)
    sys.exit(1)


def visible(folder):
    """name -> bytes of what a reader sees; hidden names are roofbench's own (.roofbench/)."""
    files = {}
    if not os.path.isdir(folder):
        return files
    for name in os.listdir(folder):
        if name.startswith("."):
            continue
        path = os.path.join(folder, name)
        if not os.path.exists(path):  # a link that dangles reads as absent, for every reader
            continue
        with open(path, "rb") as f:
            files[name] = f.read()
    return files


def check(prev, what):
    """Classifies the folder against `prev` (the last complete set); fails on anything else."""
    now = visible(out)
    stray = [n for n in now if n not in SET]
    if stray:
        fail(f"{what}: names that are not the set's: {stray}")
    if now == prev:
        tally["previous"] += 1
        return "previous", now
    if "results.json" not in now:
        fail(f"{what}: results.json is missing beside {sorted(now)}")
    try:
        results = json.loads(now["results.json"])
    except ValueError as e:
        fail(f"{what}: results.json is not whole JSON: {e}")
    scratch = os.path.join(work, "check")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    with open(os.path.join(scratch, "results.json"), "wb") as f:
        f.write(now["results.json"])
    r = subprocess.run([BIN, "report", os.path.join(scratch, "results.json"), "--out", scratch],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{what}: roofbench cannot read results.json: {r.stderr.strip()}")
    if results.get("partial"):
        others = {n: c for n, c in now.items() if n != "results.json"}
        prev_others = {n: c for n, c in prev.items() if n != "results.json"}
        if others != prev_others:
            fail(f"{what}: a partial results.json beside files that are not the previous set's")
        tally["partial"] += 1
        return "partial", now
    if set(now) != SET:
        fail(f"{what}: a complete results.json with {sorted(now)}, not the whole set")
    for name in REPORTS:
        with open(os.path.join(scratch, name), "rb") as f:
            if f.read() != now[name]:
                fail(f"{what}: {name} is not the report of this results.json (a mix of two runs)")
    gbench = json.loads(now["gbench.json"])
    names = sorted(b["name"] for b in gbench.get("benchmarks", []))
    if not names or (prev and now["gbench.json"] == prev.get("gbench.json")):
        fail(f"{what}: gbench.json is not this run's")
    tally["new"] += 1
    return "new", now


def run(env_extra=None, kill_after=None):
    env = dict(os.environ)
    if env_extra:
        env.update(env_extra)
        env["LD_PRELOAD"] = SHIM
        env["ROOFBENCH_FAULT_DIR"] = out
    p = subprocess.Popen(RUN + ["--out", out], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if kill_after is not None:
        try:
            p.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
    _, err = p.communicate()
    return p.returncode, err


# ---- a whole run, then one traced over it: every call that changes the folder, numbered (a
# folder that holds a set takes the same calls run after run; an empty one takes fewer)
rc, err = run()
if rc != 0:
    fail(f"the first run exited {rc}: {err}")
state, prev = check({}, "the first run")
if state != "new":
    fail(f"the first run left '{state}', not a complete set")
trace = os.path.join(work, "trace")
start = time.monotonic()
rc, err = run({"ROOFBENCH_FAULT_TRACE": trace})
full = time.monotonic() - start
if rc != 0:
    fail(f"the traced run exited {rc}: {err}")
state, prev = check(prev, "the traced run")
if state != "new":
    fail(f"the traced run left '{state}', not a complete set")
with open(trace) as f:
    steps = [line.split(" ", 2) for line in f.read().splitlines()]
# Each commit starts with the mkdir of its generation and switches with the rename of `current`.
starts = [i for i, s in enumerate(steps) if s[1] == "mkdir" and "/.roofbench/gen-" in s[2]]
switches = [i for i, s in enumerate(steps) if s[1] == "rename" and s[2].endswith("/.roofbench/current")]
if len(starts) < 2 or len(switches) != len(starts):
    fail(f"the trace has {len(starts)} commits and {len(switches)} switches: {steps}")
print(f"a whole run: {full:.1f} s, {len(steps)} calls that change the folder, {len(starts)} commits "
      f"({len(starts) - 1} partial snapshots and the final set)")

# ---- (1) killed right before each step of the first snapshot and of the final commit: before a
# commit's switch the folder shows what it showed before the commit, after it the commit's set
points = list(range(starts[0], switches[0] + 2)) + list(range(starts[-1], len(steps) + 1))
for k in points:  # k counts from 0: the injector, counting from 1, kills before steps[k]
    rc, err = run({"ROOFBENCH_FAULT_KILL_AT": str(k + 1)})
    what = f"killed before step {k + 1} ({' '.join(steps[k][1:]) if k < len(steps) else 'none: the run ends'})"
    if k < len(steps) and rc != -signal.SIGKILL:
        fail(f"{what}: the run was not killed (exit {rc}): its calls differ from the traced run's: {err}")
    if k == len(steps) and rc != 0:
        fail(f"{what}: exit {rc}: {err}")
    state, now = check(prev, what)
    expected = ("previous" if k <= switches[0] else
                "partial" if k <= switches[-1] else "new")
    if state != expected:
        fail(f"{what}: the folder shows '{state}', expected '{expected}'")
    if state == "new":
        prev = now
print(f"(1) killed before each of {len(points)} steps of two commits (first snapshot, final set): {dict(tally)}")

# ---- (2) killed at random moments: ceilings, benchmarks, writes
rng = random.Random(SEED)
before = dict(tally)
for i in range(KILLS):
    delay = rng.uniform(0.0, 1.15 * full)
    rc, err = run(kill_after=delay)
    if rc not in (0, -signal.SIGKILL):
        fail(f"random kill {i + 1} after {delay:.2f} s: the run exited {rc}: {err}")
    state, now = check(prev, f"random kill {i + 1} after {delay:.2f} s")
    if state == "new":
        prev = now
after = {k: tally[k] - before[k] for k in tally}
print(f"(2) {KILLS} kills at random moments in [0, {1.15 * full:.1f}] s (seed {SEED}): {after}")

# ---- (3) two runs on one folder at once: one writes, the other is refused whole. Deterministic:
# once the first holds the lock (its pid in .roofbench/lock) it is stopped, the second starts and
# must be refused naming that pid, then the first goes on and writes a whole set. Started back to
# back instead, the second could begin after the first's short run ended, and both wrote.
lock = os.path.join(out, ".roofbench", "lock")


def lock_holder():
    try:
        with open(lock) as f:
            return f.read().strip()
    except OSError:
        return ""


for i in range(3):
    first = subprocess.Popen(RUN + ["--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while lock_holder() != str(first.pid) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    os.kill(first.pid, signal.SIGSTOP)
    if lock_holder() != str(first.pid):
        os.kill(first.pid, signal.SIGCONT)
        _, err = first.communicate()
        fail(f"two runs at once ({i + 1}): the first run (pid {first.pid}) never wrote its pid into {lock}: "
             f"exit {first.returncode}, lock holds '{lock_holder()}': {err}")
    second = subprocess.run(RUN + ["--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=120)
    os.kill(first.pid, signal.SIGCONT)
    _, err = first.communicate()
    rc = first.returncode
    if second.returncode != 2 or f"in use by another roofbench (pid {first.pid})" not in second.stderr:
        fail(f"two runs at once ({i + 1}): the second exited {second.returncode}, expected 2 naming pid "
             f"{first.pid} 'in use by another roofbench': {second.stderr}")
    if rc != 0:
        fail(f"two runs at once ({i + 1}): the first, holding the lock, exited {rc}: {err}")
    state, now = check(prev, f"two runs at once ({i + 1})")
    if state != "new":
        fail(f"two runs at once: the folder shows '{state}' after the writer ended")
    prev = now
print("(3) two runs on one folder at once, 3 times: one wrote a whole set, the other exited 2 naming it, "
      "before measuring")

# ---- (4) a full disk: every write fails with ENOSPC
rc, err = run({"ROOFBENCH_FAULT_ENOSPC": "1"})
if rc != 2 or "No space left on device" not in err:
    fail(f"a run whose writes fail with ENOSPC exited {rc} (expected 2 and the reason): {err}")
state, _ = check(prev, "writes failing with ENOSPC")
if state != "previous":
    fail(f"writes failing with ENOSPC left '{state}', not the previous set")
leftovers = [n for n in os.listdir(os.path.join(out, ".roofbench")) if n.startswith("gen-")]
if len(leftovers) != 1:
    fail(f"writes failing with ENOSPC left generations behind: {leftovers}")
print(f"(4a) every write fails with ENOSPC: exit 2 ('{err.strip().splitlines()[-1]}'), the previous set intact")

mnt = os.path.join(work, "tmpfs")
os.makedirs(mnt)
m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt], capture_output=True, text=True)
if m.returncode != 0:
    print(f"(4b) SKIPPED a real full tmpfs: this machine does not let the test mount one "
          f"({m.stderr.strip() or 'mount exited ' + str(m.returncode)}); (4a) stands in for it")
else:
    try:
        out = os.path.join(mnt, "out")
        rc, err = run()
        if rc != 0:
            fail(f"a run on a 512 KiB tmpfs exited {rc}: {err}")
        state, prev = check({}, "a run on the tmpfs")
        if state != "new":  # else the full tmpfs's "previous set intact" below would hold trivially
            fail(f"a run on a 512 KiB tmpfs left '{state}', not a whole new set")
        st = os.statvfs(mnt)
        try:  # fills the tmpfs to its last byte
            with open(os.path.join(mnt, "filler"), "wb") as f:
                f.write(b"\0" * (st.f_bavail * st.f_frsize + 65536))
        except OSError:
            pass
        if os.statvfs(mnt).f_bavail != 0:
            fail("the tmpfs did not fill up")
        rc, err = run()
        if rc != 2 or "No space left on device" not in err:
            fail(f"a run on a full tmpfs exited {rc} (expected 2 and the reason): {err}")
        state, _ = check(prev, "a run on a full tmpfs")
        if state != "previous":
            fail(f"a run on a full tmpfs left '{state}', not the previous set")
        print(f"(4b) a real full tmpfs: exit 2 ('{err.strip().splitlines()[-1]}'), the previous set intact")
    finally:
        subprocess.run(["umount", mnt])

shutil.rmtree(work, ignore_errors=True)
print(f"killed and starved runs: no loss in {sum(tally.values())} checks {dict(tally)}")
