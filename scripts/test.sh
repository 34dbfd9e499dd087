#!/usr/bin/env bash
# Installs what is missing, builds everything (CUDA code too when nvcc is there), and runs every
# test with ctest. Tests labelled `gpu` are reported as skipped when no GPU is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/env.sh
cmake --preset release
cmake --build --preset release
ctest --preset release -j 2 --output-on-failure
