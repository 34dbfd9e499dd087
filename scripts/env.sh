# Sourced by the scripts: puts the CUDA toolkit on PATH where it is installed but not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# gpu_slug cuda:N: the folder under reports/baselines/ for that GPU, from nvidia-smi's name
# ("NVIDIA H200" -> h200); prints nothing when nvidia-smi does not name it.
gpu_slug() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${1#cuda:}" 2>/dev/null | head -n1)
  [ -n "$name" ] && echo "$name" | tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/ .*//'
}
