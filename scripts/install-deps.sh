#!/usr/bin/env bash
# Installs the Debian bookworm packages remat builds and tests with, and ONNX
# Runtime's npm package for tools/ort-run; a no-op when they are all present.
set -euo pipefail
packages=(build-essential cmake ninja-build ccache lld clang llvm-14-dev llvm-14-tools
          libclang-rt-14-dev libabsl-dev libfmt-dev libgtest-dev libgmock-dev
          libbenchmark-dev libeigen3-dev librandom123-dev libzip-dev pkg-config
          libprotobuf-dev libonnx-dev python3 libopenmpi-dev openmpi-bin coinor-libcbc-dev
          libboost-graph-dev)
# The Python package and its PyTorch bridge (tools/python), without what they
# only recommend (libtorch's C++ headers, torchvision's video decoders: minutes
# of download a fresh machine does not need).
python_packages=(python3-dev pybind11-dev python3-torch python3-torchvision
                 python3-networkx)
missing_from() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
missing=($(missing_from "${packages[@]}"))
missing_python=($(missing_from "${python_packages[@]}"))
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ] || [ ${#missing_python[@]} -gt 0 ]; then
  $sudo apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
if [ ${#missing_python[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing_python[@]}"
fi

# ONNX Runtime 1.30 for tools/ort-run (remat's second executor). Debian has none:
# its npm package holds the CPU libonnxruntime.so.1 and the Node binding. Installed
# from tools/ort-run's lock file into build/ort-run ($ORT_RUN_DIR if set), a no-op
# when that version is there; --ignore-scripts because the package's postinstall
# downloads CUDA binaries from outside.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm
fi
root=$(cd "$(dirname "$0")/.." && pwd)
ort_dir=${ORT_RUN_DIR:-$root/build/ort-run}
if ! grep -q '"version": "1.30.0"' "$ort_dir/node_modules/onnxruntime-node/package.json" 2>/dev/null; then
  mkdir -p "$ort_dir"
  cp "$root/tools/ort-run/package.json" "$root/tools/ort-run/package-lock.json" "$ort_dir/"
  (cd "$ort_dir" && npm ci --ignore-scripts --no-audit --no-fund)
fi
