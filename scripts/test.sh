#!/usr/bin/env bash
# Sets everything up and runs every test: the unit, lit, malformed-input and
# install tests in a normal build, the same under ASan+UBSan, and short
# libFuzzer runs of the parser and of the .npy/.npz and ONNX readers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

cmake -S . -B build -G Ninja -DREMAT_BUILD_TESTS=ON -DREMAT_BUILD_BENCHMARKS=ON >/dev/null
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
