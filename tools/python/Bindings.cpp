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

#include "remat/IO/Report.h"
#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Training/Training.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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

/// Plans `text`, a training graph whose first `forwardOps` ops are its
/// forward pass, with `planner` within `budget`; its ops' `cost` attributes
/// are in `costUnit` (`flops` or `ns`).
py::dict planTrainingGraph(const std::string &text, unsigned forwardOps,
                           const std::string &planner,
                           std::optional<std::string> budget,
                           const std::string &costUnit) {
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
  options.forwardOpIdBound = forwardOps;
  absl::StatusOr<TrainingReport> report;
  {
    py::gil_scoped_release release;
    report = buildTrainingGraph(**graph, options);
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
  return result;
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
(JSON) and `text`. Raises ValueError with remat's message on bad input.)");
}
