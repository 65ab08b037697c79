#!/bin/sh
# Planning with ONNX Runtime's measured op times (docs/export.md, "Costs
# measured by ONNX Runtime"): profiles the plain export of the zoo model
# MODEL-ARGS (`ort-run --profile`), plans it at BUDGET with `remat opt
# --costs`, checks that the report counts nanoseconds and that the profile
# timed at least 90% of the ops with FLOPs, then runs the costed plan through
# check-export.sh (ONNX Runtime's loss and gradients against remat's
# executor).
# Usage: check-costs.sh REMAT ORT_RUN PYTHON WORK BUDGET MODEL-ARGS...
set -eu
remat=$1 ortrun=$2 python=$3 work=$4 budget=$5
shift 5
mkdir -p "$work"
export MALLOC_MMAP_THRESHOLD_=65536
"$remat" zoo "$@" -o "$work/forward.remat"
"$remat" opt "$work/forward.remat" -o "$work/plain.remat"
"$remat" export "$work/plain.remat" -o "$work/plain.onnx"
"$remat" run "$work/plain.remat" --dump-feeds="$work/feeds.npz" >/dev/null
"$ortrun" "$work/plain.onnx" --feeds="$work/feeds.npz" --steps=2 \
  --profile="$work/costs.json" >/dev/null
"$remat" opt "$work/forward.remat" --budget="$budget" \
  --costs="$work/costs.json" --report="$work/report.json" -o /dev/null \
  2>"$work/warnings.txt"
"$python" -c '
import json, sys
report = json.load(open(sys.argv[1]))
costs, unit = report.get("measured_costs"), report.get("cost_unit")
def fail(why):
    sys.exit(f"check-costs: {why}")
if unit != "ns" or not costs:
    fail(f"the report counts {unit}, not measured nanoseconds")
measured, estimated = costs["ops_measured"], costs["ops_estimated"]
if measured < 9 * estimated:
    fail(f"the profile timed {measured} ops and missed {estimated}")
if not (report["flops_forward"] > 0 and report["flops_backward"] > 0):
    fail("the measured forward or backward time is 0")
strategy, overhead = report["strategy"], report["overhead"]
print(f"{measured} ops timed, {estimated} by FLOPs; "
      f"plan {strategy}, overhead {overhead:.3f} of the time")
' "$work/report.json"
sh "$(dirname "$0")/check-export.sh" "$remat" "$ortrun" \
  "$work/plan" 1e-5 "--budget=$budget --costs=$work/costs.json" \
  --file "$work/forward.remat"
