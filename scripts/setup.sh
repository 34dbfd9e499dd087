#!/usr/bin/env bash
# Installs the Debian packages roofbench needs, skipping those already present. The CUDA toolkit
# (nvcc, CUPTI, cuBLAS) is optional: without it roofbench builds and runs on the CPU alone.
set -euo pipefail

packages=(cmake ninja-build g++ git pkg-config
          libbenchmark-dev libfmt-dev nlohmann-json3-dev libcli11-dev libopenblas-dev libopenblas-openmp-dev
          libgtest-dev libgmock-dev libtinyxml2-dev
          # Google Benchmark's tools/compare.py and the scipy it needs: a test checks that
          # gbench.json works with it
          libbenchmark-tools python3-scipy)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: no CUDA toolkit found: building the CPU backend only"
fi
