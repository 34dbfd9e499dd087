#!/usr/bin/env python3
"""Checks what `roofbench run --device all` wrote on a GPU machine: one folder per visible GPU,
named <host>-gpu<i>-<the first 8 hex digits of its UUID> (cli/device_all.cpp), each holding a
whole CUDA results file of the GPU its name says, no GPU twice. A folder's console log beside it
(--concurrent) is not a folder. Exit 0 when all holds, 1 (naming what does not) otherwise.
Usage: check-device-all.py OUT_DIR GPUS_VISIBLE"""
import glob
import json
import os
import sys


def main(out, want):
    folders = sorted(f for f in glob.glob(os.path.join(out, "*-gpu*-*")) if os.path.isdir(f))
    print(f"device-all: {want} GPU(s) visible, {len(folders)} folder(s): {[os.path.basename(f) for f in folders]}")
    problems = []
    if want == 0:
        problems.append("no GPU visible (CUDA_VISIBLE_DEVICES or nvidia-smi -L listed none): "
                        "one folder per GPU cannot be checked")
    elif len(folders) != want:
        problems.append(f"not one folder per visible GPU ({len(folders)} for {want})")
    seen = {}
    for f in folders:
        name = os.path.basename(f)
        try:
            with open(os.path.join(f, "results.json")) as fh:
                r = json.load(fh)
        except (OSError, ValueError) as e:
            problems.append(f"{name}: no whole results.json ({e})")
            continue
        device = r.get("device", {})
        uuid = device.get("uuid", "")
        if device.get("kind") != "cuda":
            problems.append(f"{name}: a {device.get('kind')!r} run, not a GPU's")
        if r.get("partial") is not None:
            problems.append(f"{name}: partial ({r['partial']})")
        if not uuid or not name.endswith("-" + uuid[:8]):
            problems.append(f"{name} holds the results of GPU {uuid!r}")
        if uuid in seen:
            problems.append(f"{name} and {seen[uuid]} hold the same GPU, {uuid}")
        seen.setdefault(uuid, name)
        print(f"  {name}: {device.get('name')}, {len(r.get('benchmarks', []))} benchmark(s)")
    for p in problems:
        print(f"device-all: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.splitlines()[-1])
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
