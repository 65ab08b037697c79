#!/bin/sh
# A budget per device: `remat opt --budget=90% --data-parallel=towers=RANKS`
# plans an activation-heavy f64 MLP (12 layers of [256, 32]) so that each
# device's simulated peak is within the budget; under mpirun every rank's
# measured peak must be too, with the gradients of the one-device plain graph
# (1e-6 relative) and every tower's copies bitwise identical.
# Usage: run-budget.sh REMAT RANKS WORKDIR
set -eu
remat=$1 ranks=$2 work=$3
mkdir -p "$work"
mpi="mpirun --oversubscribe -n $ranks"
[ "$(id -u)" -eq 0 ] && mpi="mpirun --allow-run-as-root --oversubscribe -n $ranks"
"$remat" zoo mlp --layers=12 --width=32 --input=16 --classes=4 --batch=256 |
  sed 's/f32/f64/g' > "$work/mlp.remat"
"$remat" opt "$work/mlp.remat" -o "$work/plain.remat"
"$remat" opt "$work/mlp.remat" --budget=90% --data-parallel="towers=$ranks" \
  --strict-budget --report="$work/report.json" -o "$work/dp.remat"
budget=$(sed -n 's/.*"budget_bytes": \([0-9]*\).*/\1/p' "$work/report.json")
grep -q '"budget_met": true' "$work/report.json"
$mpi "$remat" run "$work/dp.remat" --distributed --compare="$work/plain.remat" \
  --tol=1e-6 --json -o "$work/run.json"
grep -q '"replicas_differing": \[\]' "$work/run.json"
# Rank 0's peak at the top, then each rank's: measured, then simulated.
sed -n 's/.*"peak_bytes": \([0-9]*\).*/\1/p' "$work/run.json" |
  awk -v budget="$budget" -v want=$((ranks + 1)) '
    { if ($1 > budget) { print "measured peak " $1 " > budget " budget; bad = 1 } }
    END { if (NR != want) { print NR " peaks, expected " want; bad = 1 } exit bad }'
echo "ok: every rank within $budget bytes"
