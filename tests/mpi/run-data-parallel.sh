#!/bin/sh
# Runs the data-parallel graph of tests/lit/cli/Inputs/dp-mlp.remat over RANKS
# MPI ranks for every reduction mode, packed or not, with and without sqrtn
# recompute; each run must match the one-device gradients on the whole batch
# (1e-6 relative) and report every tower's copies bitwise identical, with each
# rank's measured peak equal to its simulated one.
# Usage: run-data-parallel.sh REMAT RANKS GRAPH WORKDIR
set -eu
remat=$1 ranks=$2 graph=$3 work=$4
mkdir -p "$work"
mpi="mpirun --oversubscribe -n $ranks"
[ "$(id -u)" -eq 0 ] && mpi="mpirun --allow-run-as-root --oversubscribe -n $ranks"
"$remat" opt "$graph" -p autodiff -o "$work/train.remat"
"$remat" opt "$graph" --strategy=sqrtn -o "$work/sqrtn.remat"
for base in train sqrtn; do
  for mode in allreduce hierarchical colocate naive; do
    for pack in 0 2; do
      out="$work/$base-$mode-$pack.remat"
      "$remat" opt "$work/$base.remat" \
        -p "data-parallel{towers=$ranks,reduce=$mode,pack=$pack}" -o "$out"
      $mpi "$remat" run "$out" --distributed --compare="$work/train.remat" \
        --tol=1e-6 --json -o "$out.json"
      grep -q '"replicas_differing": \[\]' "$out.json"
      # Rank 0 at the top, then every rank: "peak_bytes": N (measured) then
      # "simulated_peak_bytes": N.
      sed -n 's/.*"\(simulated_\)\{0,1\}peak_bytes": \([0-9]*\).*/\2/p' "$out.json" |
        awk -v want=$((2 * ranks + 2)) '
          NR % 2 == 1 { m = $1 }
          NR % 2 == 0 { if (m != $1) { print "measured peak " m " != simulated " $1; bad = 1 } }
          END { if (NR != want) { print NR " peaks, expected " want; bad = 1 } exit bad }'
      echo "ok $base $mode pack=$pack"
    done
  done
done
