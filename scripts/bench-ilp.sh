#!/bin/sh
# The figures of docs/benchmarks.md "ILP: how far it proves": for each zoo model
# spec and budget share, the `ilp` planner with and without its warm start,
# one run at a time, CBC single-threaded. Prints a Markdown table: forward ops,
# the MILP's nodes, the warm start's recompute cost (FLOPs), the outcome
# (optimal, the proven gap at the time limit, or no plan), the plan's recompute
# FLOPs and overhead, and the wall time of the whole `remat opt`.
# Usage: bench-ilp.sh REMAT WORKDIR SECONDS BUDGETS MODEL-SPEC ...
# e.g. bench-ilp.sh build/bin/remat /tmp/ilp 60 "50 30" "mlp --layers=4"
set -eu
remat=$1 work=$2 limit=$3 budgets=$4
shift 4
mkdir -p "$work"
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }
echo "| model | ops | nodes | budget | start | warm start | outcome | recompute | overhead | seconds |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for spec in "$@"; do
  name=$(echo "$spec" | tr ' =' '__' | tr -d -- '-')
  # shellcheck disable=SC2086 # the spec is words on purpose
  "$remat" zoo $spec -o "$work/$name.remat"
  ops=$("$remat" stats "$work/$name.remat" | sed -n 's/^ops *\([0-9]*\).*/\1/p')
  for budget in $budgets; do
    for start in warm cold; do
      planner="ilp=$limit"
      [ "$start" = cold ] && planner="$planner,cold"
      r="$work/$name.$budget.$start.json" err="$work/$name.$budget.$start.err"
      begin=$(date +%s.%N)
      if ! "$remat" opt "$work/$name.remat" --budget="$budget%" \
          --planner="$planner" --progress --report="$r" -o /dev/null 2>"$err"; then
        echo "| $spec | $ops | - | $budget% | $start | - | failed: $(tail -1 "$err") | - | - | - |"
        continue
      fi
      end=$(date +%s.%N)
      nodes=$(sed -n 's/^remat: ilp: \([0-9]*\) nodes.*/\1/p' "$err")
      warm=$(sed -n 's/^remat: ilp: warm start from \(.*\), recompute cost \(.*\)/\2 (\1)/p' "$err")
      gap=$(field optimality_gap "$r")
      cost="$(field flops_recompute "$r") | $(printf '%.3f' "$(field overhead "$r")")"
      if [ "$gap" = null ]; then
        cost="- | -"
        outcome="no plan"
        grep -q "no schedule fits" "$err" && outcome="infeasible"
      elif [ "$gap" = 0 ]; then
        outcome="optimal"
      else
        outcome="gap $(printf '%.1f' "$(echo "100 * $gap" | bc -l)")%"
      fi
      echo "| $spec | $ops | $nodes | $budget% | $start | ${warm:--} | $outcome |" \
        "$cost | $(printf '%.1f' "$(echo "$end - $begin" | bc -l)") |"
    done
  done
done
