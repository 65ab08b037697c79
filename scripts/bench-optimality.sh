#!/bin/sh
# The table of docs/benchmarks.md "How far from the optimum": for each zoo
# model spec and budget share (of plain autodiff's peak, or the lowest peak
# `auto` finds where no plan reaches the share), `auto`'s plan with the proven lower bound on every
# plan's recompute (`--bound`), the `ilp` planner's plan (the MILP where it is
# built) and its windows' (`ilp=SECONDS,windows`); each one's gap to the
# bound. One run at a time, CBC single-threaded. Prints a Markdown table:
# the ILP's nodes, the budget, each plan's recompute FLOPs (its planner; "over"
# where the built graph exceeds the budget) and wall time, the bound (`solved` where the relaxation reached
# its optimum, else CBC's bound on it when stopped at SECONDS) and its time.
# Then a second table: each model's lowest peak `auto` finds, the proven peak
# floor, and the interval between them (`peak_over_floor`); and the floor of
# the plans in plain autodiff's order: the least budget, bisected, at which
# `--bound` does not prove that no such plan fits (8 probes of `limit`
# seconds at most, from the floor to the lowest peak found).
# Usage: bench-optimality.sh REMAT WORKDIR SECONDS BUDGETS MODEL-SPEC ...
# e.g. bench-optimality.sh build/bin/remat /tmp/opt 600 "70 50 30" \
#        "resnet --depth=50" "mobilenet_v2" "unet" "transformer" \
#        "resnet --preact --depth=164" "mlp --layers=1000 --width=64 --batch=8192"
set -eu
remat=$1 work=$2 limit=$3 budgets=$4
shift 4
mkdir -p "$work"
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }
seconds() { printf '%.1f' "$(echo "$2 - $1" | bc -l)"; }
# The plan's recompute over the bound, minus 1, as a percentage; none for a
# plan over the budget.
# The floor of the plans in plain autodiff's order between $2 (none fits)
# and $3 (a plan fits) for model $1: one past the highest budget `--bound`
# proves that no such plan fits, within 8 bisections.
orderedFloor() {
  low=$2 high=$3 probe=0
  while [ $probe -lt 8 ] && [ $((low + 1)) -lt "$high" ]; do
    mid=$(((low + high) / 2))
    if "$remat" opt "$1" --budget="${mid}B" --planner=none --bound="$limit" \
      --progress -o /dev/null 2>&1 | grep -q "^remat: bound.*no plan fits"; then
      low=$mid
    else
      high=$mid
    fi
    probe=$((probe + 1))
  done
  echo $((low + 1))
}
gap() {
  if [ "$2" = null ] || [ "$1" = over ]; then echo "-"
  elif [ "$(echo "$2 == 0" | bc -l)" = 1 ]; then
    if [ "$1" = 0 ]; then echo "0%"; else echo "-"; fi
  else printf '%.1f%%' "$(echo "100 * ($1 / $2 - 1)" | bc -l)"
  fi
}
lowest="$work/lowest.md"
echo "| model | lowest peak found (planner) | recompute | peak floor | above the floor | seconds | no plan in the order fits under |" >"$lowest"
echo "|---|---|---|---|---|---|---|" >>"$lowest"
echo "| model | nodes | budget | auto | auto s | ilp | ilp s | windows | windows s | bound | bound s | auto gap | ilp gap | windows gap |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in "$@"; do
  name=$(echo "$spec" | tr ' =' '__' | tr -d -- '-')
  # shellcheck disable=SC2086 # the spec is words on purpose
  "$remat" zoo $spec -o "$work/$name.remat"
  for share in $budgets; do
    budget="$share%"
    r="$work/$name.$share.auto.json" err="$work/$name.$share.auto.err"
    begin=$(date +%s.%N)
    "$remat" opt "$work/$name.remat" --budget="$budget" --bound="$limit" \
      --timing --progress --report="$r" -o /dev/null 2>"$err"
    end=$(date +%s.%N)
    if [ "$(field budget_met "$r")" != true ]; then
      # No plan fits: the lowest peak `auto` found is the budget.
      budget="$(field peak_bytes_after "$r")B" share="lowest"
      r="$work/$name.lowest.auto.json" err="$work/$name.lowest.auto.err"
      begin=$(date +%s.%N)
      "$remat" opt "$work/$name.remat" --budget="$budget" --bound="$limit" \
        --timing --progress --report="$r" -o /dev/null 2>"$err"
      end=$(date +%s.%N)
    fi
    boundTime=$(printf '%.1f' "$(sed -n 's/^  recompute lower bound *\([0-9.]*\) s.*/\1/p' "$err")")
    bound=$(field recompute_lower_bound "$r")
    auto=$(field flops_recompute "$r")
    [ "$(field budget_met "$r")" = true ] || auto="over"
    autoPlanner=$(field strategy "$r" | tr -d '"')
    autoTime=$(seconds "$begin" "$end")
    ri="$work/$name.$share.ilp.json" erri="$work/$name.$share.ilp.err"
    begin=$(date +%s.%N)
    "$remat" opt "$work/$name.remat" --budget="$budget" --planner="ilp=$limit" \
      --progress --report="$ri" -o /dev/null 2>"$erri" || true
    end=$(date +%s.%N)
    nodes=$(sed -n 's/^remat: ilp: \([0-9]*\) nodes.*/\1/p' "$erri")
    ilp=$(field flops_recompute "$ri")
    [ "$(field budget_met "$ri")" = true ] || ilp="over"
    ilpTime=$(seconds "$begin" "$end")
    rw="$work/$name.$share.windows.json"
    begin=$(date +%s.%N)
    "$remat" opt "$work/$name.remat" --budget="$budget" \
      --planner="ilp=$limit,windows" --report="$rw" -o /dev/null 2>/dev/null || true
    end=$(date +%s.%N)
    windows=$(field flops_recompute "$rw")
    [ "$(field budget_met "$rw")" = true ] || windows="over"
    solved="solved"
    grep -q "^remat: bound.*stopped at the limit" "$err" && solved="stopped"
    grep -q "^remat: bound.*no plan fits" "$err" && solved="no plan fits"
    grep -q "^remat: bound.*no bound" "$err" && solved="no bound in time"
    echo "| $spec | ${nodes:--} | $budget ($share) | $auto ($autoPlanner) |" \
      "$autoTime | $ilp | $ilpTime | $windows | $(seconds "$begin" "$end") |" \
      "$bound ($solved) | ${boundTime:--} | $(gap "$auto" "$bound") |" \
      "$(gap "$ilp" "$bound") | $(gap "$windows" "$bound") |"
  done
  r="$work/$name.1B.json"
  begin=$(date +%s.%N)
  "$remat" opt "$work/$name.remat" --budget=1B --report="$r" -o /dev/null \
    2>/dev/null
  end=$(date +%s.%N)
  floor=$(field peak_floor_bytes "$r") peak=$(field peak_bytes_after "$r")
  echo "| $spec | $peak ($(field strategy "$r" | tr -d '"')) |" \
    "$(field flops_recompute "$r") | $floor |" \
    "$(printf '%.1f%%' "$(echo "100 * $(field peak_over_floor "$r")" | bc -l)") |" \
    "$(seconds "$begin" "$end") |" \
    "$(orderedFloor "$work/$name.remat" "$((floor - 1))" "$peak") |" >>"$lowest"
done
echo
cat "$lowest"
