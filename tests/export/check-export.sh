#!/bin/sh
# One training graph through `remat export` and ONNX Runtime: builds the zoo
# model MODEL-ARGS, plans it with OPT-ARGS (`remat opt` options, e.g.
# "--budget=50%"), exports it, runs it in remat's executor and in ONNX Runtime
# (tools/ort-run) on the same inputs and params (`remat run --dump-feeds`),
# and compares the loss and every gradient, per tensor, to TOL relative (max
# abs diff over max abs value). `remat export` gets $EXPORT_ARGS when set.
# Usage: check-export.sh REMAT ORT_RUN WORK TOL "OPT-ARGS" MODEL-ARGS...
set -eu
remat=$1 ortrun=$2 work=$3 tol=$4 opt=$5
shift 5
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
if [ "$1" = "--file" ]; then
  cp "$2" "$work/forward.remat"
else
  "$remat" zoo "$@" -o "$work/forward.remat"
fi
# shellcheck disable=SC2086 # OPT-ARGS are several options
"$remat" opt "$work/forward.remat" $opt -o "$work/train.remat" 2>/dev/null
# shellcheck disable=SC2086 # EXPORT_ARGS are several options
"$remat" export "$work/train.remat" ${EXPORT_ARGS:-} -o "$work/train.onnx"
"$remat" run "$work/train.remat" --dump="$work/remat.npz" \
  --dump-feeds="$work/feeds.npz" >/dev/null
"$ortrun" "$work/train.onnx" --feeds="$work/feeds.npz" \
  --dump="$work/ort.npz" >/dev/null
"$remat" compare "$work/ort.npz" "$work/remat.npz" --tolerance="$tol"
# Passed: the dumps and the model are what a failure would be read from, and
# the largest cases hold hundreds of MB of them.
rm -f "$work/feeds.npz" "$work/remat.npz" "$work/ort.npz" "$work/train.onnx"
