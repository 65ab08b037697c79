#!/usr/bin/env bash
# Sets everything up and runs the main job on the model zoo: the ResNet-50
# forward graph's statistics, its training graph's baseline peak memory and
# FLOPs (plain autodiff), and a gradient check of a small ResNet-18 by finite
# differences in the reference executor.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DREMAT_BUILD_TESTS=OFF -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build --target remat-cli
remat=build/bin/remat
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== remat zoo resnet --depth=50 | remat stats -"
$remat zoo resnet --depth=50 -o "$work/resnet50.remat"
$remat stats "$work/resnet50.remat"

echo
echo "== remat opt resnet50.remat --strategy=none -o train.remat --report=-"
$remat opt "$work/resnet50.remat" --strategy=none -o "$work/train.remat" --report=-
echo "== remat stats train.remat"
$remat stats "$work/train.remat"

echo
echo "== remat zoo resnet --depth=18 --batch=2 --image=32 | remat run - --check-grad"
$remat zoo resnet --depth=18 --batch=2 --image=32 | $remat run - --check-grad
