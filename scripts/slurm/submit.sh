#!/usr/bin/env bash
# Submits a roofbench fleet sweep to Slurm: a job array of node.sbatch, one task per node
# (--exclusive: each task has its node to itself, every GPU of it through `--device all`), and
# fleet.sbatch after it (--dependency=afterany), which writes the fleet report and checks that
# every task ran and every node was covered. Prints the two sbatch lines it runs and the job IDs.
#
# Usage: submit.sh FLEET_DIR [--partition P | --nodes HOSTLIST | --tasks N] [--sbatch OPT]...
#                  [--node-sbatch OPT]... [--fleet OPT]... [-- roofbench run options...]
#   FLEET_DIR     a folder every node sees (a shared file system); runs/, tasks/, report/ go there
#   --partition   one task per node of partition P (sinfo's node list, checked by the fleet job)
#   --nodes       one task per node of HOSTLIST ("gpu[01-16]"; give --partition too if those
#                 nodes are not in the default one: Slurm places the tasks, submit.sh counts them)
#   --tasks       N tasks, no node list to check (a single node, or a test)
#   --sbatch OPT  one more option for both sbatch calls (--account=..., --qos=...)
#   --node-sbatch OPT  one more for the array's only (--time=30, --gres=gpu:8): the fleet job
#                 merges JSON files and needs no GPU
#   --fleet OPT   one more option for `roofbench fleet` (--threshold=3, --mad=4)
# env: ROOFBENCH, the binary both jobs run (default: `roofbench` on PATH), exported to the jobs.
# Exit: 0 when both jobs were submitted (the sweep's verdict is the fleet job's exit code), 2 on
# bad input or a failed sbatch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '6,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] && [ -n "$1" ] && [ "${1#-}" = "$1" ] || usage
fleet_dir=$(realpath -m "$1")
shift
partition="" nodes="" tasks=""
sbatch_opts=() node_opts=() fleet_opts=() run_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --partition) [ $# -ge 2 ] || usage; partition=$2; shift 2 ;;
    --nodes) [ $# -ge 2 ] || usage; nodes=$2; shift 2 ;;
    --tasks) [ $# -ge 2 ] || usage; tasks=$2; shift 2 ;;
    --sbatch) [ $# -ge 2 ] || usage; sbatch_opts+=("$2"); shift 2 ;;
    --node-sbatch) [ $# -ge 2 ] || usage; node_opts+=("$2"); shift 2 ;;
    --fleet) [ $# -ge 2 ] || usage; fleet_opts+=("$2"); shift 2 ;;
    --) shift; run_opts=("$@"); break ;;
    *) echo "submit.sh: unknown option '$1'" >&2; usage ;;
  esac
done
command -v sbatch >/dev/null || { echo "submit.sh: no sbatch on PATH (is this a Slurm login node?)" >&2; exit 2; }
[ -n "$partition" ] && sbatch_opts+=("--partition=$partition")
if [ -z "$nodes" ] && [ -n "$partition" ] && [ -z "$tasks" ]; then
  nodes=$(sinfo -h -p "$partition" -o %N | paste -sd, -)
  [ -n "$nodes" ] || { echo "submit.sh: sinfo lists no nodes in partition '$partition'" >&2; exit 2; }
fi
if [ -n "$nodes" ]; then
  hosts=$(scontrol show hostnames "$nodes" 2>&1) || { echo "submit.sh: scontrol could not expand '$nodes': $hosts" >&2; exit 2; }
  count=$(printf '%s\n' "$hosts" | grep -c .)
  [ "$count" -gt 0 ] || { echo "submit.sh: no nodes in '$nodes'" >&2; exit 2; }
  [ -z "$tasks" ] || [ "$tasks" = "$count" ] ||
    { echo "submit.sh: --tasks $tasks but --nodes '$nodes' holds $count" >&2; exit 2; }
  tasks=$count
fi
case "$tasks" in '' | 0 | *[!0-9]*) echo "submit.sh: give --partition, --nodes or --tasks N (N >= 1), got '${tasks}'" >&2; exit 2 ;; esac
if [ -n "${ROOFBENCH:-}" ]; then
  [ -x "$ROOFBENCH" ] || { echo "submit.sh: ROOFBENCH=$ROOFBENCH is not an executable" >&2; exit 2; }
  export ROOFBENCH=$(realpath "$ROOFBENCH")
else
  command -v roofbench >/dev/null || { echo "submit.sh: no roofbench on PATH (or set ROOFBENCH)" >&2; exit 2; }
fi
mkdir -p "$fleet_dir"

# Empty arrays as ${a[@]+"${a[@]}"}: bash before 4.4 (RHEL 7's) calls "${a[@]}" unbound under set -u.
array_cmd=(sbatch --parsable --array="0-$((tasks - 1))" --chdir="$fleet_dir" ${sbatch_opts[@]+"${sbatch_opts[@]}"}
           ${node_opts[@]+"${node_opts[@]}"} "$here/node.sbatch" "$fleet_dir" ${run_opts[@]+"${run_opts[@]}"})
echo "submit.sh: $(printf "%q " "${array_cmd[@]}")"
array=$("${array_cmd[@]}") || { echo "submit.sh: sbatch refused the array job" >&2; exit 2; }
array=${array%%;*}  # --parsable prints "jobid[;cluster]"
fleet_cmd=(sbatch --parsable --dependency="afterany:$array" --chdir="$fleet_dir" ${sbatch_opts[@]+"${sbatch_opts[@]}"}
           "$here/fleet.sbatch" "$fleet_dir" --job "$array" --tasks "$tasks")
[ -z "$nodes" ] || fleet_cmd+=(--nodes "$nodes")
fleet_cmd+=(${fleet_opts[@]+"${fleet_opts[@]}"})
echo "submit.sh: $(printf "%q " "${fleet_cmd[@]}")"
fleet=$("${fleet_cmd[@]}") || { echo "submit.sh: sbatch refused the fleet job (array job $array is queued: scancel $array)" >&2; exit 2; }
fleet=${fleet%%;*}
echo "submit.sh: array job $array ($tasks task(s)), fleet job $fleet; report in $fleet_dir/report, verdict: the fleet job's exit code"
echo "array=$array"
echo "fleet=$fleet"
