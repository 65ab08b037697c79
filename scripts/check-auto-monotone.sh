#!/bin/sh
# Checks whether `auto` is monotone in the budget. For each forward graph,
# builds `auto` at budgets from FROM to TO per mille of plain autodiff's peak,
# in steps of STEP, and for every two budgets a < b prints where
#  - both are met and b's plan recomputes more than a's (which fits b too);
#  - a is not met and b's plan peaks lower than a's (a's should be the
#    lowest peak reachable);
#  - neither is met and their plans differ in peak or recompute (a budget
#    out of reach gets the plan of lowest peak, whatever the budget);
#  - a is met and b is not.
# Ends with the count per graph. tests/property/BudgetMonotoneTest.cpp checks
# the same in CI at every 5% from 5% to 95%.
# Usage: check-auto-monotone.sh REMAT WORKDIR FROM TO STEP FILE...
# e.g. check-auto-monotone.sh build/bin/remat /tmp/mono 300 1000 10 /tmp/unet.remat
set -eu
remat=$1 work=$2 from=$3 to=$4 step=$5
shift 5
mkdir -p "$work"
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }
for file in "$@"; do
  r="$work/auto.json" points="$work/points.txt"
  "$remat" opt "$file" --budget=100% --report="$r" -o /dev/null 2>/dev/null
  plain=$(field peak_bytes_before "$r")
  : >"$points"
  permille=$from
  while [ "$permille" -le "$to" ]; do
    budget=$((plain * permille / 1000))
    "$remat" opt "$file" --budget="$budget" --report="$r" -o /dev/null 2>/dev/null
    echo "$permille $budget $(field budget_met "$r") $(field peak_bytes_after "$r")" \
      "$(field flops_recompute "$r") $(field strategy "$r")" >>"$points"
    permille=$((permille + step))
  done
  awk -v file="$file" '
    { pm[NR] = $1; budget[NR] = $2; met[NR] = $3; peak[NR] = $4;
      flops[NR] = $5; plan[NR] = $6 }
    function show(i) {
      return sprintf("%d per mille (%s B): %s, peak %s, %s FLOPs", pm[i],
                     budget[i], plan[i], peak[i], flops[i])
    }
    END {
      bad = 0
      for (b = 1; b <= NR; ++b) {
        why = ""
        for (a = 1; a < b && why == ""; ++a) {
          if (met[a] == "true" && met[b] == "true" && flops[b] + 0 > flops[a] + 0)
            why = "recomputes more than " show(a)
          else if (met[a] != "true" && peak[b] + 0 < peak[a] + 0)
            why = "peaks below the unmet " show(a)
          else if (met[a] != "true" && met[b] != "true" &&
                   (peak[a] != peak[b] || flops[a] != flops[b]))
            why = "is another plan than the unmet " show(a)
          else if (met[a] == "true" && met[b] != "true")
            why = "is not met, though " show(a) " was"
        }
        if (why != "") {
          print file ": " show(b) " " why
          ++bad
        }
      }
      print file ": " bad " of " NR " budgets break monotonicity"
    }' "$points"
done
