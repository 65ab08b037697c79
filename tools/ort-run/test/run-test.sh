#!/bin/sh
# ort-run's self-check: runs the checked-in PyTorch exports on ONNX Runtime.
#
#   sh tools/ort-run/test/run-test.sh ORT_RUN_DIR [REMAT_COMPARE_ARRAYS]
#
# ORT_RUN_DIR is the folder whose node_modules holds onnxruntime-node
# (build/ort-run after scripts/install-deps.sh). With remat-compare-arrays, each
# export's output `y` is also compared with PyTorch's (the `y` of its
# .expected.npz; the rest of that file is remat's training outputs, which a
# forward run does not produce). Prints one line per check; exits 1 on the first
# failure.
set -eu

[ $# -ge 1 ] || { echo "usage: run-test.sh ORT_RUN_DIR [REMAT_COMPARE_ARRAYS]" >&2; exit 2; }
ORT_RUN_DIR=$(cd "$1" && pwd)
compare=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
runner="$here/../ort-run.js"
fixtures="$here/../../../tests/onnx/fixtures"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
# ORT's own profile files go to TMPDIR: the check below finds none left there.
export ORT_RUN_DIR MALLOC_MMAP_THRESHOLD_=65536 TMPDIR="$work/tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# node -e SCRIPT ARGS: a check written in JavaScript, exit status 1 on failure.
check_js() { script=$1; shift; node -e "$script" "$@" || fail "$script $*"; }

# A .npy file as np.save writes it: magic, version 1.0, a dict header padded to
# 64 bytes and ended by a newline, then the data.
check_npy() {
  check_js '
    const b = require("fs").readFileSync(process.argv[1]);
    const n = b.readUInt16LE(8), h = b.toString("latin1", 10, 10 + n);
    const ok = b.toString("latin1", 0, 8) === "\x93NUMPY\x01\x00" && (10 + n) % 64 === 0 &&
      /^\{.descr.: .[<|][fib][1248]., .fortran_order.: False, .shape.: \([0-9, ]*\), \} *\n$/.test(h);
    process.exit(ok ? 0 : 1);' "$1"
}

# Text mode, --dump to an archive and to a folder, on every export.
for model in "$fixtures"/*.onnx; do
  name=$(basename "$model" .onnx)
  node "$runner" "$model" --feeds="$fixtures/$name.feeds.npz" --steps=2 \
    --dump="$work/$name.npz" >"$work/out.txt" 2>"$work/err.txt" || fail "$name: $(cat "$work/err.txt")"
  grep -q '^  y: float32\[' "$work/out.txt" || fail "$name: no output y in $(cat "$work/out.txt")"
  grep -q 'ms per step (median)' "$work/out.txt" || fail "$name: no time per step"
  unzip -p "$work/$name.npz" y.npy >"$work/y.npy" && check_npy "$work/y.npy"
  if [ -n "$compare" ]; then
    # remat-compare-arrays checks every array of its second file: ORT's y.
    "$compare" "$fixtures/$name.expected.npz" "$work/$name.npz" 1e-4 >/dev/null ||
      fail "$name: ORT's y differs from PyTorch's"
  fi
  pass "$name"
done

model="$fixtures/tiny-resnet-eval-op17.onnx"
feeds="$fixtures/tiny-resnet-eval-op17.feeds.npz"

# --json has the documented fields; --dump=DIR writes DIR/y.npy.
node "$runner" "$model" --feeds="$feeds" --json --dump="$work/dir" >"$work/out.json" 2>/dev/null
check_js '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const fields = ["model", "steps", "seconds_per_step", "peak_rss_bytes", "baseline_rss_bytes", "run_peak_bytes"];
  const ok = fields.every((f) => f in r) && r.steps === 1 && r.seconds_per_step > 0 &&
    r.peak_rss_bytes >= r.baseline_rss_bytes && r.run_peak_bytes === r.peak_rss_bytes - r.baseline_rss_bytes &&
    r.outputs.length === 1 && r.outputs[0].name === "y" && r.outputs[0].type === "float32" &&
    r.outputs[0].shape.join("x") === "2x5" && r.outputs[0].l2 > 0;
  process.exit(ok ? 0 : 1);' "$work/out.json"
check_npy "$work/dir/y.npy"
pass "--json and --dump=DIR"

# --arena=on: ONNX Runtime's own arena gives the same output, bit for bit.
node "$runner" "$model" --feeds="$feeds" --arena=on --dump="$work/arena" >/dev/null 2>&1
cmp -s "$work/dir/y.npy" "$work/arena/y.npy" || fail "--arena=on changed the output"
pass "--arena=on"

# --profile: one cost and first start per node, sorted by name, and no ORT
# profile file left.
node "$runner" "$model" --feeds="$feeds" --steps=3 --profile="$work/costs.json" >/dev/null 2>&1
check_js '
  const {nodes} = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const names = nodes.map((n) => n.name);
  const ok = nodes.length > 0 && names.every((n, i) => i === 0 || names[i - 1] < n) &&
    nodes.every((n) => typeof n.op_type === "string" && n.seconds >= 0 &&
                       n.first_start >= 0 && n.first_start < 60) &&
    nodes.some((n) => n.op_type === "Conv");
  process.exit(ok ? 0 : 1);' "$work/costs.json"
[ -z "$(ls "$work/tmp")" ] || fail "--profile left $(ls "$work/tmp")"
pass "--profile"

# The hand-made model: int64, bool and float64 inputs, a filled one with
# --label-range, an initializer left unfed, output names holding '/'.
node "$here/make-model.js" "$work/m.onnx"
node "$runner" "$work/m.onnx" --label-range=labels=3 --dump="$work/m" --json >"$work/m.json"
for f in out_labels mask_not w_scaled; do check_npy "$work/m/$f.npy"; done
check_js '
  const r = require(process.argv[1]);
  const labels = r.readArrays(process.argv[2] + "/out_labels.npy").get("out_labels").data;
  const mask = r.readArrays(process.argv[2] + "/mask_not.npy").get("mask_not").data;
  process.exit(labels.every((l) => l >= 0n && l < 3n) && new Set(labels).size > 1 &&
               mask.every((m) => m === 1) ? 0 : 1);' "$runner" "$work/m"
pass "dtypes, --label-range, names with '/'"

# Errors: one line on stderr, exit status 1.
expect_error() {
  pattern=$1; shift
  if node "$runner" "$@" >/dev/null 2>"$work/err.txt"; then fail "no error from $*"; fi
  [ "$(wc -l <"$work/err.txt")" -eq 1 ] || fail "not one line: $(cat "$work/err.txt")"
  grep -q "^ort-run: error: .*$pattern" "$work/err.txt" || fail "expected '$pattern': $(cat "$work/err.txt")"
}
expect_error 'no such file' "$work/missing.onnx"
expect_error "unknown option '--bogus'" "$model" --bogus=1
expect_error "--arena: expected on or off, got 'maybe'" "$model" --arena=maybe
expect_error 'expected an integer >= 1' "$model" --steps=0
expect_error "give its shape with --input-shape" "$model"
expect_error "has type float32\[10,4,32\], but input 'x' is float32\[N,3,16,16\]" \
  "$model" --feeds="$fixtures/tiny-transformer-eval-op17.feeds.npz"
expect_error 'Protobuf parsing failed' "$fixtures/MANIFEST.json"
expect_error "x=2x3x16x1 does not fit input 'x'" "$model" --input-shape=x=2x3x16x1
expect_error "arrays may not be given twice" "$model" --feeds="$feeds" --params="$feeds"
pass "errors"

# Without MALLOC_MMAP_THRESHOLD_, a warning says why the peak may overstate.
env -u MALLOC_MMAP_THRESHOLD_ node "$runner" "$model" --feeds="$feeds" 2>&1 >/dev/null |
  grep -q 'warning: MALLOC_MMAP_THRESHOLD_ is not set' || fail "no MALLOC_MMAP_THRESHOLD_ warning"
pass "MALLOC_MMAP_THRESHOLD_ warning"
