#!/bin/sh
# The figures of docs/planning-chain.md "Planning time against ops": chains of
# `mlp --layers=L --width=8 --batch=B --input=8` from about 1k to 1M ops, at
# batch 512 (activations dominate: the budget is reachable) and 2 (parameters
# dominate: it is not), each planned at a budget by `auto` and by `chain`,
# with the budget search's own seconds (its `--timing` total: the one autodiff
# and every candidate), the builds and unbuilt plans it made, and the whole command's wall and CPU time
# (parsing the input and writing the output file included) and peak resident
# set. Prints a Markdown table.
# Usage: [LAYERS="200 800 ..."] [BATCHES="512 2"] [PLANNERS="auto chain"]
#        [BUDGET=20] bench-planning-time.sh REMAT WORKDIR
set -eu
remat=$1 work=$2
mkdir -p "$work"
. "$(dirname "$0")/bench-common.sh"
layers=${LAYERS:-200 800 3200 12800 51200 204000}
budget=${BUDGET:-20}
batches=${BATCHES:-512 2}
planners=${PLANNERS:-auto chain}
echo "| forward ops | batch | planner | search | builds | unbuilt | overhead | peak / plain | met | wall | CPU | RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for l in $layers; do
 for batch in $batches; do
  zoo_model "$remat" "$work" "mlp --layers=$l --width=8 --batch=$batch --input=8"
  for planner in $planners; do
    r="$work/$name.$planner.json" t="$work/$name.$planner.time"
    /usr/bin/time -f "%e %U %S %M" -o "$t" "$remat" opt "$work/$name.remat" \
      --budget="$budget%" --planner="$planner" --timing --report="$r" \
      -o "$work/$name.$planner.out.remat" 2>"$work/$name.$planner.err"
    rm -f "$work/$name.$planner.out.remat"
    total=$(sed -n 's/^  total *\([0-9.]*\) s  \([0-9]*\) builds\{0,1\}\(  \([0-9]*\) unbuilt\)\{0,1\}$/\1 \2 \4/p' \
      "$work/$name.$planner.err")
    set -- $total
    search=$1 builds=$2 unbuilt=${3:-0}
    set -- $(cat "$t")
    cpu=$(echo "$2 + $3" | bc -l)
    share=$(printf '%.1f%%' "$(echo "100 * $(field peak_bytes_after "$r") / $(field peak_bytes_before "$r")" | bc -l)")
    printf '| %s | %s | %s | %.2f s | %s | %s | %.4f | %s | %s | %.1f s | %.1f s | %.1f GiB |\n' \
      "$ops" "$batch" "$planner" "$search" "$builds" "$unbuilt" \
      "$(field overhead "$r")" "$share" "$(field budget_met "$r")" "$1" "$cpu" \
      "$(echo "$4 / 1048576" | bc -l)"
  done
 done
done
