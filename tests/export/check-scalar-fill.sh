#!/bin/sh
# ones_like and zeros_like of a scalar (scalar-fill.remat) through `remat
# export` and ONNX Runtime: the loss stays a scalar (shape [] in ort-run's
# JSON; an Expand of the lowering's [1] zero would make it [1]), and the loss
# and gradient equal remat's executor's to 1e-6.
# Usage: check-scalar-fill.sh REMAT ORT_RUN GRAPH WORK
set -eu
remat=$1 ortrun=$2 graph=$3 work=$4
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
"$remat" opt "$graph" -o "$work/train.remat"
"$remat" export "$work/train.remat" -o "$work/train.onnx"
"$remat" run "$work/train.remat" --dump="$work/remat.npz" \
  --dump-feeds="$work/feeds.npz" >/dev/null
"$ortrun" "$work/train.onnx" --feeds="$work/feeds.npz" --json \
  --dump="$work/ort.npz" >"$work/ort.json"
tr -d ' \n' <"$work/ort.json" | grep -q '"name":"loss","type":"float32","shape":\[\]' ||
  { echo "FAIL: ONNX Runtime's loss is not a scalar:"; cat "$work/ort.json"; exit 1; }
"$remat" compare "$work/ort.npz" "$work/remat.npz" --tolerance=1e-6
