#!/usr/bin/env bash
# Makes the Python environment lazuli's Python package builds and tests in: a virtual environment
# at .venv (beside this folder) holding nanobind, scikit-build-core, numpy and pytest from PyPI.
# Safe to run again: it does nothing when they are all there. CMake finds the environment by
# itself (python/CMakeLists.txt).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
requirements=(nanobind scikit-build-core numpy pytest)

if [[ -x "$venv/bin/python" ]] &&
   "$venv/bin/python" -c "import nanobind, scikit_build_core, numpy, pytest" 2>/dev/null; then
  exit 0
fi
echo "lazuli set-up: making $venv with ${requirements[*]}"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "${requirements[@]}"
