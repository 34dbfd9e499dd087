# Sourced by the scripts: puts the CUDA toolkit on PATH where it is installed but not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# slug_of_gpu NAME: the folder under reports/baselines/ for a GPU of that name, whichever Hopper
# comes ("NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100).
slug_of_gpu() {
  echo "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/ .*//'
}

# gpu_slug cuda:N: that folder for the GPU nvidia-smi names; prints nothing when it names none.
gpu_slug() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${1#cuda:}" 2>/dev/null | head -n1)
  [ -n "$name" ] && slug_of_gpu "$name"
}

# results_file_in DIR: the folder's results file, as a run writes it or as a committed baseline
# stores it (results.json, results.json.xz, results.json.gz: bench/results.h, kResultsFileNames);
# prints nothing, and fails, when it holds none, and when it holds two (which of them is the run's
# cannot be told: roofbench refuses such a folder too), saying so.
results_file_in() {
  local n found=()
  for n in results.json results.json.xz results.json.gz; do [ -f "$1/$n" ] && found+=("$1/$n"); done
  if [ ${#found[@]} -gt 1 ]; then
    echo "$1 holds ${#found[@]} results files ($(basename -a "${found[@]}" | paste -sd ' ')): keep one" >&2
    return 1
  fi
  [ ${#found[@]} -eq 1 ] && echo "${found[0]}"
}
