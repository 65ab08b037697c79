#!/bin/sh
# What docs/export.md says of labels, which the exported graph does not
# check: remat's executor rejects a label of -1, while ONNX Runtime reads it
# as the last class and returns the loss and gradients of that label; a
# label of 3 (the number of classes) fails in ONNX Runtime's GatherElements.
# Should ONNX Runtime start checking (or stop failing), the docs change too.
# Usage: check-unchecked-labels.sh REMAT ORT_RUN PYTHON WORK
set -eu
remat=$1 ortrun=$2 python=$3 work=$4
mkdir -p "$work/minus" "$work/last"
export MALLOC_MMAP_THRESHOLD_=65536
cat > "$work/labels.remat" <<'EOF'
graph @labels {
  input %x : f32[2,4]
  input %labels : i32[2]
  param %w : f32[4,3]
  %logits = matmul(%x, %w) : f32[2,3]
  %loss = softmax_cross_entropy(%logits, %labels) : f32[]
  output %loss
}
EOF
# labels.npy in DIR with the given values, and the same step's other feeds.
labels() {
  "$python" -c '
import sys, numpy as np
np.save(sys.argv[1], np.array([int(v) for v in sys.argv[2:]], np.int32))' "$@"
}
labels "$work/minus/labels.npy" -1 1
labels "$work/last/labels.npy" 2 1
"$remat" opt "$work/labels.remat" -o "$work/train.remat"
"$remat" export "$work/train.remat" -o "$work/train.onnx"
if "$remat" run "$work/train.remat" --feeds="$work/minus/labels.npy" \
    > /dev/null 2> "$work/minus.err"; then
  echo "remat's executor took the label -1"; exit 1
fi
grep -q 'label -1 is out of range \[0, 3)' "$work/minus.err"
"$remat" run "$work/train.remat" --feeds="$work/last/labels.npy" \
  --dump="$work/remat-last.npz" --dump-feeds="$work/feeds-last.npz" > /dev/null
# The same feeds with the labels -1 and 3 in place of 2.
for label in -1 3; do
  "$python" -c '
import sys, numpy as np
feeds = dict(np.load(sys.argv[1]))
feeds["labels"] = np.array([int(sys.argv[3]), 1], np.int32)
np.savez(sys.argv[2], **feeds)' "$work/feeds-last.npz" "$work/feeds$label.npz" $label
done
"$ortrun" "$work/train.onnx" --feeds="$work/feeds-1.npz" \
  --dump="$work/ort-minus.npz" > /dev/null
"$remat" compare "$work/ort-minus.npz" "$work/remat-last.npz" --tolerance=1e-5
if "$ortrun" "$work/train.onnx" --feeds="$work/feeds3.npz" \
    --dump="$work/ort-over.npz" > /dev/null 2>&1; then
  echo "ONNX Runtime took the label 3 of 3 classes"; exit 1
fi
echo ok
