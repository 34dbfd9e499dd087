#!/usr/bin/env bash
# Installs what is missing, builds Release, and runs the suite on the first GPU (the CPU when
# there is none). Arguments go to `roofbench run`, e.g. ./scripts/run.sh --quick --out DIR
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/env.sh
cmake --preset release >/dev/null
cmake --build --preset release --target roofbench
exec ./build/release/roofbench run "$@"
