#!/usr/bin/env bash
# scripts/check-device-all.py, the GPU visit's check of `roofbench run --device all`, on folders
# laid out as cli/device_all.cpp names them (<host>-gpu<i>-<first 8 hex digits of the UUID>)
# holding results files whose device fields are a GPU's: it passes one folder per GPU, each of the
# GPU its name says, and names every departure. (On a GPU the step runs on roofbench's own files.)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
check=$here/scripts/check-device-all.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# gpu DIR FOLDER UUID [PARTIAL]: a results file of a CUDA device with that UUID in DIR/FOLDER.
gpu() {
  mkdir -p "$1/$2"
  python3 - "$1/$2/results.json" "$3" "${4:-}" <<'PY'
import json, sys
path, uuid, partial = sys.argv[1:]
json.dump({"device": {"kind": "cuda", "name": "NVIDIA H200", "uuid": uuid},
           "partial": {"reason": partial} if partial else None, "benchmarks": [{}]}, open(path, "w"))
PY
}
u0=0a1b2c3d00000000000000000000000a
u1=9f8e7d6c00000000000000000000000b

# expect NAME RC PATTERN DIR GPUS: the check's exit code and a line it must print.
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  python3 "$check" "$@" >"$tmp/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want: $(cat "$tmp/$name.log")"
  grep -qF -- "$pattern" "$tmp/$name.log" || fail "$name: no '$pattern' in: $(cat "$tmp/$name.log")"
  echo "$name: exit $rc, as expected"
}

gpu "$tmp/good" node1-gpu0-0a1b2c3d "$u0"
gpu "$tmp/good" node1-gpu1-9f8e7d6c "$u1"
echo "a console" >"$tmp/good/node1-gpu1-9f8e7d6c.log"  # --concurrent's log beside a folder: not a folder
expect good 0 "node1-gpu1-9f8e7d6c: NVIDIA H200, 1 benchmark(s)" "$tmp/good" 2
expect one-missing 1 "not one folder per visible GPU (2 for 3)" "$tmp/good" 3

gpu "$tmp/swapped" node1-gpu0-0a1b2c3d "$u1"
gpu "$tmp/swapped" node1-gpu1-9f8e7d6c "$u1"
expect wrong-gpu 1 "node1-gpu0-0a1b2c3d holds the results of GPU '$u1'" "$tmp/swapped" 2
expect same-gpu 1 "hold the same GPU" "$tmp/swapped" 2

gpu "$tmp/partial" node1-gpu0-0a1b2c3d "$u0" "stopped by SIGTERM"
mkdir -p "$tmp/partial/node1-gpu1-9f8e7d6c"
expect partial 1 "node1-gpu0-0a1b2c3d: partial" "$tmp/partial" 2
expect no-results 1 "node1-gpu1-9f8e7d6c: no whole results.json" "$tmp/partial" 2
echo "check-device-all: every case as expected"
