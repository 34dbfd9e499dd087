#!/usr/bin/env bash
# Makes, or adds to, the committed baseline of a GPU from what a GPU visit brought back (run here,
# after the visit). A visit has 15 minutes of device time and runs two stages, so one baseline
# takes two visits (docs/gpu-visit.md):
#   numbers  the merged run (results.json, gbench.json, the reports, console.log, PROVENANCE.md):
#            makes the folder anew; and its 8192³ BF16 GEMMs sampled 3 s each, into throttle/
#   smoke    its summary (the GPU tests' tallies), into PROVENANCE.md
#   tests    its quick run with CUPTI counters, into counters/ (results.json and its reports),
#            Nsight Compute's numbers beside roofbench's, into PROVENANCE.md, the example
#            project's run (examples/fused_op's kernels), into example/, and ci-gpu.sh's verdicts,
#            into ci-gpu.md
#   repeat   the verdicts of its two quick runs (agreement.md, agreement.json), of its A/A
#            (`roofbench ab` of the binary against itself: ab.md, ab.json) and compute-sanitizer's
#            logs (sanitizer.log)
#   sanitize scripts/sanitize.sh's logs (racecheck, initcheck, synccheck with the time a visit had
#            left), into sanitizer.log beside repeat's: each tool's log in place of its earlier one
#   profile  Nsight Compute's details of each rung that missed its target (issue 51), as text, into
#            profile/ in place of an earlier profile's; its summary into PROVENANCE.md
#   python   the run of tests/python/gpu_visit.py (torch and Triton kernels on the measured roofs,
#            issue 46) with its checks (agreement.md and .json) and Nsight Compute's numbers beside
#            its kernels (crosscheck.md), into python/, in place of an earlier one; its summary
#            (every check's verdict) into PROVENANCE.md
# and then targets.md, the visit's targets read off what the folder holds (scripts/targets.py).
# Every results.json of the folder is stored as results.json.xz (scripts/compress-results.sh):
# roofbench's commands and scripts/targets.py read it as it is.
# A stage without numbers adds to the folder that a numbers stage made, on a GPU of the same name
# (each stage's summary names its GPU and commit; tests and repeat carry results files that do
# too); a stage of another GPU is refused, and nothing is written. A stage that was refused, whose
# archive did not come back or that cannot name its GPU is left out, saying so. Each stage's section in
# PROVENANCE.md takes the place of that stage's earlier one. Every file is the suite's or the
# scripts' own output; nothing is edited by hand.
#   scripts/visit-baseline.sh VISIT_DIR [--out DIR] [--device-from STAGE=OTHER]
# VISIT_DIR holds what the calls brought back: STAGE.tar.xz and STAGE-summary.txt of the stages
# that ran. DIR defaults to reports/baselines/<gpu>, <gpu> from the GPU's name ("NVIDIA H100 80GB
# HBM3" -> h100, "NVIDIA H200" -> h200). --device-from: a stage whose summary has no 'device:'
# line (sanitize.sh's before it wrote one) that ran in one device call with OTHER, a stage taken
# before it (in the order numbers, smoke, tests, repeat, sanitize, profile, python), takes OTHER's
# device; its section in PROVENANCE.md says so. Then run scripts/update-readme.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/env.sh"
[ $# -ge 1 ] || { sed -n '2,33p' "$0" >&2; exit 2; }
visit=$1
shift
out=""
declare -A device_from=()
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --device-from)
      [[ ${2:-} == ?*=?* ]] || { echo "visit-baseline: --device-from takes STAGE=OTHER (e.g. sanitize=smoke)" >&2; exit 2; }
      device_from[${2%%=*}]=${2#*=}
      shift 2
      ;;
    *) echo "visit-baseline: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
die() { echo "visit-baseline: $*" >&2; exit 2; }
[ -d "$visit" ] || die "no folder $visit"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
device_name() { python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); from results_io import read_json; print(read_json(sys.argv[1])["device"]["name"])' "$1" "$here/scripts"; }

