#!/usr/bin/env bash
# Installs the Debian packages lazuli needs to build and test, skipping those already present,
# then the Python environment of its Python package (tools/setup-python.sh). Safe to run again;
# needs root (or sudo) only when a Debian package is missing.
set -euo pipefail

packages=(
  cmake            # >= 3.25
  ninja-build
  g++              # C++20
  libgtest-dev     # GoogleTest
  libgmock-dev
  libbenchmark-dev # Google Benchmark
  libboost-graph-dev # Boost.Graph (header-only): the scheduler's kernel DAG
  graphviz         # `dot`, to check the IR's DOT export
  llvm-14-tools    # FileCheck, for the IR tests of the passes
  ccache           # faster rebuilds
  libeigen3-dev    # Eigen: a reference column of benchmarks/lazuli_bench (optional there)
  libopenblas-dev  # OpenBLAS: lazuli's float matmul (runtime/cpu/blas_matmul.cpp)
  libdnnl-dev      # oneDNN: lazuli's large float32 matmul (runtime/cpu/onednn_gemm.cpp)
  libopenmpi-dev   # Open MPI: lz::dist's process group (dist/, the library lazuli::dist)
  openmpi-bin      # mpirun, which runs tests/distributed with 2 and 3 ranks
  python3-dev      # the Python package (python/): headers to build its extension
  python3-venv     # its build and test environment (tools/setup-python.sh)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "lazuli set-up: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

"$(dirname "$0")/setup-python.sh"
