#!/usr/bin/env bash
# Sets everything up and runs the main job on the model zoo: ResNet-50's
# training graph (batch 32, 224 px) planned within 40% of plain autodiff's
# peak; then, on a 32-layer MLP where activations dominate and the reference
# executor runs in a second, a plan within 30% built, run, its gradients
# compared bitwise with plain autodiff's and its measured peak with the
# plan's; last, both exported to ONNX and run by ONNX Runtime, which measures
# the memory the plan gives back and computes the same step.
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
ortrun=build/bin/ort-run   # tools/ort-run on the .venv's ONNX Runtime
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A top-level field of a JSON file (remat's and ort-run's indent differ).
field() { sed -n "s/^ \{1,2\}\"$1\": \\(.*\\),\$/\\1/p" "$2"; }

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

echo
echo "== ONNX Runtime runs both steps: remat export, then ort-run   (its peak RSS)"
$remat export "$work/plain.remat" -o "$work/plain.onnx"
$remat export "$work/planned.remat" -o "$work/planned.onnx"
$remat run "$work/planned.remat" --dump-feeds="$work/feeds.npz" >/dev/null
# Freed blocks of this size go back to the system, so that the process's peak
# follows the bytes the runtime holds (tools/ort-run/README.md).
export MALLOC_MMAP_THRESHOLD_=65536
for step in plain planned; do
  $ortrun "$work/$step.onnx" --feeds="$work/feeds.npz" --steps=3 --json \
    --dump="$work/$step-ort.npz" >"$work/$step-ort.json"
done
plain=$(field run_peak_bytes "$work/plain-ort.json")
planned=$(field run_peak_bytes "$work/planned-ort.json")
predicted=$(( $(field peak_bytes_before "$r") - $(field peak_bytes_after "$r") ))
awk -v plain="$plain" -v planned="$planned" -v predicted="$predicted" 'BEGIN {
  mib = 1048576
  printf "measured peak: plain autodiff %.2f MiB, the plan %.2f MiB\n", plain / mib, planned / mib
  printf "the plan saves %.2f MiB, %.0f%% of the %.2f MiB remat predicted\n",
    (plain - planned) / mib, 100 * (plain - planned) / predicted, predicted / mib
}'
echo "== remat compare planned-ort.npz plain-ort.npz --tolerance=0   (ONNX Runtime's loss and gradients)"
$remat compare "$work/planned-ort.npz" "$work/plain-ort.npz" --tolerance=0 | tail -n 1
