#!/bin/sh
# Planning with ONNX Runtime's measured op times (docs/export.md, "Costs
# measured by ONNX Runtime"): profiles the plain export of the zoo model
# MODEL-ARGS (`ort-run --profile`), plans it at BUDGET with `remat opt
# --costs`, checks that the report counts nanoseconds and that the profile
# timed at least 90% of the ops with FLOPs, then runs the costed plan through
# check-export.sh (ONNX Runtime's loss and gradients against remat's
# executor).
# Usage: check-costs.sh REMAT COMPARE ORT_RUN_JS WORK BUDGET MODEL-ARGS...
set -eu
remat=$1 compare=$2 ortrun=$3 work=$4 budget=$5
shift 5
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
"$remat" zoo "$@" -o "$work/forward.remat"
"$remat" opt "$work/forward.remat" -o "$work/plain.remat"
"$remat" export "$work/plain.remat" -o "$work/plain.onnx"
"$remat" run "$work/plain.remat" --dump-feeds="$work/feeds.npz" >/dev/null
node "$ortrun" "$work/plain.onnx" --feeds="$work/feeds.npz" --steps=2 \
  --profile="$work/costs.json" >/dev/null
"$remat" opt "$work/forward.remat" --budget="$budget" \
  --costs="$work/costs.json" --report="$work/report.json" -o /dev/null \
  2>"$work/warnings.txt"
node -e '
const report = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const costs = report.measured_costs;
const fail = (why) => { console.error(`check-costs: ${why}`); process.exit(1); };
if (report.cost_unit !== "ns" || !costs)
  fail(`the report counts ${report.cost_unit}, not measured nanoseconds`);
if (costs.ops_measured < 9 * costs.ops_estimated)
  fail(`the profile timed ${costs.ops_measured} ops and missed ${costs.ops_estimated}`);
if (!(report.flops_forward > 0 && report.flops_backward > 0))
  fail("the measured forward or backward time is 0");
console.log(`${costs.ops_measured} ops timed, ${costs.ops_estimated} by FLOPs; ` +
            `plan ${report.strategy}, overhead ${report.overhead.toFixed(3)} of the time`);
' "$work/report.json"
sh "$(dirname "$0")/check-export.sh" "$remat" "$compare" "$ortrun" \
  "$work/plan" 1e-5 "--budget=$budget --costs=$work/costs.json" \
  --file "$work/forward.remat"
