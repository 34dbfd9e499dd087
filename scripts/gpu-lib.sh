# Sourced by the scripts that run on a GPU machine (gpu-check.sh, sanitize.sh, baseline.sh):
# every step under a time limit that the stage as a whole keeps, and all evidence in one archive
# plus one short summary, because a GPU visit brings back at most 8 files and runs each command
# for at most 10 minutes.
#
#   ev_begin OUT NAME LIMIT_S   start: evidence goes to a scratch folder ($EV_WORK)
#   ev_step NAME SECONDS CMD... run CMD (output in $EV_WORK/NAME.log) under `timeout`, for at most
#                               SECONDS and never past the stage's limit; one summary line
#   ev_skip NAME WHY            a summary line for a step that did not run
#   ev_fail NAME WHY            a summary line for a step that could not run and should have
#                               (a tool missing on a GPU machine): counted as a failure
#   ev_find_tool NAME [ROOT...] a CUDA tool's path (ncu, compute-sanitizer): PATH first, then its
#                               usual homes under the ROOTs (default /usr/local and /opt); empty if none
#   ev_path_without DIR LIST    a colon-separated LIST with every DIR entry taken out
#   ev_linked_library_path LIBDIR DIR SKIP [newer-stdcxx]  LD_LIBRARY_PATH through links in DIR to
#                               LIBDIR's libraries but those named like the regex SKIP, then
#                               LD_LIBRARY_PATH without LIBDIR; newer-stdcxx: libstdc++ and
#                               libgcc_s the machine's own where ev_machine_stdcxx names one
#   ev_machine_stdcxx LIBDIR    the machine's libstdc++ when it is at least as new as LIBDIR's
#   ev_ncu_report NCU REP N CMD...  CMD under Nsight Compute's full set, its first N kernel launches:
#                               REP.ncu-rep, and its details as text, REP.txt
#   ev_note TEXT                a line of its own in the summary
#   ev_device_note DEVICE ROOFBENCH  the summary's "device: ..." line (which GPU, which build)
#   ev_smi_index DEVICE         nvidia-smi's -i for cuda:N (CUDA_VISIBLE_DEVICES' Nth entry when set)
#   ev_remaining                seconds left before the stage's limit, less the packing reserve
#   ev_gtest_filter BASE SKIP   a gtest filter that also leaves out what a --skip regex names
#   ev_end                      OUT/NAME.tar.xz (everything in $EV_WORK) and OUT/NAME-summary.txt,
#                               the summary printed last; returns 0 when no step failed
#
# A step's verdict: PASS (exit 0), FAIL (any other exit; `ev_step` returns it), TIMEOUT (stopped
# by its limit: SIGTERM first, SIGKILL 10 s later), STOPPED (the stage got SIGTERM or SIGINT),
# DIFFER (exit 1 of a command that only compares: EV_DIFFER_OK=1 for that step).

EV_RESERVE_S=${EV_RESERVE_S:-20}  # kept for packing the archive at the end

# SIGTERM or SIGINT to the stage (a time limit from outside, Ctrl-C): the step running gets it
# too (timeout passes it on; a roofbench run writes its results so far, marked partial), later
# steps are skipped, and ev_end still packs the evidence.
EV_STOPPED=""
EV_CHILD=""
ev_on_signal() {
  EV_STOPPED=$1
  [ -n "$EV_CHILD" ] && kill -s "$1" "$EV_CHILD" 2>/dev/null
}
trap 'ev_on_signal TERM' TERM
trap 'ev_on_signal INT' INT

ev_begin() {
  EV_OUT=$1 EV_NAME=$2 EV_LIMIT=$3
  EV_START=$(date +%s)
  EV_WORK=$(mktemp -d)
  EV_LINES=()
  EV_FAILED=0
  EV_REFUSED=""
  mkdir -p "$EV_OUT" || { echo "$EV_NAME: cannot create $EV_OUT" >&2; exit 2; }
}

ev_elapsed() { echo $(($(date +%s) - EV_START)); }
ev_remaining() { echo $((EV_LIMIT - $(ev_elapsed) - EV_RESERVE_S)); }

ev_note() { EV_LINES+=("$*"); echo "$EV_NAME: $*" >&2; }

