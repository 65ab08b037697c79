#!/bin/sh
# Errors under mpirun: every rank fails alike, one line is printed (rank 0's),
# and mpirun exits non-zero. A graph without devices is named as such.
# Usage: run-errors.sh REMAT WORKDIR
set -eu
remat=$1 work=$2
mkdir -p "$work"
mpi="mpirun --oversubscribe -n 2"
[ "$(id -u)" -eq 0 ] && mpi="mpirun --allow-run-as-root --oversubscribe -n 2"
cat > "$work/plain.remat" <<'GRAPH'
graph @plain {
  input %x : f32[2,3]
  %y = relu(%x)
  %l = reduce_sum(%y) {axes = [0, 1]}
  output %l
}
GRAPH
expect_one_line() { # WHAT PATTERN COMMAND...
  what=$1 pattern=$2
  shift 2
  if "$@" >"$work/out.txt" 2>"$work/err.txt"; then
    echo "$what: exit 0, expected an error"; exit 1
  fi
  lines=$(grep -c ': error: ' "$work/err.txt" || true)
  if [ "$lines" -ne 1 ] || ! grep -q "$pattern" "$work/err.txt"; then
    echo "$what: expected one error line matching '$pattern', got:"
    cat "$work/err.txt"; exit 1
  fi
}
expect_one_line "a graph without devices" \
  "remat: error: the graph has no devices, so 2 ranks cannot share it" \
  $mpi "$remat" run "$work/plain.remat" --distributed
expect_one_line "a missing file" "missing.remat: error: cannot read file" \
  $mpi "$remat" run "$work/missing.remat" --distributed
echo "ok"
