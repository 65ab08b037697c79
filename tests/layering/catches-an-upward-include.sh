#!/usr/bin/env bash
# scripts/check-layers.py must fail, naming the file, line and layers, on a
# tree where the pass infrastructure includes the Training layer, and pass the
# same tree without that include.
set -euo pipefail
source=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/docs" "$tree/include/remat/Training" "$tree/src/Pass"
cp "$source/docs/architecture.md" "$tree/docs/"
echo '#pragma once' > "$tree/include/remat/Training/Training.h"
printf '// A pass manager.\n#include "remat/Training/Training.h"\n' \
  > "$tree/src/Pass/PassManager.cpp"
if out=$(python3 "$source/scripts/check-layers.py" "$tree" 2>&1); then
  echo "check-layers.py accepted an upward include:"; echo "$out"; exit 1
fi
expected='src/Pass/PassManager.cpp:2: error: Pass includes "remat/Training/Training.h" of the higher layer Training'
grep -qxF "$expected" <<<"$out" || { echo "unexpected output:"; echo "$out"; exit 1; }
sed -i '/#include/d' "$tree/src/Pass/PassManager.cpp"
python3 "$source/scripts/check-layers.py" "$tree"
