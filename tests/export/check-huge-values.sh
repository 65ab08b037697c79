#!/bin/sh
# The forced dependencies' zeros are +0 whatever the awaited value: the
# chain of chain.remat, %a recomputed three times, run in ONNX Runtime with
# x[0] = 1e20 (finite, as every value of the step: sines of it). Each zero
# was once 0 * g0 * g0 of the awaited tensor's first element g0, NaN where
# g0 * g0 overflows (w.grad[0] is about 1e20 here): the step then failed in
# ONNX Runtime or its gradients were NaN. Exported with idle buffers hidden
# (the default, whose Reshapes add a zero to dims) and without; loss and
# gradients must equal remat's executor on the same values to 1e-5.
# Usage: check-huge-values.sh REMAT ORT_RUN PYTHON CHAIN.remat WORK
set -eu
remat=$1 ortrun=$2 python=$3 chain=$4 work=$5
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
# f32[4] .npy files, written by the Python that runs ort-run.
npy() {
  "$python" -c '
import sys, numpy as np
np.save(sys.argv[1], np.array([float(v) for v in sys.argv[2:]], np.float32))' "$@"
}
npy "$work/x.npy" 1e20 0.5 -0.3 2.0
npy "$work/w.npy" 1.0 0.7 1.3 -0.4
"$remat" opt "$chain" --planner=schedule=cos:a+b+c,cos.1:a+b,cos.2:a \
  -o "$work/train.remat" 2>/dev/null
"$remat" run "$work/train.remat" --feeds="$work/x.npy" --params="$work/w.npy" \
  --dump="$work/remat.npz" >/dev/null
for hide in 1000 0; do
  "$remat" export "$work/train.remat" --pinned-node-bytes=0 \
    --hide-idle-buffers=$hide -o "$work/train-$hide.onnx"
  "$ortrun" "$work/train-$hide.onnx" --feeds="$work/x.npy" \
    --params="$work/w.npy" --dump="$work/ort-$hide.npz" >/dev/null
  "$remat" compare "$work/ort-$hide.npz" "$work/remat.npz" --tolerance=1e-5
done
echo ok
