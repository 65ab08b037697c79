//===- Bindings.cpp - The Python module remat._remat ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The C++ half of the Python package `remat`: one call that plans a
/// training graph another framework differentiated (PyTorch's joint graph,
/// translated to text IR by remat/fx.py) and returns the rewritten,
/// scheduled graph as plain Python data, with remat's report. Errors become
/// `ValueError` with remat's one-line message.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Memory.h"
#include "remat/IO/Report.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Planner.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"
#include "remat/Training/Training.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <limits>
#include <optional>
#include <string>

namespace py = pybind11;

namespace remat {
namespace {

/// Raises a `ValueError` carrying `status`'s message.
[[noreturn]] void raise(const absl::Status &status) {
  throw py::value_error(std::string(status.message()));
}

/// One op of the planned graph, as `plan_training_graph` returns it.
py::dict describeOp(const Op &op) {
  py::list operands, results;
  for (const Value *operand : op.operands())
    operands.append(operand->name().str());
  for (const Value *result : op.results())
    results.append(result->name().str());
  py::dict entry;
  entry["kind"] = op.kind().str();
  const Attribute *node = op.findAttr("node");
  entry["node"] = node && node->is(AttrKind::String) ? node->asString().str()
                                                     : std::string();
  entry["operands"] = operands;
  entry["results"] = results;
  return entry;
}

/// `object` as a str; a `ValueError` naming `what` otherwise. (Typed
/// parameters would make pybind11 raise a `TypeError` that quotes every
/// argument, the whole graph text among them.)
std::string stringArgument(const py::handle &object, const char *what) {
  if (!py::isinstance<py::str>(object))
    raise(invalidArgument("{} must be a str, got {}", what,
                          py::repr(object).cast<std::string>()));
  return object.cast<std::string>();
}

/// Plans `text`, a training graph whose first `forwardOps` ops are its
/// forward pass, with `planner` within `budget`; its ops' `cost` attributes
/// are in `costUnit` (`flops` or `ns`).
py::dict planTrainingGraph(const py::object &textObject,
                           const py::object &forwardOpsObject,
                           const py::object &plannerObject,
                           const py::object &budgetObject,
                           const py::object &costUnitObject) {
  std::string text = stringArgument(textObject, "text");
  // An int, not a bool (a subclass of int), that fits the op ids.
  bool isCount = py::isinstance<py::int_>(forwardOpsObject) &&
                 !py::isinstance<py::bool_>(forwardOpsObject);
  if (!isCount || forwardOpsObject < py::int_(1) ||
      forwardOpsObject >
          py::int_(std::numeric_limits<unsigned>::max()))
    raise(invalidArgument(
        "forward_ops must be an int from 1 to {} (the number of forward "
        "ops, declarations included), got {}",
        std::numeric_limits<unsigned>::max(),
        py::repr(forwardOpsObject).cast<std::string>()));
  unsigned forwardOps = forwardOpsObject.cast<unsigned>();
  std::string planner = stringArgument(plannerObject, "planner");
  std::optional<std::string> budget;
  if (!budgetObject.is_none()) {
    if (!py::isinstance<py::str>(budgetObject))
      raise(invalidArgument("budget must be a str or None, got {}",
                            py::repr(budgetObject).cast<std::string>()));
    budget = budgetObject.cast<std::string>();
  }
  std::string costUnit = py::isinstance<py::str>(costUnitObject)
                             ? costUnitObject.cast<std::string>()
                             : py::repr(costUnitObject).cast<std::string>();
  if (costUnit != "flops" && costUnit != "ns")
    raise(invalidArgument("cost_unit must be 'flops' or 'ns', got '{}'",
                          costUnit));
  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, "<joint>");
  if (!graph.ok())
    raise(graph.status());
  TrainingOptions options;
  options.costAttributesAreNanoseconds = costUnit == "ns";
  options.planner = planner;
  options.budget = std::move(budget);
  absl::StatusOr<TrainingReport> report;
  {
    py::gil_scoped_release release;
    report = buildJointTrainingGraph(**graph, forwardOps, options);
  }
  if (!report.ok())
    raise(report.status());
  py::list ops;
  for (const Op &op : (*graph)->ops())
    ops.append(describeOp(op));
  py::list outputs;
  for (const Value *output : (*graph)->outputs())
    outputs.append(output->name().str());
  std::string json;
  llvm::raw_string_ostream os(json);
  printReportJson(*report, os);
  os.flush();
  py::dict result;
  result["ops"] = ops;
  result["outputs"] = outputs;
  result["report"] = json;
  result["text"] = printGraph(**graph);
  result["timeline"] = simulateMemory(**graph).timeline;
  // One line each, as `remat opt` prints them after `remat: warning: `.
  result["warnings"] = report->warnings;
  py::list timings;
  for (const ReportSearchTime &row : report->searchTimings)
    timings.append(py::dict(py::arg("planner") = row.planner,
                            py::arg("seconds") = row.seconds,
                            py::arg("builds") = row.builds,
                            py::arg("unbuilt") = row.unbuilt));
  result["search_timings"] = timings;
  return result;
}

/// Raises a `ValueError` unless `text` spells a planner, as `--planner`
/// reads it (`auto` included).
void checkPlanner(const std::string &text) {
  if (text == kAutoPlanner)
    return;
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      PlannerRegistry::global().create(text);
  if (!planner.ok())
    raise(planner.status());
}

/// Raises a `ValueError` unless `text` is a budget `--budget` reads: a
/// byte size or a percentage, whose baseline is known only later.
void checkBudget(const std::string &text) {
  absl::StatusOr<int64_t> bytes = parseByteSize(text, /*baseline=*/1);
  if (!bytes.ok())
    raise(bytes.status());
}

} // namespace
} // namespace remat

PYBIND11_MODULE(_remat, module) {
  module.doc() = "remat's planners over training graphs in text IR";
  module.def("plan_training_graph", &remat::planTrainingGraph,
             py::arg("text"), py::arg("forward_ops"),
             py::arg("planner") = "auto", py::arg("budget") = py::none(),
             py::arg("cost_unit") = "flops",
             R"(Plans a training graph (text IR) whose first `forward_ops` ops
are its forward pass; its ops' `cost` attributes count `cost_unit` ('flops'
or 'ns'), and so do the report's costs. Returns a dict: `ops` (the planned
graph in schedule order: kind, node, operands, results), `outputs`, `report`
(JSON), `text`, `timeline` (the planned graph's live bytes after each op, as
remat simulates them), `warnings` (one line each) and `search_timings` (the budget
search's steps, as `remat opt --timing` prints them). Raises ValueError with
remat's one-line message on bad input.)");
  module.def("check_planner", &remat::checkPlanner, py::arg("planner"),
             "Raises ValueError unless `planner` names a planner "
             "(`remat opt --planner`), 'auto' included.");
  module.def("check_budget", &remat::checkBudget, py::arg("budget"),
             "Raises ValueError unless `budget` is a byte size or a "
             "percentage as `remat opt --budget` reads it.");
}
