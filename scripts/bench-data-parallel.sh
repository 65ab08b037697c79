#!/bin/sh
# The figures of docs/benchmarks.md "Data parallelism": for ResNet-18 on small
# images and a 2-layer transformer, each reduction mode with 2 MPI ranks,
# unpacked and packed in 4 buckets, then per-device peaks with and without
# sqrtn. Prints a Markdown table. Usage: bench-data-parallel.sh REMAT WORKDIR
set -eu
remat=$1 work=$2
mkdir -p "$work"
mpi="mpirun --oversubscribe -n 2"
[ "$(id -u)" -eq 0 ] && mpi="mpirun --allow-run-as-root --oversubscribe -n 2"
"$remat" zoo resnet --depth=18 --batch=8 --image=32 --classes=10 -o "$work/resnet18.remat"
"$remat" zoo transformer --layers=2 --d-model=128 --heads=4 --seq=64 --batch=8 \
  --vocab=1000 -o "$work/transformer2.remat"
# Field `name` of every device object of a JSON report, one per line.
field() { sed -n "s/.*\"$1\": \\([0-9.e-]*\\).*/\\1/p" "$2" | tail -n 2 | paste -sd/ -; }
echo "| model | strategy | reduce | pack | peak gpu:0/gpu:1 (measured = simulated) | bytes sent per device | transfers | collectives | step time rank 0/1 (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for model in resnet18 transformer2; do
  "$remat" opt "$work/$model.remat" -p autodiff -o "$work/$model.none.remat"
  "$remat" opt "$work/$model.remat" --strategy=sqrtn -o "$work/$model.sqrtn.remat"
  for strategy in none sqrtn; do
    for mode in allreduce hierarchical colocate naive; do
      for pack in 0 4; do
        [ "$strategy" = sqrtn ] && [ "$mode$pack" != allreduce0 ] && continue
        g="$work/$model.$strategy.$mode.$pack.remat"
        "$remat" opt "$work/$model.$strategy.remat" \
          -p "data-parallel{towers=2,reduce=$mode,pack=$pack}" -o "$g" 2>/dev/null
        $mpi "$remat" run "$g" --distributed --json -o "$g.json"
        echo "| $model | $strategy | $mode | $pack | $(field peak_bytes "$g.json") | $(field bytes_sent "$g.json") | $(field transfers_sent "$g.json") | $(field collective_calls "$g.json") | $(sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p' "$g.json" | tail -n 2 | xargs printf '%.3f/' | sed 's/\/$//') |"
      done
    done
  done
  "$remat" run "$work/$model.none.remat" --json -o "$work/$model.one.json"
  echo "| $model | none | one device | - | $(sed -n 's/.*"peak_bytes": \([0-9]*\).*/\1/p' "$work/$model.one.json" | head -1) | - | - | - | $(sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p' "$work/$model.one.json" | head -1 | xargs printf '%.3f') |"
done
