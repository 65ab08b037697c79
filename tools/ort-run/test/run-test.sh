#!/bin/sh
# ort-run's self-check: runs the checked-in PyTorch exports on ONNX Runtime.
#
#   sh tools/ort-run/test/run-test.sh ORT_RUN PYTHON [REMAT]
#
# ORT_RUN is the command (build/bin/ort-run), PYTHON the interpreter that runs
# it, with numpy and onnx (.venv/bin/python). With REMAT (build/bin/remat),
# `remat compare` also checks each export's output `y` against PyTorch's (the
# `y` of its .expected.npz; the rest of that file is remat's training
# outputs, which a forward run does not produce). Prints one line per check; exits 1 on the first
# failure.
set -eu

[ $# -ge 2 ] || { echo "usage: run-test.sh ORT_RUN PYTHON [REMAT]" >&2; exit 2; }
runner=$1 python=$2
remat=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/../../../tests/onnx/fixtures"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
# ORT's own profile files go to TMPDIR: the check below finds none left there.
export MALLOC_MMAP_THRESHOLD_=65536 TMPDIR="$work/tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# python -c SCRIPT ARGS: a check written in Python, whose `ok` must be true.
check_py() {
  script=$1; shift
  "$python" -c "import json, sys, numpy as np
$script
sys.exit(0 if ok else 1)" "$@" || fail "$script $*"
}

# A .npy file as np.save writes it: magic, version 1.0, a dict header padded to
# 64 bytes and ended by a newline, then the data.
check_npy() {
  check_py '
import re
b = open(sys.argv[1], "rb").read()
n = int.from_bytes(b[8:10], "little")
h = b[10:10 + n].decode("latin1")
ok = b[:8] == b"\x93NUMPY\x01\x00" and (10 + n) % 64 == 0 and re.fullmatch(
    r"\{.descr.: .[<|][fib][1248]., .fortran_order.: False, .shape.: \([0-9, ]*\), \} *\n", h)' "$1"
}

# Text mode, --dump to an archive and to a folder, on every export.
for model in "$fixtures"/*.onnx; do
  name=$(basename "$model" .onnx)
  "$runner" "$model" --feeds="$fixtures/$name.feeds.npz" --steps=2 \
    --dump="$work/$name.npz" >"$work/out.txt" 2>"$work/err.txt" || fail "$name: $(cat "$work/err.txt")"
  grep -q '^  y: float32\[' "$work/out.txt" || fail "$name: no output y in $(cat "$work/out.txt")"
  grep -q 'ms per step (median)' "$work/out.txt" || fail "$name: no time per step"
  unzip -p "$work/$name.npz" y.npy >"$work/y.npy" && check_npy "$work/y.npy"
  if [ -n "$remat" ]; then
    # `remat compare` checks every array of its second file, so ORT's dump
    # (which holds only y) goes second: the expected file is PyTorch's.
    "$remat" compare "$fixtures/$name.expected.npz" "$work/$name.npz" --tolerance=1e-4 >/dev/null ||
      fail "$name: ORT's y differs from PyTorch's"
  fi
  pass "$name"
done

model="$fixtures/tiny-resnet-eval-op17.onnx"
feeds="$fixtures/tiny-resnet-eval-op17.feeds.npz"

# --json has the documented fields; --dump=DIR writes DIR/y.npy.
"$runner" "$model" --feeds="$feeds" --json --dump="$work/dir" >"$work/out.json" 2>/dev/null
check_py '
r = json.load(open(sys.argv[1]))
fields = ["model", "steps", "seconds_per_step", "peak_rss_bytes", "baseline_rss_bytes",
          "run_peak_bytes"]
o = r["outputs"]
ok = all(f in r for f in fields) and r["steps"] == 1 and r["seconds_per_step"] > 0 and \
  r["peak_rss_bytes"] >= r["baseline_rss_bytes"] and \
  r["run_peak_bytes"] == r["peak_rss_bytes"] - r["baseline_rss_bytes"] and \
  len(o) == 1 and o[0]["name"] == "y" and o[0]["type"] == "float32" and \
  o[0]["shape"] == [2, 5] and o[0]["l2"] > 0' "$work/out.json"
check_npy "$work/dir/y.npy"
pass "--json and --dump=DIR"

# --arena=on: ONNX Runtime's own arena gives the same output, bit for bit;
# an archive of the same values has the same bytes.
"$runner" "$model" --feeds="$feeds" --arena=on --dump="$work/arena" >/dev/null 2>&1
cmp -s "$work/dir/y.npy" "$work/arena/y.npy" || fail "--arena=on changed the output"
"$runner" "$model" --feeds="$feeds" --dump="$work/again.npz" >/dev/null 2>&1
cmp -s "$work/tiny-resnet-eval-op17.npz" "$work/again.npz" || fail "two dumps differ"
pass "--arena=on, the same archive twice"

# --profile: one cost and first start per node, sorted by name, and no ORT
# profile file left.
"$runner" "$model" --feeds="$feeds" --steps=3 --profile="$work/costs.json" >/dev/null 2>&1
check_py '
nodes = json.load(open(sys.argv[1]))["nodes"]
names = [n["name"] for n in nodes]
ok = nodes and all(a < b for a, b in zip(names, names[1:])) and \
  all(isinstance(n["op_type"], str) and n["seconds"] >= 0 and 0 <= n["first_start"] < 60
      for n in nodes) and any(n["op_type"] == "Conv" for n in nodes)' "$work/costs.json"
[ -z "$(ls "$work/tmp")" ] || fail "--profile left $(ls "$work/tmp")"
pass "--profile"

# The hand-made model: int64, bool and float64 inputs, a filled one with
# --label-range, an initializer left unfed, output names holding '/'.
"$python" "$here/make_model.py" "$work"
"$runner" "$work/m.onnx" --label-range=labels=3 --dump="$work/m" --json >"$work/m.json"
for f in out_labels mask_not w_scaled; do check_npy "$work/m/$f.npy"; done
check_py '
labels = np.load(sys.argv[1] + "/out_labels.npy")
mask = np.load(sys.argv[1] + "/mask_not.npy")
w = np.load(sys.argv[1] + "/w_scaled.npy")
# The fill of the former Node.js runner (its hash, in JavaScript doubles).
w_js = [[0.56794317759122093, -0.32993616304688045], [0.71228515286302962, 0.30011281136837742]]
ok = labels.dtype == np.int64 and labels.tolist() == [0, 0, 2, 1, 1, 2] and \
  mask.dtype == bool and mask.all() and w.dtype == np.float64 and \
  np.abs(w - w_js).max() <= 1e-16' "$work/m"
pass "dtypes, --label-range, the fill's values, names with '/'"

# An array named after an initializer that is also a graph input (as
# `remat export --params` embeds the weights) overrides it, without a warning:
# w/scaled = w * w + bias moves by the new bias less the model's [0.5, -0.5].
"$python" -c 'import sys, numpy as np; np.save(sys.argv[1], np.array([2.0, -3.0]))' "$work/bias.npy"
"$runner" "$work/m.onnx" --label-range=labels=3 --feeds="$work/bias.npy" --dump="$work/fed" \
  >/dev/null 2>"$work/err.txt" || fail "feeding initializer bias: $(cat "$work/err.txt")"
[ ! -s "$work/err.txt" ] || fail "feeding initializer bias: $(cat "$work/err.txt")"
check_py '
w = np.load(sys.argv[1] + "/m/w_scaled.npy")
fed = np.load(sys.argv[1] + "/fed/w_scaled.npy")
ok = np.abs(fed - w - [1.5, -2.5]).max() <= 1e-14' "$work"
pass "an overridable initializer fed"

# The files and folders ort-run makes are 0666 and 0777 less the umask, and
# no temporary file is left.
(umask 027 && "$runner" "$model" --feeds="$feeds" --dump="$work/um/dir" --profile="$work/um.json" &&
  "$runner" "$model" --feeds="$feeds" --dump="$work/um.npz") >/dev/null 2>&1 || fail "umask 027 runs"
modes=$(stat -c %a "$work/um" "$work/um/dir" "$work/um/dir/y.npy" "$work/um.json" "$work/um.npz")
[ "$(echo $modes)" = "750 750 640 640 640" ] || fail "modes under umask 027: $(echo $modes)"
[ "$(ls -A "$work/um/dir")" = y.npy ] && [ -z "$(find "$work" -name '*.tmp')" ] ||
  fail "temporary files left: $(ls -A "$work/um/dir") $(find "$work" -name '*.tmp')"
pass "umask"

# Errors: one line on stderr, exit status 1.
expect_error() {
  pattern=$1; shift
  if "$runner" "$@" >/dev/null 2>"$work/err.txt"; then fail "no error from $*"; fi
  [ "$(wc -l <"$work/err.txt")" -eq 1 ] || fail "not one line: $(cat "$work/err.txt")"
  grep -q "^ort-run: error: .*$pattern" "$work/err.txt" || fail "expected '$pattern': $(cat "$work/err.txt")"
}
expect_error 'no such file' "$work/missing.onnx"
expect_error "unknown option '--bogus'" "$model" --bogus=1
expect_error "unknown option '--bogus'; usage" "$model" --bogus
expect_error "unknown option '-v'" "$model" -v
# Options: each at most once (a list is comma-separated), each name once.
expect_error "option '--steps' given twice" "$model" --feeds="$feeds" --steps=2 --steps=3
expect_error "option '--feeds' given twice" "$model" --feeds="$feeds" --feeds="$feeds"
expect_error "option '--json' given twice" "$model" --feeds="$feeds" --json --json
expect_error "option '--input-shape' names input 'x' twice (in 'x=2x3x16x16,x=4x3x16x16')" \
  "$model" --input-shape=x=2x3x16x16,x=4x3x16x16
# --input-shape and --label-range name inputs that nothing feeds.
expect_error "tiny-resnet-eval-op17.onnx: --input-shape names 'z', which is not an input of the model" \
  "$model" --feeds="$feeds" --input-shape=z=2
expect_error "tiny-resnet-eval-op17.onnx: --label-range names 'labels', which is not an input" \
  "$model" --feeds="$feeds" --label-range=labels=3
expect_error "input-shape names input 'x', which .*tiny-resnet-eval-op17.feeds.npz feeds" \
  "$model" --feeds="$feeds" --input-shape=x=4x3x16x16
expect_error "label-range names input 'w', which is float64, not an integer input" \
  "$work/m.onnx" --label-range=w=3
expect_error "--arena: expected on or off, got 'maybe'" "$model" --arena=maybe
expect_error 'expected an integer >= 1' "$model" --steps=0
expect_error "give its shape with --input-shape" "$model"
expect_error "has type float32\[10,4,32\], but input 'x' is float32\[N,3,16,16\]" \
  "$model" --feeds="$fixtures/tiny-transformer-eval-op17.feeds.npz"
# ONNX Runtime's own errors: one line, located, without ORT's log, status
# prefix, repeated model name or C++ source.
expect_error 'MANIFEST.json: Protobuf parsing failed' "$fixtures/MANIFEST.json"
expect_error "mistyped.onnx: Type Error: Type parameter (T) of Optype (Add) bound to different" \
  "$work/mistyped.onnx"
expect_error "add.onnx: node 'add' (Add): Attempting to broadcast an axis by a dimension other than 1. 2 by 3$" \
  "$work/add.onnx" --input-shape=a=2,b=3 --dump="$work/failed.npz"
[ ! -e "$work/failed.npz" ] || fail "a failed run dumped"
# --dump and --profile targets that cannot be written fail before the run and
# leave nothing written.
mkdir "$work/folder.npz"
: >"$work/plain"
cp "$model" "$work/copy.onnx"
cp "$feeds" "$work/copy.npz"
expect_error "--dump=$work/folder.npz: is a directory$" "$model" --feeds="$feeds" --dump="$work/folder.npz"
expect_error "--profile=$work/folder.npz: is a directory$" "$model" --feeds="$feeds" --profile="$work/folder.npz"
expect_error "--dump=$work/none/y.npz: $work/none: no such directory" \
  "$model" --feeds="$feeds" --dump="$work/none/y.npz"
expect_error "--profile=$work/none/c.json: $work/none: no such directory" \
  "$model" --feeds="$feeds" --profile="$work/none/c.json"
expect_error "--dump=$work/plain: is a file, not a directory" "$model" --feeds="$feeds" --dump="$work/plain"
expect_error "--dump=$work/plain/: is a file, not a directory" "$model" --feeds="$feeds" --dump="$work/plain/"
expect_error "--dump=$work/plain/d/e: $work/plain: not a directory" \
  "$model" --feeds="$feeds" --dump="$work/plain/d/e"
expect_error "--dump=$work/plain/y.npz: $work/plain: not a directory" \
  "$model" --feeds="$feeds" --dump="$work/plain/y.npz"
# /proc/self takes no new file, even from root.
expect_error "--dump=/proc/self/y.npz: " "$model" --feeds="$feeds" --dump=/proc/self/y.npz
expect_error "--dump=$work/copy.npz: would overwrite $work/copy.npz, which this run reads" \
  "$model" --feeds="$work/copy.npz" --dump="$work/copy.npz"
expect_error "--profile=$work/copy.onnx: would overwrite $work/copy.onnx, which this run reads" \
  "$work/copy.onnx" --feeds="$feeds" --profile="$work/copy.onnx"
expect_error "--dump and --profile both write $work/both.npz" \
  "$model" --feeds="$feeds" --dump="$work/both.npz" --profile="$work/both.npz"
expect_error "--dump: outputs 'sum/0' and 'sum_0' both become sum_0.npy" \
  "$work/add.onnx" --input-shape=a=2,b=2 --dump="$work/collide"
cmp -s "$model" "$work/copy.onnx" && cmp -s "$feeds" "$work/copy.npz" || fail "a file read was overwritten"
[ -z "$(ls -A "$work/folder.npz")" ] && [ ! -s "$work/plain" ] && [ ! -e "$work/none" ] && [ ! -e "$work/both.npz" ] &&
  [ ! -e "$work/collide" ] || fail "a failed --dump or --profile wrote files"
if [ "$(id -u)" != 0 ]; then  # root writes in a read-only folder
  mkdir "$work/read-only" && chmod 555 "$work/read-only"
  expect_error "--dump=$work/read-only/d: $work/read-only: not writable" \
    "$model" --feeds="$feeds" --dump="$work/read-only/d"
fi
expect_error "x=2x3x16x1 does not fit input 'x'" "$model" --input-shape=x=2x3x16x1
expect_error "arrays may not be given twice" "$model" --feeds="$feeds" --params="$feeds"
expect_error "--opt-level: expected one of default, disabled" "$model" --opt-level=most
expect_error "expected a .npy or .npz file" "$model" --feeds="$fixtures/MANIFEST.json"
head -c 100 "$work/dir/y.npy" >"$work/y.npy"
expect_error "y.npy: not a valid .npy file: EOF" "$model" --feeds="$work/y.npy"
cp "$fixtures/MANIFEST.json" "$work/bad.npz"
expect_error "bad.npz: not an .npz (zip) archive" "$model" --feeds="$work/bad.npz"
"$python" -c 'import sys, numpy as np; np.save(sys.argv[1], np.zeros((2, 2), ">f8"))' "$work/w.npy"
expect_error "unsupported dtype '>f8'" "$work/m.onnx" --feeds="$work/w.npy"
"$python" -c 'import sys, numpy as np; np.save(sys.argv[1], np.zeros((2, 2), "f4"))' "$work/w.npy"
expect_error "array 'w': has type float32\[2,2\], but input 'w' is float64\[2,2\]" \
  "$work/m.onnx" --feeds="$work/w.npy"
"$python" -c 'import sys, numpy as np; np.save(sys.argv[1], np.zeros(3, "f8"))' "$work/bias.npy"
expect_error "bias.npy: array 'bias': has type float64\[3\], but initializer 'bias' is float64\[2\]" \
  "$work/m.onnx" --feeds="$work/bias.npy"
pass "errors"

# Without MALLOC_MMAP_THRESHOLD_, a warning says why the peak may overstate.
env -u MALLOC_MMAP_THRESHOLD_ "$runner" "$model" --feeds="$feeds" 2>&1 >/dev/null |
  grep -q 'warning: MALLOC_MMAP_THRESHOLD_ is not set' || fail "no MALLOC_MMAP_THRESHOLD_ warning"
pass "MALLOC_MMAP_THRESHOLD_ warning"
