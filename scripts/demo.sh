#!/usr/bin/env bash
# Sets everything up and runs the main job: statistics of the ResNet-50 training
# graph from the model zoo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DREMAT_BUILD_TESTS=OFF -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build --target remat-cli
echo "== remat zoo resnet --depth=50 | remat stats -"
build/bin/remat zoo resnet --depth=50 | build/bin/remat stats -
