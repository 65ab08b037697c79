#!/usr/bin/env bash
# Sets everything up and runs the main job on the model zoo: ResNet-50's
# training graph with plain autodiff and with sqrtn checkpoints (report and
# plan), then, on a small ResNet-18, the rewritten gradients compared bitwise
# with plain autodiff's and checked against finite differences.
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
echo "== remat opt resnet50.remat --strategy=sqrtn -o train.remat --report=-"
$remat opt "$work/resnet50.remat" --strategy=sqrtn -o "$work/train.remat" --report=-
echo "== remat opt resnet50.remat --strategy=sqrtn --explain (abridged)"
$remat opt "$work/resnet50.remat" --strategy=sqrtn --explain | head -n 12

echo
echo "== resnet-18 (batch 2, 32 px): sqrtn against plain autodiff, bitwise"
$remat zoo resnet --depth=18 --batch=2 --image=32 -o "$work/resnet18.remat"
$remat opt "$work/resnet18.remat" --strategy=sqrtn -o "$work/r18-sqrtn.remat"
$remat opt "$work/resnet18.remat" --strategy=none -o "$work/r18-plain.remat"
$remat run "$work/r18-sqrtn.remat" --compare="$work/r18-plain.remat" | tail -n 1
echo "== remat run resnet18.remat --check-grad"
$remat run "$work/resnet18.remat" --check-grad