# ev_device_note DEVICE ROOFBENCH: the machine and the build, as the summary's first note:
# "device: NAME, UUID, DRIVER; roofbench VERSION commit SHA" (a CPU: "device: cpu, MODEL; ...").
# nvidia-smi's -i takes an index or a UUID, as CUDA_VISIBLE_DEVICES' entries are; CUDA's order is
# taken as nvidia-smi's, as on one GPU.
ev_smi_index() {
  local i=${1#cuda:}
  [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && i=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | sed -n "$((i + 1))p")
  echo "$i"
}
ev_device_note() {
  local device=$1 roofbench=$2 d=""
  if [[ $device == cuda:* ]]; then
    d=$(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader -i "$(ev_smi_index "$device")" 2>/dev/null |
      head -n 1)
    [ -n "$d" ] || d="$device (nvidia-smi did not name it)"
  else
    d="$device, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  fi
  ev_note "device: $d; roofbench $("$roofbench" --version 2>&1 | head -n 1)"
}

# The stage does not start: why, as the summary's first line (ev_end exits 2 after it).
ev_refuse() { EV_REFUSED=$*; echo "$EV_NAME: REFUSED: $*" >&2; }

# The summary line of a step that did not run: VERDICT NAME WHY.
ev_line_not_run() { EV_LINES+=("$(printf '  %-8s %5s  %-16s %s' "$1" - "$2" "$3")"); }

ev_skip() {
  ev_line_not_run SKIPPED "$1" "$2"
  echo "$EV_NAME: $1 skipped: $2" >&2
}

ev_fail() {
  ev_line_not_run FAIL "$1" "$2"
  EV_FAILED=$((EV_FAILED + 1))
  echo "$EV_NAME: $1 failed: $2" >&2
}

# The toolkit puts ncu and compute-sanitizer in bin/ (as links) and in folders of their own;
# Nsight Compute installed alone lives in /opt/nvidia/nsight-compute/VERSION/.
# Where several versions are installed, the newest (by version order) of the first home that has one.
ev_find_tool() {
  local name=$1 root found pattern
  shift
  (($#)) || set -- /usr/local /opt
  found=$(command -v "$name" 2>/dev/null) && [ -x "$found" ] && { echo "$found"; return 0; }
  for root in "$@"; do
    for pattern in "$root/cuda*/bin/$name" "$root/cuda*/nsight-compute*/$name" "$root/cuda*/$name/$name" \
      "$root/nvidia/nsight-compute/*/$name"; do
      found=$(compgen -G "$pattern" | while read -r f; do [ -x "$f" ] && [ -f "$f" ] && echo "$f"; done |
        sort -V | tail -n 1)
      [ -n "$found" ] && { echo "$found"; return 0; }
    done
  done
  return 0
}

# ev_ncu_report NCU REPORT LAUNCHES COMMAND...: COMMAND under Nsight Compute with its full set of
# sections, its first LAUNCHES kernel launches, at the GPU's own clocks (--clock-control none:
# ncu's default locks them to base); the report exported as REPORT.ncu-rep (ncu adds the
# extension) and printed as text with every section's body and its rules' advice (an ncu without
# --print-details: its default details page) as REPORT.txt. The text is written whenever the
# report was, also when COMMAND exited non-zero (ncu then does too, by its --check-exit-code).
# Returns ncu's exit code, or 1 where it wrote no report or its text could not be printed.
ev_ncu_report() {
  local ncu=$1 rep=$2 launches=$3 rc
  shift 3
  "$ncu" --set full --clock-control none --launch-count "$launches" --export "$rep" --force-overwrite "$@"
  rc=$?
  [ -f "$rep.ncu-rep" ] || { echo "ev_ncu_report: ncu wrote no $rep.ncu-rep" >&2; [ "$rc" -ne 0 ] || rc=1; return "$rc"; }
  if ! "$ncu" --import "$rep.ncu-rep" --page details --print-details all >"$rep.txt" 2>&1 &&
    ! "$ncu" --import "$rep.ncu-rep" --page details >"$rep.txt" 2>&1; then
    echo "ev_ncu_report: ncu could not print $rep.ncu-rep: $(tail -n 1 "$rep.txt")" >&2
    [ "$rc" -ne 0 ] || rc=1
  fi
  return "$rc"
}

ev_path_without() {
  local dir=$1 entry out="" entries=()
  IFS=: read -ra entries <<<"$2"
  for entry in "${entries[@]}"; do
    [ -z "$entry" ] || [ "$entry" = "$dir" ] || out=${out:+$out:}$entry
  done
  echo "$out"
}

# ev_linked_library_path LIBDIR DIR SKIP [newer-stdcxx]: LD_LIBRARY_PATH through links in DIR (the
# caller removes it) to LIBDIR's libraries (an archive's lib/) but those whose names match the
# regex SKIP, then the rest of LD_LIBRARY_PATH (wherever LIBDIR stands in it: unpack-build.sh may
# have put the toolkit's cuBLAS first). With newer-stdcxx, libstdc++ and libgcc_s are the
# machine's own where ev_machine_stdcxx names its libstdc++.
ev_linked_library_path() {
  local libdir=$1 dir=$2 skip=$3 stdcxx=${4:-} lib rest mine
  mkdir -p "$dir"
  for lib in "$libdir"/*; do
    [ -e "$lib" ] || continue
    [[ $(basename "$lib") =~ $skip ]] || ln -sf "$lib" "$dir/"
  done
  if [ "$stdcxx" = newer-stdcxx ] && mine=$(ev_machine_stdcxx "$libdir") && [ -n "$mine" ]; then
    rm -f "$dir"/libstdc++.so* "$dir"/libgcc_s.so*
    ln -sf "$mine" "$dir/libstdc++.so.6"
    lib=$(ev_ld_cache libgcc_s.so.1)
    [ -n "$lib" ] && ln -sf "$lib" "$dir/libgcc_s.so.1"
  fi
  rest=$(ev_path_without "$libdir" "${LD_LIBRARY_PATH:-}")
  echo "$dir${rest:+:$rest}"
}
# ev_ld_cache NAME: the machine's own NAME (ldconfig's cache, a 64-bit one), empty if none.
ev_ld_cache() {
  local ldconfig
  ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
  "$ldconfig" -p 2>/dev/null | awk -v n="$1" '$1 == n && /x86-64|AArch64|64bit/ { print $NF; exit }'
}
# ev_glibcxx LIB: the newest GLIBCXX_3.4.N that LIB provides (N), empty if it cannot tell.
ev_glibcxx() { grep -aoE 'GLIBCXX_3\.4\.[0-9]+' "$1" 2>/dev/null | sed 's/.*\.//' | sort -n | tail -n 1; }
# ev_machine_stdcxx LIBDIR: the machine's libstdc++ when it is at least as new as LIBDIR's (an
# archive built on Debian 12, GCC 12). A Python step loads libroofbench (built there), an
# extension the machine's own compiler builds, and torch, in one process: the newer library
# serves all three, and the archive's, first on the path, would refuse an extension built by a
# newer GCC. Empty when LIBDIR's is the newer, when it has none (unpack-build.sh set it aside on
# an older glibc), or when either cannot be read.
ev_machine_stdcxx() {
  local theirs=$1/libstdc++.so.6 mine a b
  [ -e "$theirs" ] || return 0
  mine=$(ev_ld_cache libstdc++.so.6)
  [ -n "$mine" ] || return 0
  a=$(ev_glibcxx "$(readlink -f "$theirs")") b=$(ev_glibcxx "$(readlink -f "$mine")")
  [ -n "$a" ] && [ -n "$b" ] && [ "$b" -ge "$a" ] && echo "$mine"
  return 0
}

ev_step() {
  local name=$1 want=$2
  shift 2
  local left
  if [ -n "$EV_STOPPED" ]; then
    ev_skip "$name" "the stage was stopped by SIG$EV_STOPPED"
    return 130
  fi
  left=$(ev_remaining)
  local limit=$((want < left ? want : left))
  # Under 5 s is no time for a step (and `timeout 0` would mean no limit at all).
  if [ "$limit" -lt 5 ]; then
    ev_skip "$name" "no time left in the stage's ${EV_LIMIT} s"
    EV_FAILED=$((EV_FAILED + 1))
    return 124
  fi
  local log=$EV_WORK/$name.log t0 rc verdict
  t0=$(date +%s)
  echo "$EV_NAME: $name (at most ${limit} s): $*" >&2
  {
    echo "\$ $*"
    echo "# limit ${limit} s, started $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } >"$log"
  # In the background, so that a signal to the stage reaches the trap (and the step) at once.
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 &
  EV_CHILD=$!
  wait "$EV_CHILD"
  rc=$?
  while kill -0 "$EV_CHILD" 2>/dev/null; do  # a signal ended the wait, not the step
    wait "$EV_CHILD"
    rc=$?
  done
  EV_CHILD=""
  case $rc in
    0) verdict=PASS ;;
    124 | 137) verdict=TIMEOUT ;;
    130 | 143) verdict=STOPPED ;;
    1) verdict=FAIL; [ "${EV_DIFFER_OK:-0}" = 1 ] && verdict=DIFFER ;;
    *) verdict=FAIL ;;
  esac
  local detail
  detail=$(ev_detail "$log")
  # On a GPU stage, tests that all skipped for want of a GPU checked nothing: not a pass.
  if [ "${EV_EXPECT_GPU:-0}" = 1 ] && [ "$verdict" = PASS ] && grep -q 'no CUDA GPU visible' "$log"; then
    verdict=FAIL
    detail="no CUDA GPU visible: the tests skipped, nothing was checked${detail:+ ($detail)}"
  fi
  [ "$verdict" = PASS ] || [ "$verdict" = DIFFER ] || EV_FAILED=$((EV_FAILED + 1))
  EV_LINES+=("$(printf '  %-8s %4ss  %-16s %s%s' "$verdict" "$(($(date +%s) - t0))" "$name" \
    "${detail:+$detail; }" "see $name.log")")
  echo "$EV_NAME: $name: $verdict (exit $rc) in $(($(date +%s) - t0)) s" >&2
  return $rc
}

# The one line of a log worth reading in the summary: gtest's tally, roofbench's last word.
ev_detail() {
  local log=$1 line
  # A tool that refused the machine (Nsight Compute, compute-sanitizer), in its own words.
  # compute-sanitizer's count of errors, when not 0, before anything else it or the tests print.
  line=$(grep -m1 -E 'ERROR SUMMARY: [1-9]' "$log")
  [ -n "$line" ] && { echo "$line" | cut -c1-200; return; }
  line=$(grep -m1 -E '==ERROR==|========= Error|Device not supported|LibraryNotLoaded|ERR_NVGPUCTRPERM' "$log")
  [ -n "$line" ] && { echo "$line" | cut -c1-200; return; }
  # gtest pads the word to the bracket: "[  PASSED  ] 5 tests.", "[  SKIPPED ] 2 tests, listed below:"
  line=$(grep -E '^\[ +(PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$log" | tr '\n' ' ' | sed 's/, listed below://g')
  [ -n "$line" ] && { echo "$line" | sed 's/ *$//'; return; }
  line=$(grep -m1 -E '^GPU [0-9]+: ' "$log")
  [ -n "$line" ] && { echo "$line" | cut -c1-120; return; }
  # The Python stage's scripts (tests/python/gpu_visit.py, scripts/build-python-ext.sh): their last word.
  line=$(grep -E '^(gpu_visit|build-python-ext): ' "$log" | tail -n 1)
  [ -n "$line" ] && { echo "$line" | cut -c1-200; return; }
  line=$(grep -m1 -E '^roofbench: [0-9]+ benchmarks measured' "$log")
  [ -n "$line" ] && { echo "$line" | cut -c1-200; return; }
  line=$(grep -E '^roofbench: |ERROR SUMMARY|[0-9]+ SLOWER, |^merge: ' "$log" | tail -n 2 | tr '\n' ' ')
  echo "$line" | sed 's/ *$//' | cut -c1-200
}

# A gtest filter: BASE (gtest's POSITIVE[-NEGATIVE], patterns joined by ':') that also leaves out
# what SKIP (a roofbench --skip regex) names, by its words ("wgmma|naive" -> "*wgmma*:*naive*").
# gtest reads one '-' only: a second one would be a literal character of a pattern.
ev_gtest_filter() {
  local base=$1 skip=$2 pos neg=""
  if [[ $base == *-* ]]; then
    pos=${base%%-*} neg=${base#*-}
  else
    pos=$base
  fi
  pos=${pos%:}
  [ -n "$pos" ] || pos='*'
  [ -n "$skip" ] && neg=${neg:+$neg:}"*${skip//|/*:*}*"
  echo "$pos${neg:+-$neg}"
}

ev_end() {
  local status=0 summary=$EV_OUT/$EV_NAME-summary.txt verdict
  [ "$EV_FAILED" -eq 0 ] || status=1
  if [ -n "$EV_REFUSED" ]; then
    status=2
    verdict="REFUSED: $EV_REFUSED"
  elif [ -n "$EV_STOPPED" ]; then
    status=1
    verdict="STOPPED by SIG$EV_STOPPED: the steps after it did not run; a run it stopped left its results so far, marked partial"
  elif [ $status -eq 0 ]; then
    verdict=passed
  else
    verdict="FAILED: $EV_FAILED step(s) failed or ran out of time"
  fi
  {
    echo "$EV_NAME: $verdict (in $(ev_elapsed) s of ${EV_LIMIT} s)"
    printf '%s\n' "${EV_LINES[@]}"
    echo "evidence: $EV_OUT/$EV_NAME.tar.xz (every log named above and the results; tar -xJf to read)"
  } >"$EV_WORK/summary.txt"
  tar -cJf "$EV_OUT/$EV_NAME.tar.xz" -C "$EV_WORK" . 2>/dev/null ||
    echo "$EV_NAME: could not pack $EV_OUT/$EV_NAME.tar.xz" >>"$EV_WORK/summary.txt"
  cp "$EV_WORK/summary.txt" "$summary"
  rm -rf "$EV_WORK"
  echo
  cat "$summary"
  return $status
}
