#!/usr/bin/env bash
# Sets everything up and runs every test: the unit, lit, malformed-input and
# install tests in a normal build, the same under ASan+UBSan, and short
# libFuzzer runs of the parser and of the .npy/.npz readers.
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
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE slow

# The text IR parser under libFuzzer (clang, ASan+UBSan) for a minute, over a
# scratch copy of its seed corpus: tests/malformed plus a few valid graphs. A
# crash, a sanitizer report or a broken round trip fails the script; the input
# is saved as build-fuzz/crash-*.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DREMAT_BUILD_FUZZERS=ON -DREMAT_BUILD_TESTS=ON \
  -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j "$jobs" --target remat-parser-fuzzer remat-npy-fuzzer
fuzz_corpus=$(mktemp -d)
cp tests/malformed/*.remat tests/fuzz/corpus/*.remat "$fuzz_corpus"/
build-fuzz/tests/fuzz/remat-parser-fuzzer -max_total_time=60 -timeout=10 \
  -dict=tests/fuzz/text-ir.dict -artifact_prefix=build-fuzz/ "$fuzz_corpus"
rm -rf "$fuzz_corpus"

# The .npy/.npz readers under libFuzzer for 20 seconds, seeded with the files
# numpy wrote (tests/fixtures/npy).
fuzz_corpus=$(mktemp -d)
cp tests/fixtures/npy/* "$fuzz_corpus"/
build-fuzz/tests/fuzz/remat-npy-fuzzer -max_total_time=20 -timeout=10 \
  -dict=tests/fuzz/npy.dict -artifact_prefix=build-fuzz/ "$fuzz_corpus"
rm -rf "$fuzz_corpus"
# The ONNX importer under libFuzzer for 30 s, seeded with the C++-built test
# models (remat-onnx-fixtures) and the checked-in PyTorch exports.
cmake --build build-fuzz -j "$jobs" --target remat-onnx-fuzzer remat-onnx-fixtures
onnx_corpus=$(mktemp -d)
build-fuzz/tests/onnx/remat-onnx-fixtures "$onnx_corpus"
cp tests/onnx/fixtures/*.onnx "$onnx_corpus"
build-fuzz/tests/fuzz/remat-onnx-fuzzer -max_total_time=30 -timeout=10 \
  -artifact_prefix=build-fuzz/onnx- "$onnx_corpus"
rm -rf "$onnx_corpus"
