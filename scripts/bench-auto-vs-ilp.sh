#!/bin/sh
# The figures of docs/benchmarks.md "auto against the proven optimum": for
# small zoo models and budgets of 30..90% of plain autodiff's peak, the
# recompute FLOPs of the `ilp` planner where CBC proves its plan optimal
# (optimality_gap 0 within SECONDS), of `auto` and of `chain`, and auto's
# ratio to the optimum. Prints a Markdown table, then the geometric mean and
# the worst of auto's ratios. A zero optimum counts as ratio 1 when auto is
# zero too.
# Usage: bench-auto-vs-ilp.sh REMAT WORKDIR SECONDS [MODEL-SPEC ...]
set -eu
remat=$1 work=$2 seconds=$3
shift 3
mkdir -p "$work"
[ $# -gt 0 ] || set -- \
  "mlp --layers=2 --width=8 --batch=64 --input=4 --classes=2" \
  "mlp --layers=3 --width=8 --batch=64 --input=4 --classes=2"
. "$(dirname "$0")/bench-common.sh"
ratios="$work/ratios"
: > "$ratios"
echo "| model | ops | budget | ilp (gap) | auto | chain | auto / optimum |"
echo "|---|---|---|---|---|---|---|"
for spec in "$@"; do
  zoo_model "$remat" "$work" "$spec"
  for budget in 30 40 50 60 70 80 90; do
    row="| $spec | $ops | $budget% |"
    for planner in "ilp=$seconds" auto chain; do
      r="$work/$name.$budget.$(echo "$planner" | tr = _).json"
      "$remat" opt "$work/$name.remat" --budget="$budget%" \
        --strategy="$planner" --report="$r" -o /dev/null 2>/dev/null || true
    done
    ilp="$work/$name.$budget.ilp_$seconds.json"
    gap=$(field optimality_gap "$ilp")
    met=$(field budget_met "$ilp")
    optimum=
    if [ "$met" = true ] && [ "$gap" != null ] && \
        [ "$(echo "$gap <= 0.000001" | bc -l)" = 1 ]; then
      optimum=$(field flops_recompute "$ilp")
      row="$row $optimum (proven) |"
    elif [ "$met" = true ]; then
      row="$row $(field flops_recompute "$ilp") ($gap) |"
    else
      row="$row over |"
    fi
    for planner in auto chain; do
      r="$work/$name.$budget.$planner.json"
      if [ "$(field budget_met "$r")" = true ]; then
        row="$row $(field flops_recompute "$r") |"
      else
        row="$row over |"
      fi
    done
    ratio=-
    auto=$(field flops_recompute "$work/$name.$budget.auto.json")
    if [ -n "$optimum" ] && [ "$(field budget_met "$work/$name.$budget.auto.json")" = true ]; then
      if [ "$optimum" = 0 ]; then
        [ "$auto" = 0 ] && ratio=1.000
      else
        ratio=$(printf '%.3f' "$(echo "$auto / $optimum" | bc -l)")
      fi
      [ "$ratio" = - ] || echo "$ratio" >> "$ratios"
    fi
    echo "$row $ratio |"
  done
done
awk '{ s += log($1); n++; if ($1 > w) w = $1 }
     END { if (n) printf "\ngeometric mean of auto / optimum over %d budgets: %.3f, worst %.3f\n", n, exp(s / n), w }' "$ratios"
