#!/usr/bin/env bash
# Installs the Debian packages roofbench needs, skipping those already present. The CUDA toolkit
# (nvcc, CUPTI, cuBLAS) is optional: without it roofbench builds and runs on the CPU alone.
set -euo pipefail

packages=(cmake ninja-build g++ git pkg-config
          libbenchmark-dev libfmt-dev nlohmann-json3-dev libcli11-dev libopenblas-dev libopenblas-openmp-dev
          # bench/stats.cpp: the t and normal distributions (header-only)
          libboost-math-dev
          # bench/results.cpp: results files stored compressed (.json.gz, .json.xz), read as they are
          zlib1g-dev liblzma-dev xz-utils
          libgtest-dev libgmock-dev libtinyxml2-dev
          # the CPU elementwise families' vectorized transcendentals
          libsleef-dev
          # Google Benchmark's tools/compare.py and the scipy it needs: a test checks that
          # gbench.json works with it
          libbenchmark-tools python3-scipy
          # scripts/fuzz.sh: clang with libFuzzer and the sanitizers' runtimes, and its OpenMP
          clang libclang-rt-dev libomp-dev
          # scripts/slurm/ and its test, which starts a one-node Slurm cluster on this machine
          slurm-wlm munge
          # taskset: the fleet test pins its throttled run to one CPU
          util-linux
          # the chart test renders the charts in headless Chromium, with a fixed font
          chromium fonts-dejavu-core)

missing=()
for p in "${packages[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python package (python/, docs/python.md): its binding library and build backend, and NumPy
# for its tests, from PyPI into the python3 on PATH (the one CMake builds the extension for).
if ! python3 -c "import numpy, nanobind, scikit_build_core" 2>/dev/null; then
  echo "setup: installing numpy, nanobind and scikit-build-core for $(command -v python3) from PyPI"
  python3 -m pip install --quiet "numpy>=1.24" "nanobind>=2.0" "scikit-build-core>=0.10"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: no CUDA toolkit found: building the CPU backend only"
fi

# cuobjdump and nvdisasm, for the test that reads the divergence kernels' SASS
# (tests/kernels/test_sass.cpp). This toolkit image ships neither; NVIDIA publishes both on PyPI.
# Pinned; they go to .tools/cuda/bin, which CMake searches before the toolkit's bin/.
sass_tools_version=13.2.86
tools=$(cd "$(dirname "$0")/.." && pwd)/.tools/cuda
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  if [ ! -x "$tools/bin/cuobjdump" ] || [ ! -x "$tools/bin/nvdisasm" ] ||
     [ "$(cat "$tools/version" 2>/dev/null)" != "$sass_tools_version" ]; then
    echo "setup: fetching cuobjdump and nvdisasm $sass_tools_version from PyPI into .tools/cuda"
    wheels=$(mktemp -d)
    trap 'rm -rf "$wheels"' EXIT
    python3 -m pip download --quiet --no-deps --dest "$wheels" \
      "nvidia-cuda-cuobjdump==$sass_tools_version" "nvidia-cuda-nvdisasm==$sass_tools_version"
    rm -rf "$tools" && mkdir -p "$tools/bin"
    python3 - "$wheels" "$tools/bin" <<'PY'
import pathlib, sys, zipfile
wheels, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for wheel in wheels.glob("*.whl"):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith("/bin/cuobjdump") or name.endswith("/bin/nvdisasm"):
                target = out / pathlib.Path(name).name
                target.write_bytes(z.read(name))
                target.chmod(0o755)
PY
    for t in cuobjdump nvdisasm; do
      "$tools/bin/$t" --version >/dev/null || { echo "setup: $tools/bin/$t does not run" >&2; exit 1; }
    done
    echo "$sass_tools_version" >"$tools/version"
  fi
fi
