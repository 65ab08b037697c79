#!/usr/bin/env bash
# Installs what remat builds and tests with: Debian bookworm's packages, then
# the Python packages of requirements.txt in one virtual environment, .venv at
# the repository's root, made from Debian's python3 (cmake/RematPython.cmake
# builds and tests with it).
# A no-op, apart from a few seconds of checks, when everything is there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(build-essential cmake ninja-build ccache lld clang llvm-14-dev llvm-14-tools
          libclang-rt-14-dev libabsl-dev libfmt-dev libgtest-dev libgmock-dev
          libbenchmark-dev libeigen3-dev librandom123-dev libzip-dev pkg-config
          libprotobuf-dev libonnx-dev libopenmpi-dev openmpi-bin coinor-libcbc-dev
          libboost-graph-dev
          # The Python bridge (tools/python) and the virtual environment.
          python3 python3-dev python3-venv pybind11-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

# PyTorch 2, ONNX Runtime, onnx and numpy, pinned in requirements.txt. The
# environment's copy of that file says what it holds: pip runs only when the
# two differ (PyTorch alone is 5.5 GB; pip takes a minute or two to lay it).
venv=$root/.venv
if ! cmp -s "$root/requirements.txt" "$venv/requirements.txt"; then
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  echo "install-deps: installing requirements.txt into $venv"
  # -qq: pip warns of every index folder that lacks a package; errors still show.
  "$venv/bin/python" -m pip install -qq --no-input -r "$root/requirements.txt"
  cp "$root/requirements.txt" "$venv/requirements.txt"
fi