# Which stages came back, each unpacked, and the name of the device each ran on: from a results
# file where the stage wrote one, else from its summary's "device: NAME, UUID, DRIVER; ..." line.
# A stage that was refused (it ran nothing), whose archive did not come back (all but smoke keep
# their evidence there) or whose device cannot be told is left out, and says so; it takes nothing
# away from the folder.
stages=() names=()
declare -A name_of=() borrowed=()
left_out() { echo "visit-baseline: the $1 stage left out: $2" >&2; }
for st in numbers smoke tests repeat sanitize profile python; do
  [ -f "$visit/$st.tar.xz" ] || [ -f "$visit/$st-summary.txt" ] || continue
  mkdir -p "$tmp/$st"
  if [ -f "$visit/$st.tar.xz" ]; then
    tar -xJf "$visit/$st.tar.xz" -C "$tmp/$st" || die "$visit/$st.tar.xz does not unpack"
  else
    cp "$visit/$st-summary.txt" "$tmp/$st/summary.txt"
  fi
  [ -f "$tmp/$st/summary.txt" ] || die "the $st stage's archive holds no summary.txt"
  if [[ $(head -n 1 "$tmp/$st/summary.txt") == "$st: REFUSED"* ]]; then
    left_out "$st" "it was refused and ran nothing ($(head -n 1 "$tmp/$st/summary.txt" | cut -c1-160))"
    continue
  fi
  if [[ $(head -n 1 "$tmp/$st/summary.txt") != "$st: "* ]]; then
    left_out "$st" "its summary is not the $st stage's ($(head -n 1 "$tmp/$st/summary.txt" | cut -c1-160))"
    continue
  fi
  if [ "$st" != smoke ] && [ ! -f "$visit/$st.tar.xz" ]; then
    left_out "$st" "only its summary came back, not $st.tar.xz"
    continue
  fi
  # A python stage that stopped before its run (the extension did not build) has nothing to put
  # in place of an earlier visit's python/.
  if [ "$st" = python ] && [ ! -f "$tmp/python/python/run/results.json" ]; then
    left_out "$st" "its run wrote no results ($(head -n 1 "$tmp/$st/summary.txt" | cut -c1-160))"
    continue
  fi
  name=""
  for r in baseline/results.json quick-run/results.json runs/quick-1/results.json python/run/results.json; do
    [ -f "$tmp/$st/$r" ] && { name=$(device_name "$tmp/$st/$r"); break; }
  done
  if [ -z "$name" ]; then
    line=$(sed -n 's/^device: //p' "$tmp/$st/summary.txt" | head -n 1)
    name=${line%%;*}
    [[ $name == cpu,* ]] && name=${name#cpu, } || name=${name%%,*}
  fi
  if [ -z "$name" ] && [ -n "${device_from[$st]:-}" ] && [ -n "${name_of[${device_from[$st]}]:-}" ]; then
    name=${name_of[${device_from[$st]}]}
    borrowed[$st]=${device_from[$st]}
  fi
  if [ -z "$name" ] || [[ $name == *"nvidia-smi did not name it"* ]]; then
    left_out "$st" "cannot tell which device it ran on (no GPU's name in its summary's 'device:' line, and no results)"
    continue
  fi
  stages+=("$st")
  names+=("$name")
  name_of[$st]=$name
done
for st in "${!device_from[@]}"; do
  [ -n "${borrowed[$st]:-}" ] || [ -n "${name_of[$st]:-}" ] ||
    echo "visit-baseline: --device-from $st=${device_from[$st]}: no $st stage took the device of ${device_from[$st]}" >&2
done
((${#stages[@]})) || die "nothing of a visit to take from $visit (no STAGE.tar.xz or STAGE-summary.txt, or none that can be taken)"

# The folder, and the device every stage must have run on.
if [ -z "$out" ]; then
  [[ ${names[0]} == NVIDIA* ]] || die "'${names[0]}' is not a GPU; give --out DIR"
  out=$here/reports/baselines/$(slug_of_gpu "${names[0]}")
fi
if [ "${stages[0]}" = numbers ]; then
  [ -f "$tmp/numbers/baseline/results.json" ] || die "the numbers stage merged no results"
  want=${names[0]}
else
  [ -n "$(results_file_in "$out")" ] ||
    die "no baseline in $out to add the ${stages[*]} stage(s) to: a numbers stage makes it first"
  want=$(device_name "$(results_file_in "$out")")
fi
for i in "${!stages[@]}"; do
  [ "${names[$i]}" = "$want" ] ||
    die "the ${stages[$i]} stage ran on '${names[$i]}', the baseline is of '$want': nothing written (give another --out)"
done

# drop_section TITLE: PROVENANCE.md without its "## TITLE" section (up to the next "## " line).
drop_section() {
  local p=$out/PROVENANCE.md
  [ -f "$p" ] || return 0
  awk -v t="## $1" '$0 == t { skip = 1; next } /^## / { skip = 0 } !skip' "$p" >"$p.new" && mv "$p.new" "$p"
}
# section TITLE FILE: a "## TITLE" section with FILE's text, in place of an earlier one.
section() {
  drop_section "$1"
  { echo; echo "## $1"; echo; cat "$2"; } >>"$out/PROVENANCE.md"
}
fenced() { { echo '```'; cat "$1"; echo '```'; } >"$tmp/fenced"; echo "$tmp/fenced"; }
# take FROM DEST FILE...: each FILE of FROM that is there into DEST (made), as a file (-L: a run
# folder shows its files through links).
take() {
  local from=$1 dest=$2 f
  shift 2
  mkdir -p "$dest"
  for f in "$@"; do [ ! -f "$from/$f" ] || cp -L "$from/$f" "$dest/"; done
}
# sanitizer_log STAGE: each compute-sanitizer tool's log the stage brought back (memcheck.log, ...)
# into sanitizer.log under "==== TOOL (the STAGE stage)", in place of that tool's earlier log; the
# other tools' stay.
sanitizer_log() {
  local st=$1 l tool f=$out/sanitizer.log
  for tool in memcheck racecheck initcheck synccheck; do
    l=$tmp/$st/$tool.log
    [ -f "$l" ] || continue
    if [ -f "$f" ]; then
      awk -v t="$tool" '/^==== [a-z]/ { skip = ($2 == t) } !skip' "$f" >"$f.new" && mv "$f.new" "$f"
    fi
    # A log cut off by its timeout may end mid-line: the next header starts a line of its own.
    { echo "==== $tool (the $st stage)"; cat "$l"; [ -z "$(tail -c 1 "$l")" ] || echo; } >>"$f"
  done
}

mkdir -p "$out"
for st in "${stages[@]}"; do
  case $st in
    numbers)
      # A new baseline: what earlier visits added to the old one goes with it.
      for f in results.json results.json.xz results.json.gz gbench.json roofline.svg hierarchy.svg report.html summary.md console.log \
        PROVENANCE.md agreement.md agreement.json ab.md ab.json sanitizer.log counters example ci-gpu.md targets.md \
        profile python throttle; do
        rm -rf "${out:?}/$f"
      done
      cp -L "$tmp/numbers/baseline/"* "$out/"  # -L: the run folder shows its files through links
      # The 8192³ BF16 GEMMs sampled 3 s each: throttled samples flagged (issue 47).
      [ ! -f "$tmp/numbers/throttle/results.json" ] || take "$tmp/numbers/throttle" "$out/throttle" results.json summary.md
      # The device the numbers are of, from its own results.json: which GPU, its driver, the power
      # limit it ran under and where power and energy were read from (issue 47).
      python3 - "$out/results.json" "$here/scripts" >"$tmp/device.md" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from results_io import read_json
d = read_json(sys.argv[1]).get("device", {})
limit = d.get("power_limit_w")
print(f"- device: {d.get('name', '?')}, UUID {d.get('uuid') or 'not recorded'}")
print(f"- NVIDIA driver: {d.get('nvidia_driver_version') or 'not recorded (NVML did not give it, or a file from before it was read)'}")
print(f"- driver (CUDA driver API): {d.get('driver_version') or 'not recorded'}")
print(f"- power limit: {f'{limit:.0f} W' if isinstance(limit, (int, float)) else 'not recorded'}")
print(f"- power and energy: {d.get('power') or 'not recorded (a results file from before they were read)'}")
PY
      section "The numbers stage" "$(fenced "$tmp/numbers/summary.txt")"
      section "The device" "$tmp/device.md"
      ;;
    smoke)
      section "The smoke stage" "$(fenced "$tmp/smoke/summary.txt")"
      ;;
    tests)
      section "The tests stage" "$(fenced "$tmp/tests/summary.txt")"
      rm -rf "${out:?}/counters"
      [ ! -f "$tmp/tests/quick-run/results.json" ] ||
        take "$tmp/tests/quick-run" "$out/counters" results.json summary.md report.html roofline.svg hierarchy.svg
      # The example project's kernels on that run's ceilings, and ci-gpu.sh's verdicts.
      rm -rf "${out:?}/example" "$out/ci-gpu.md"
      [ ! -f "$tmp/tests/example/results.json" ] || take "$tmp/tests/example" "$out/example" results.json summary.md
      [ -f "$tmp/tests/ci-gpu/compare.md" ] && cp "$tmp/tests/ci-gpu/compare.md" "$out/ci-gpu.md"
      # Nsight Compute beside roofbench's counters, when the crosscheck ran.
      if [ -s "$tmp/tests/xcheck/crosscheck.md" ]; then
        section "Nsight Compute beside roofbench" "$tmp/tests/xcheck/crosscheck.md"
      else
        drop_section "Nsight Compute beside roofbench"
      fi
      ;;
    repeat)
      section "The repeat stage" "$(fenced "$tmp/repeat/summary.txt")"
      rm -f "$out/agreement.md" "$out/agreement.json" "$out/ab.md" "$out/ab.json"
      take "$tmp/repeat" "$out" agreement.md agreement.json ab/ab.md ab/ab.json
      sanitizer_log repeat
      ;;
    python)
      section "The Python kernels" "$(fenced "$tmp/python/summary.txt")"
      rm -rf "${out:?}/python"
      take "$tmp/python/python" "$out/python" run/results.json run/summary.md run/report.html run/roofline.svg \
        agreement.md agreement.json crosscheck.md
      ;;
    profile)
      # Nsight Compute's details of each rung profiled, as text, in place of an earlier profile's.
      section "The profile stage" "$(fenced "$tmp/profile/summary.txt")"
      rm -rf "${out:?}/profile"
      if compgen -G "$tmp/profile/profile/*.txt" >/dev/null; then
        mkdir -p "$out/profile"
        cp "$tmp/profile/profile/"*.txt "$out/profile/"
      fi
      ;;
    sanitize)
      fenced "$tmp/sanitize/summary.txt" >/dev/null
      if [ -n "${borrowed[sanitize]:-}" ]; then
        { echo; echo "Its summary names no device: it ran in one device call with the ${borrowed[sanitize]} stage," \
          "whose device it takes (--device-from)."; } >>"$tmp/fenced"
      fi
      section "The sanitize stage" "$tmp/fenced"
      sanitizer_log sanitize
      ;;
  esac
done
# Its results files stored as xz (a visit's is 15 MB; the tree is kept under 30 MB), which every
# command reads as they are; then the targets of a GPU visit, read off what the folder now holds.
bash "$here/scripts/compress-results.sh" "$out" >/dev/null || die "its results files could not be stored as xz"
python3 "$here/scripts/targets.py" "$out" --out "$out/targets.md"
echo "visit-baseline: ${stages[*]} into $out ($(ls "$out" | tr '\n' ' ')); now run scripts/update-readme.sh"
