#!/usr/bin/env bash
# scripts/ci-ab.sh, with the builds given (--base-bin, --new-bin: building a base commit is what
# the script adds around roofbench ab, and takes minutes): it runs the interleaved A/B, writes the
# verdicts to the GitHub job summary, exits with ab's code, and refuses bad input with exit 2.
# Usage: test_ci_ab.sh BUILD_DIR
set -uo pipefail
bin=$(realpath "$1")/roofbench
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$here/scripts/ci-ab.sh" --base-bin "$bin" >"$tmp/log" 2>&1
[ $? = 2 ] || fail "--base-bin without --new-bin must exit 2: $(cat "$tmp/log")"
bash "$here/scripts/ci-ab.sh" --bogus >"$tmp/log" 2>&1
[ $? = 2 ] || fail "an unknown option must exit 2"
bash "$here/scripts/ci-ab.sh" --base-bin "$tmp/nothing" --new-bin "$bin" --out "$tmp/bad" -- --device cpu >"$tmp/log" 2>&1
[ $? = 2 ] || fail "a missing base binary must exit 2"
grep -q "is not an executable file" "$tmp/log" || fail "no reason given for the missing binary: $(cat "$tmp/log")"

# The naive GEMM, a few percent of its FP32 FMA roof on any CPU: the A/A and its files are under
# test, not the plausibility gate, which a kernel near its roof (saxpy sits near DRAM update's) can
# trip when ab's ceilings process measured the roofs while the machine was throttled. A few
# ceilings (it is placed against FP32 FMA and DRAM update), not every one: each DRAM ceiling moves
# 512 MiB arrays on a VM that reports a 260 MiB LLC.
few='ceiling/(dram_(read|write|copy|memcpy|triad)|l2|l3|fp64|math_)'
GITHUB_STEP_SUMMARY=$tmp/summary.md bash "$here/scripts/ci-ab.sh" --base-bin "$bin" --new-bin "$bin" --rounds 2 \
  --out "$tmp/ab" -- --quick --filter '^gemm/naive/fp32/M:256/' --budget 0.1 --skip "$few" >"$tmp/log" 2>&1
rc=$?
[ "$rc" = 0 ] || { tail -20 "$tmp/log"; fail "an A/A of one binary exited $rc"; }
for f in ab.json ab.md roofline-diff.svg roofline-diff.html rounds/01-base/results.json rounds/02-new/results.json ceilings/results.json; do
  [ -f "$tmp/ab/$f" ] || fail "no $f"
done
python3 - "$tmp/ab/ab.json" <<'PY' || fail "ab.json is not an A/B of two rounds"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "roofbench.ab.v1", j["schema"]
assert len(j["rounds"]) == 2 and {r["first"] for r in j["rounds"]} <= {"base", "new"}
assert [b["name"].split("/")[0:2] for b in j["benchmarks"]] == [["gemm", "naive"]], j["benchmarks"]
assert j["summary"]["exit_code"] == 0
PY
cmp -s "$tmp/summary.md" "$tmp/ab/ab.md" || fail "the job summary is not ab.md"
grep -q '^### roofbench ab:' "$tmp/summary.md" || fail "the summary has no ab heading"
# The roofline diff: the GEMM's arrow, coloured by the A/A's verdict, and the Markdown's link to it.
grep -Eq 'class="diff-arrow" data-name="gemm/naive/fp32/[^"]*" data-verdict="(SAME|UNSURE)"' "$tmp/ab/roofline-diff.svg" ||
  fail "roofline-diff.svg has no SAME or UNSURE arrow for the naive GEMM"
grep -q '\[chart\](roofline-diff.svg)' "$tmp/ab/ab.md" || fail "ab.md does not link roofline-diff.svg"
echo "ci-ab: bad input exits 2; an A/A of two rounds exits 0 and writes ab.json, ab.md, the roofline diff and the job summary"
