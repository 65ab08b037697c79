#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each over a
# scratch copy of its seed corpus: the text IR parser (tests/malformed plus a
# few valid graphs), the .npy/.npz readers (the files numpy wrote) and the
# ONNX importer (the C++-built test models and the PyTorch exports). A crash,
# a sanitizer report, a hang or an error without its located prefix fails the
# script; the input is kept as build-fuzz/{,npy-,onnx-}crash-*.
#
#   scripts/fuzz.sh           What scripts/test.sh (CI) runs: seed 1 and a
#                             fixed number of inputs per target (about 90 s in
#                             all on 2 cores): every run of one build tries the
#                             same inputs, so this command reproduces a failure.
#                             (Another checkout path is another binary, whose
#                             coverage, and so whose inputs, drift apart.)
#   scripts/fuzz.sh SECONDS   A campaign: a random seed and SECONDS per target.
#                             Run one before a change to the parser or the
#                             importers lands; CI's fixed runs only guard
#                             against what such campaigns have already found.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

# The fixed runs are repeatable only without address randomisation (Abseil
# seeds its hash maps with an address) and without re-reading the corpus
# directory on a clock (-reload=0). Where setarch may not switch ASLR off,
# the runs still start from seed 1 but can drift apart.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  norandom=(setarch "$(uname -m)" -R)
fi

if [[ $# -eq 0 ]]; then
  budget() { echo "-seed=1 -reload=0 -runs=$1"; }
elif [[ $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  budget() { echo "-seed=0 -max_total_time=$seconds"; }
  norandom=()
else
  echo "usage: scripts/fuzz.sh [SECONDS]" >&2
  exit 1
fi

cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DREMAT_BUILD_FUZZERS=ON -DREMAT_BUILD_TESTS=ON \
  -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j "$jobs" --target remat-parser-fuzzer \
  remat-npy-fuzzer remat-onnx-fuzzer remat-onnx-fixtures

# fuzz TARGET RUNS ARTIFACT_PREFIX CORPUS_FILLER [libFuzzer flags...]
fuzz() {
  local target=$1 runs=$2 prefix=$3 fill=$4
  shift 4
  local corpus
  corpus=$(mktemp -d)
  "$fill" "$corpus"
  # shellcheck disable=SC2046 # budget's flags are meant to split
  "${norandom[@]}" "build-fuzz/tests/fuzz/$target" $(budget "$runs") -timeout=10 \
    -artifact_prefix="build-fuzz/$prefix" "$@" "$corpus"
  rm -rf "$corpus"
}

text_corpus() { cp tests/malformed/*.remat tests/fuzz/corpus/*.remat "$1"/; }
npy_corpus() { cp tests/fixtures/npy/* "$1"/; }
onnx_corpus() {
  build-fuzz/tests/onnx/remat-onnx-fixtures "$1"
  cp tests/onnx/fixtures/*.onnx "$1"/
}

fuzz remat-parser-fuzzer 2000000 "" text_corpus -dict=tests/fuzz/text-ir.dict
fuzz remat-npy-fuzzer 1000000 npy- npy_corpus -dict=tests/fuzz/npy.dict
fuzz remat-onnx-fuzzer 50000 onnx- onnx_corpus
