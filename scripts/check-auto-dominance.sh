#!/bin/sh
# Checks issue 11's claim that `auto` is at or below every other planner at
# every budget: for each forward graph and budget share, builds `auto` and each
# planner, and prints a line for every planner that meets the budget where
# `auto` does not, or for fewer recompute FLOPs, or that gets a lower peak
# where neither meets it. Prints "no planner beats auto" when none does.
# Usage: check-auto-dominance.sh REMAT WORKDIR "BUDGETS" FILE...
# e.g. check-auto-dominance.sh build/bin/remat /tmp/dom "20 50 90" /tmp/resnet.remat
set -eu
remat=$1 work=$2 budgets=$3
shift 3
mkdir -p "$work"
planners="chain chain=late chain=40 sqrtn memory all speed regions xla xla=scheduled mincut ap-sqrtn ap-greedy ilp=60,relaxed"
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }
beaten=0
for file in "$@"; do
  for budget in $budgets; do
    "$remat" opt "$file" --budget="$budget%" --report="$work/auto.json" -o /dev/null 2>/dev/null
    met=$(field budget_met "$work/auto.json")
    flops=$(field flops_recompute "$work/auto.json")
    peak=$(field peak_bytes_after "$work/auto.json")
    for planner in $planners; do
      r="$work/planner.json"
      "$remat" opt "$file" --budget="$budget%" --planner="$planner" --report="$r" \
        -o /dev/null 2>/dev/null
      pmet=$(field budget_met "$r") pflops=$(field flops_recompute "$r")
      ppeak=$(field peak_bytes_after "$r")
      if [ "$pmet" = true ] && { [ "$met" != true ] || [ "$pflops" -lt "$flops" ]; }; then
        echo "$file $budget%: $planner meets the budget with $pflops FLOPs; auto: met $met, $flops"
        beaten=1
      elif [ "$pmet" != true ] && [ "$met" != true ] && [ "$ppeak" -lt "$peak" ]; then
        echo "$file $budget%: $planner peaks at $ppeak, auto at $peak (neither meets it)"
        beaten=1
      fi
    done
  done
done
[ "$beaten" = 0 ] && echo "no planner beats auto"
exit 0
