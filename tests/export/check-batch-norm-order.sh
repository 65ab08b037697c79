#!/bin/sh
# The order survives on a network of batch norms: ResNet-50 (batch 8, 224 px)
# exported plain and within 40% of its peak, run in ONNX Runtime at its
# default optimization level. Without the forced waits on the unread scale
# and bias gradients of each batch norm's gradient, ONNX Runtime ran them at
# the step's end, holding two activations per batch norm, and measured 23%
# of the plan's predicted drop (docs/export.md); the plan must now save at
# least 70% of it. Without the pins of each op's nodes
# (--pinned-node-bytes above every tensor) plain autodiff's recomputed-free
# graph still runs batch norms' `x - mean` and ReLU masks early: the pinned
# export must peak at least 40 MB lower. With the buffers ONNX Runtime's
# planner would hold idle at the peak hidden from it (the default; the
# pinned-only exports above have --hide-idle-buffers=0), the replay of that planner must end
# within 1% of its floor (the peak with no buffer held for reuse; what stays
# is too small to hide or made by Shape-like ops), and the plan must save
# at least 90% of the predicted drop (95% measured; 91% with 12 rounds).
# Prints the figures.
# Usage: check-batch-norm-order.sh REMAT ORT_RUN WORK
set -eu
remat=$1 ortrun=$2 work=$3
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
field() { sed -n "s/^ *\"$1\": \\([0-9]*\\),*\$/\\1/p" "$2"; }
"$remat" zoo resnet --depth=50 --batch=8 -o "$work/resnet.remat"
"$remat" opt "$work/resnet.remat" -o "$work/plain.remat"
"$remat" opt "$work/resnet.remat" --budget=40% -o "$work/plan.remat" --report="$work/report.json"
predicted=$(( $(field peak_bytes_before "$work/report.json") - $(field peak_bytes_after "$work/report.json") ))
"$remat" export "$work/plain.remat" --hide-idle-buffers=0 -o "$work/plain.onnx"
"$remat" export "$work/plain.remat" --hide-idle-buffers=0 --pinned-node-bytes=1000000000000 -o "$work/unpinned.onnx"
"$remat" export "$work/plan.remat" --hide-idle-buffers=0 -o "$work/plan.onnx"
"$remat" export "$work/plain.remat" -o "$work/plain-hidden.onnx"
"$remat" export "$work/plan.remat" --hide-idle-buffers=1000 -o "$work/plan-hidden.onnx" 2>"$work/replay.txt"
# "... replayed: peak N bytes, AFTER after hiding K tensors (FLOOR with ...)"
after=$(sed -n 's/.* bytes, \([0-9]*\) after hiding .* (\([0-9]*\) with no buffer.*/\1/p' "$work/replay.txt")
floor=$(sed -n 's/.* bytes, \([0-9]*\) after hiding .* (\([0-9]*\) with no buffer.*/\2/p' "$work/replay.txt")
"$remat" export "$work/plan.remat" -o "$work/plan-default.onnx"
cmp -s "$work/plan-default.onnx" "$work/plan-hidden.onnx" || { echo "FAIL: the default export does not hide as --hide-idle-buffers=1000 does"; exit 1; }
[ -n "$after" ] && [ -n "$floor" ] || { echo "FAIL: no replay line: $(cat "$work/replay.txt")"; exit 1; }
[ $((after * 100)) -le $((floor * 101)) ] || { echo "FAIL: the hiding stopped at $after bytes, over 1% above the floor $floor"; exit 1; }
peak() {
  "$ortrun" "$work/$1.onnx" --label-range=labels=1000 --json >"$work/$1.json"
  field run_peak_bytes "$work/$1.json"
}
plain=$(peak plain) unpinned=$(peak unpinned) plan=$(peak plan)
hplain=$(peak plain-hidden) hplan=$(peak plan-hidden)
echo "ONNX Runtime measures plain $plain (unpinned $unpinned), plan $plan:" \
  "saves $((plain - plan)) of the $predicted bytes remat predicts;" \
  "with idle buffers hidden plain $hplain, plan $hplan (saves $((hplain - hplan)))"
[ $((plain - plan)) -ge $((predicted * 7 / 10)) ] || { echo "FAIL: the plan saves too little"; exit 1; }
[ $((unpinned - plain)) -ge 40000000 ] || { echo "FAIL: the pins no longer lower the peak"; exit 1; }
[ $((hplain - hplan)) -ge $((predicted * 9 / 10)) ] || { echo "FAIL: with idle buffers hidden the plan saves too little"; exit 1; }
[ "$hplan" -lt "$plan" ] || { echo "FAIL: hiding idle buffers does not lower the plan's peak"; exit 1; }
echo ok
