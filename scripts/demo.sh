#!/usr/bin/env bash
# Sets everything up and runs the main job on the model zoo: ResNet-50's
# training graph (batch 32, 224 px) planned within 40% of plain autodiff's
# peak; then, on a 32-layer MLP where activations dominate and the reference
# executor runs in a second, a plan within 30% built, run, its gradients
# compared bitwise with plain autodiff's and its measured peak with the
# plan's.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's tools first: pip's cmake 4.x or pyenv's python3 may come earlier on
# PATH, and the build is made and tested with Debian's cmake 3.25.
export PATH="/usr/bin:$PATH"
# ccache keyed by paths relative to the checkout, as in scripts/test.sh.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DREMAT_BUILD_TESTS=OFF -DREMAT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build --target remat-cli
remat=build/bin/remat
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }

echo "== remat zoo resnet --depth=50 | remat stats -   (batch 32, 224 px)"
$remat zoo resnet --depth=50 -o "$work/resnet50.remat"
$remat stats "$work/resnet50.remat"

echo
echo "== remat opt resnet50.remat --budget=40% --explain   (abridged)"
# Through a file: under pipefail, `| head` fails the script whenever remat
# writes after head has exited (SIGPIPE), which a busy machine makes likely.
$remat opt "$work/resnet50.remat" --budget=40% --explain >"$work/explain.txt"
head -n 12 "$work/explain.txt"

echo
echo "== a 32-layer MLP (batch 1024): plain autodiff against --budget=30%, run"
$remat zoo mlp --layers=32 --width=64 --batch=1024 --input=64 -o "$work/mlp.remat"
$remat opt "$work/mlp.remat" -o "$work/plain.remat"
$remat opt "$work/mlp.remat" --budget=30% -o "$work/planned.remat" \
  --report="$work/report.json"
r="$work/report.json"
printf 'plan %s: peak %s -> %s bytes, budget met %s, recompute overhead %.3f\n' \
  "$(field strategy "$r" | tr -d '"')" "$(field peak_bytes_before "$r")" \
  "$(field peak_bytes_after "$r")" "$(field budget_met "$r")" "$(field overhead "$r")"
echo "== remat run planned.remat --compare=plain.remat   (loss and every gradient, bitwise)"
$remat run "$work/planned.remat" --compare="$work/plain.remat" | tail -n 1
echo "== remat run planned.remat --json   (the executor's measured peak against the plan's)"
$remat run "$work/planned.remat" --json >"$work/run.json"
echo "measured peak $(field peak_bytes "$work/run.json") bytes," \
  "simulated $(field simulated_peak_bytes "$work/run.json"), planned $(field peak_bytes_after "$r")"
