#!/usr/bin/env bash
# scripts/check-include-cycles.py must pass src/Training as it is, and fail,
# naming the cycle and its includes, once the budget search includes the
# driver that includes it.
set -euo pipefail
source=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/src"
cp -r "$source/src/Training" "$tree/src/"
python3 "$source/scripts/check-include-cycles.py" "$tree" src/Training Training
# Budget.cpp, the driver, includes BudgetSearch.h; now the reverse too.
sed -i '0,/^#include "Training\/BudgetSearch.h"$/s//&\n#include "Training\/Budget.h"/' \
  "$tree/src/Training/BudgetSearch.cpp"
printf '#pragma once\n#include "Training/BudgetSearch.h"\n' > "$tree/src/Training/Budget.h"
if out=$(python3 "$source/scripts/check-include-cycles.py" "$tree" src/Training Training 2>&1); then
  echo "check-include-cycles.py accepted a cycle:"; echo "$out"; exit 1
fi
grep -qxF 'src/Training: error: include cycle: Budget -> BudgetSearch -> Budget' <<<"$out" ||
  { echo "unexpected output:"; echo "$out"; exit 1; }
grep -qF 'src/Training/BudgetSearch.cpp:' <<<"$out" ||
  { echo "the include is not located:"; echo "$out"; exit 1; }
echo "$out"
