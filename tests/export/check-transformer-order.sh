#!/bin/sh
# The order survives on a transformer whose logits are its largest tensor
# (2 layers, d 128, sequence 256, batch 2, vocabulary 8000: 16.4 MB of
# logits), plain autodiff exported without hidden buffers and run in ONNX
# Runtime. The nodes of an op with a forced operand are pinned to the zero
# that operand waits for, also those that read the operand: no new
# dependency, but ONNX Runtime's depth-first order follows the extra edges.
# Pinned to the operand instead (a regression of 2026-11-28), the export
# held one more logits-sized tensor at its peak, as with no pins at all
# (GPT-2: 205 MB; docs/benchmarks.md). The pins must lower plain autodiff's
# peak by at least half the logits' bytes (16.2 MB measured). Prints the
# figures.
# Usage: check-transformer-order.sh REMAT ORT_RUN WORK
set -eu
remat=$1 ortrun=$2 work=$3
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
batch=2 seq=256 vocab=8000
logits=$((batch * seq * vocab * 4))
field() { sed -n "s/^ *\"$1\": \\([0-9]*\\),*\$/\\1/p" "$2"; }
"$remat" zoo transformer --layers=2 --d-model=128 --heads=4 --seq=$seq \
  --batch=$batch --vocab=$vocab -o "$work/model.remat"
"$remat" opt "$work/model.remat" -o "$work/plain.remat"
"$remat" export "$work/plain.remat" --hide-idle-buffers=0 -o "$work/pinned.onnx"
"$remat" export "$work/plain.remat" --hide-idle-buffers=0 \
  --pinned-node-bytes=1000000000000 -o "$work/unpinned.onnx"
peak() {
  "$ortrun" "$work/$1.onnx" --label-range=labels=$vocab,tokens=$vocab \
    --json >"$work/$1.json"
  field run_peak_bytes "$work/$1.json"
}
pinned=$(peak pinned) unpinned=$(peak unpinned)
echo "ONNX Runtime measures plain autodiff at $pinned bytes pinned," \
  "$unpinned unpinned; the logits are $logits bytes"
[ $((unpinned - pinned)) -ge $((logits / 2)) ] || { echo "FAIL: the pins no longer keep the logits' gradient in its place"; exit 1; }
echo ok
