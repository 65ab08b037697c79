#!/bin/sh
# The figures of docs/benchmarks.md "Plans at a budget": for every zoo model at
# its default size, or at the sizes given in MODELS, and budgets of 30..90% of
# plain autodiff's peak, the recompute overhead of each planner (`auto`,
# `chain`, and `sqrtn`, `memory` built as given and judged against the budget)
# with its final peak as a share of plain autodiff's, or `over` when that peak
# is over the budget. Prints a Markdown table.
# Usage: [PLANNERS="auto chain ..."] [BUDGETS="30 50 70"] bench-budgets.sh REMAT WORKDIR [MODEL-SPEC ...]
# A MODEL-SPEC is a zoo model with options, e.g. "mlp --layers=100". PLANNERS
# (default: auto chain sqrtn memory) and BUDGETS (default: 30 to 90 by 10)
# choose the columns and rows.
set -eu
remat=$1 work=$2
shift 2
mkdir -p "$work"
[ $# -gt 0 ] || set -- densenet lstm mlp mobilenet_v2 resnet transformer unet vgg
. "$(dirname "$0")/bench-common.sh"
planners=${PLANNERS:-auto chain sqrtn memory}
budgets=${BUDGETS:-30 40 50 60 70 80 90}
header="| model | ops | budget |" rule="|---|---|---|"
for planner in $planners; do
  header="$header $planner |" rule="$rule---|"
done
echo "$header auto plans, seconds |"
echo "$rule---|"
for spec in "$@"; do
  zoo_model "$remat" "$work" "$spec"
  auto="-"
  for budget in $budgets; do
    row="| $spec | $ops | $budget% |"
    for planner in $planners; do
      r="$work/$name.$budget.$planner.json"
      start=$(date +%s.%N)
      if ! "$remat" opt "$work/$name.remat" --budget="$budget%" \
          --strategy="$planner" --report="$r" -o /dev/null 2>/dev/null; then
        row="$row error |"
        continue
      fi
      end=$(date +%s.%N)
      share=$(printf '%.1f' "$(echo "100 * $(field peak_bytes_after "$r") / $(field peak_bytes_before "$r")" | bc -l)")
      if [ "$(field budget_met "$r")" = true ]; then
        row="$row $(printf '%.3f' "$(field overhead "$r")") ($share%) |"
      else
        row="$row over ($share%) |"
      fi
      [ "$planner" = auto ] && auto="$(field plans_tried "$r"), $(printf '%.1f' "$(echo "$end - $start" | bc -l)") s"
    done
    echo "$row $auto |"
  done
done
