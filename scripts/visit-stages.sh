#!/usr/bin/env bash
# Several stages of a GPU visit back to back in one device call (docs/gpu-visit.md), each given the
# time that is left: a session's 15 minutes hold a machine's start and two or three calls, and a
# stage that ends early leaves its time to the next instead of to an idle machine.
#   bash scripts/visit-stages.sh TOTAL_S STAGE:CAP[:OPTIONS] ...     (on the GPU machine, OUT set)
# Each stage runs `scripts/gpu-check.sh STAGE ARCHIVE $OUT --limit L --force OPTIONS` with
# L = min(CAP, what is left of TOTAL_S less 10 s); a stage with less than 60 s is not run, saying
# so. When smoke's wgmma tests fail, every later stage gets --skip wgmma. Each stage's summary is
# printed when it ends. At most four stages a call: each leaves two files in $OUT, and eight come
# back. ARCHIVE: $ARCHIVE, else .carry/roofbench.tar.xz. DEVICE_ARGS: options for every stage
# (the CPU rehearsal passes --device cpu).
# Exit: 0 when every stage that ran passed, 1 otherwise, 2 on bad arguments.
set -u
[ $# -ge 2 ] && [[ $1 =~ ^[0-9]+$ ]] || { sed -n '2,13p' "$0" >&2; exit 2; }
[ -n "${OUT:-}" ] || { echo "visit-stages: OUT is not set (the device machine sets it)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
total=$1
shift
t0=$SECONDS
skip=() rc_all=0
arch=${ARCHIVE:-.carry/roofbench.tar.xz}
echo "visit-stages: $(date -u +%FT%TZ) $( (nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null || echo "(no nvidia-smi)") | head -n 1)"
for spec in "$@"; do  # every one checked before the first runs: a typo found late costs the call
  IFS=: read -r st cap extra <<<"$spec"
  [[ $st =~ ^(smoke|tests|numbers|repeat|profile|python)$ && $cap =~ ^[0-9]+$ ]] ||
    { echo "visit-stages: '$spec' is not STAGE:CAP[:OPTIONS] with a stage of gpu-check.sh" >&2; exit 2; }
done
for spec in "$@"; do
  IFS=: read -r st cap extra <<<"$spec"
  left=$((total - (SECONDS - t0) - 10))
  lim=$((cap < left ? cap : left))
  if ((lim < 60)); then
    echo "visit-stages: $st NOT RUN: $lim s for it (of its $cap), under a minute"
    rc_all=1
    continue
  fi
  echo "=== visit-stages: $st --limit $lim (at $((SECONDS - t0)) s)"
  # shellcheck disable=SC2086
  bash "$here/gpu-check.sh" "$st" "$arch" "$OUT" --limit "$lim" --force "${skip[@]}" ${DEVICE_ARGS:-} $extra \
    >"${TMPDIR:-/tmp}/visit-stages-$st.console" 2>&1
  rc=$?
  ((rc == 0)) || rc_all=1
  echo "visit-stages: $st exit $rc after $((SECONDS - t0)) s"
  if [ -f "$OUT/$st-summary.txt" ]; then cat "$OUT/$st-summary.txt"; else tail -n 30 "${TMPDIR:-/tmp}/visit-stages-$st.console"; fi
  if grep -q "the wgmma tests failed" "$OUT/$st-summary.txt" 2>/dev/null; then skip=(--skip wgmma); fi
done
echo "visit-stages: done in $((SECONDS - t0)) s"
exit $rc_all
