#!/usr/bin/env bash
# Installs the Debian bookworm packages remat builds and tests with; a no-op when
# they are all present.
set -euo pipefail
packages=(build-essential cmake ninja-build ccache lld clang llvm-14-dev llvm-14-tools
          libclang-rt-14-dev libabsl-dev libfmt-dev libgtest-dev libgmock-dev
          libbenchmark-dev libeigen3-dev librandom123-dev libzip-dev pkg-config
          libprotobuf-dev libonnx-dev python3 libopenmpi-dev openmpi-bin coinor-libcbc-dev
          libboost-graph-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
