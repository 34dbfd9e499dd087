#!/usr/bin/env bash
# Installs what is missing, builds everything (CUDA code too when nvcc is there), and runs every
# test with ctest. Tests labelled `gpu` are reported as skipped when no GPU is visible.
# Then the host code again under AddressSanitizer and UndefinedBehaviorSanitizer (clang, preset
# `asan`): the fast host tests, and each libFuzzer target for FUZZ_SECONDS (default 10) from the
# committed seeds (scripts/fuzz.sh; docs/reliability.md). FUZZ_SECONDS=0 leaves the fuzzing out.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/env.sh
start=$SECONDS
cmake --preset release
cmake --build --preset release
ctest --preset release -j 2 --output-on-failure
echo "test: release build and tests: $((SECONDS - start)) s"

start=$SECONDS
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan -j 2 --output-on-failure
fuzz_seconds=${FUZZ_SECONDS:-10}
if [ "$fuzz_seconds" != 0 ]; then
  ./scripts/fuzz.sh "$fuzz_seconds" build/fuzz-runs
fi
echo "test: sanitized build, tests and fuzzing: $((SECONDS - start)) s"
