#!/bin/sh
# Checks whether `auto` is monotone in the budget: raising the budget never
# costs more recompute. For each forward graph, builds `auto` at budgets from
# FROM to TO per mille of plain autodiff's peak, in steps of STEP, and prints
# each budget whose plan recomputes more than a plan that met a smaller
# budget (and so fits this one too). Ends with the count per graph.
# Usage: check-auto-monotone.sh REMAT WORKDIR FROM TO STEP FILE...
# e.g. check-auto-monotone.sh build/bin/remat /tmp/mono 300 1000 10 /tmp/unet.remat
set -eu
remat=$1 work=$2 from=$3 to=$4 step=$5
shift 5
mkdir -p "$work"
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }
for file in "$@"; do
  r="$work/auto.json"
  "$remat" opt "$file" --budget=100% --report="$r" -o /dev/null 2>/dev/null
  plain=$(field peak_bytes_before "$r")
  best="" bestat="" budgets=0 worse=0
  permille=$from
  while [ "$permille" -le "$to" ]; do
    budget=$((plain * permille / 1000))
    "$remat" opt "$file" --budget="$budget" --report="$r" -o /dev/null 2>/dev/null
    met=$(field budget_met "$r") flops=$(field flops_recompute "$r")
    strategy=$(field strategy "$r")
    budgets=$((budgets + 1))
    if [ "$met" = true ]; then
      if [ -n "$best" ] && [ "$flops" -gt "$best" ]; then
        echo "$file: budget $budget ($permille per mille): $flops FLOPs ($strategy), where budget $bestat met it with $best"
        worse=$((worse + 1))
      elif [ -z "$best" ] || [ "$flops" -lt "$best" ]; then
        best=$flops bestat=$budget
      fi
    fi
    permille=$((permille + step))
  done
  echo "$file: $worse of $budgets budgets recompute more than a smaller budget's plan"
done
