#!/usr/bin/env bash
# Sets everything up and runs every test: the unit, lit, malformed-input and
# install tests in a normal build, the same under ASan+UBSan, and short
# libFuzzer runs of the parser and of the .npy/.npz and ONNX readers.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's tools first: pip's cmake 4.x or pyenv's python3 may come earlier on
# PATH, and the build is made and tested with Debian's cmake 3.25.
export PATH="/usr/bin:$PATH"
bash scripts/install-deps.sh
jobs=$(nproc)
# ccache (cmake/RematCompileOptions.cmake) hashes paths relative to the
# checkout and not the working folder, so that a clone elsewhere on the same
# machine (CI's) reuses the objects an earlier build made.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1

cmake -S . -B build -G Ninja -DREMAT_BUILD_TESTS=ON -DREMAT_BUILD_BENCHMARKS=ON \
  -DREMAT_REQUIRE_PYTHON_PACKAGES=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DREMAT_SANITIZE=ON -DREMAT_BUILD_TESTS=ON \
  -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j "$jobs"
# The sanitizers skip the slow label; tests/unit/CMakeLists.txt says which
# searches they leave to the normal build and why the unit tests run in shards.
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE slow

# The parser and the .npy/.npz and ONNX readers under libFuzzer, each for a
# fixed seed and number of inputs (scripts/fuzz.sh says why).
bash scripts/fuzz.sh
