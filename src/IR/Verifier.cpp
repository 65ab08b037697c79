//===- Verifier.cpp - Structural checks on a graph --------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Verifier.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace remat {
namespace {

/// Walks the schedule once, remembering which ops have run so far.
class GraphVerifier {
public:
  GraphVerifier(const Graph &graph, const VerifierOptions &options)
      : graph_(graph), options_(options), scheduled_(graph.opIdBound(), false),
        slotsReading_(graph.valueIdBound(), 0) {}

  absl::Status run() {
    for (const Op &op : graph_.ops()) {
      REMAT_RETURN_IF_ERROR(verifyEdges(op));
      REMAT_RETURN_IF_ERROR(verifyTypes(op));
      REMAT_RETURN_IF_ERROR(countBytes(op));
      scheduled_[op.id()] = true;
    }
    for (const Op &op : graph_.ops())
      REMAT_RETURN_IF_ERROR(verifyResults(op));
    REMAT_RETURN_IF_ERROR(verifyRoots("output", graph_.outputs()));
    for (const Collection &c : graph_.collections())
      REMAT_RETURN_IF_ERROR(
          verifyRoots(fmt::format("collection '{}'", c.name), c.values));
    return absl::OkStatus();
  }

  /// Only the byte total (`verifyByteTotal`).
  absl::Status runByteTotal() {
    for (const Op &op : graph_.ops())
      REMAT_RETURN_IF_ERROR(countBytes(op));
    return absl::OkStatus();
  }

private:
  bool isScheduledHere(const Op *op) const {
    return op && op->graph() == &graph_ && op->id() < scheduled_.size() &&
           scheduled_[op->id()];
  }

  /// Operands and control dependencies must be defined earlier in the schedule.
  absl::Status verifyEdges(const Op &op) {
    if (op.graph() != &graph_)
      return opError(op, "op belongs to another graph");
    for (unsigned i = 0, e = op.numOperands(); i < e; ++i) {
      const Value *operand = op.operand(i);
      if (!isScheduledHere(operand->producer()))
        return opError(op, fmt::format("operand {} (%{}) is not defined before "
                                       "its use in the schedule",
                                       i, operand->name().str()));
      ++slotsReading_[operand->id()];
    }
    for (const Op *dep : op.controlDeps())
      if (!isScheduledHere(dep))
        return opError(op, fmt::format("control dependency '{}' does not run "
                                       "before it in the schedule",
                                       dep->describe()));
    return absl::OkStatus();
  }

  /// Result types must be what shape inference gives (declared for leaves).
  absl::Status verifyTypes(const Op &op) {
    if (op.hasFlag(OpFlagLeaf)) {
      if (op.numOperands() != 0 || op.numResults() != 1 || !op.attrs().empty())
        return opError(op, "a declaration has one result, no operands and no "
                           "attributes");
      if (!op.result()->type().checkedByteSize())
        return opError(op, fmt::format("type {} is negative or overflows int64 "
                                       "bytes",
                                       op.result()->type().str()));
      return absl::OkStatus();
    }
    if (!options_.checkInferredTypes)
      return absl::OkStatus();
    llvm::SmallVector<Type, 4> operandTypes = op.operandTypes();
    absl::StatusOr<llvm::SmallVector<Type, 1>> inferred =
        inferResultTypes(op.def(), operandTypes, op.attrs());
    if (!inferred.ok())
      return opError(op, std::string(inferred.status().message()));
    if (inferred->size() != op.numResults())
      return opError(op, fmt::format("has {} results, shape inference gives {}",
                                     op.numResults(), inferred->size()));
    for (unsigned i = 0, e = op.numResults(); i < e; ++i)
      if (op.result(i)->type() != (*inferred)[i])
        return opError(op, fmt::format("result {} has type {}, shape inference "
                                       "gives {}",
                                       i, op.result(i)->type().str(),
                                       (*inferred)[i].str()));
    return absl::OkStatus();
  }

  /// The bytes of all values together must fit in int64, views counted as if
  /// they owned storage: every byte total the memory model takes (a peak, a
  /// breakdown, a plan's kept bytes, the executor's live bytes) is a sum over
  /// a subset of them, so none of those sums can wrap.
  absl::Status countBytes(const Op &op) {
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      std::optional<int64_t> bytes = result->type().checkedByteSize();
      if (!bytes ||
          __builtin_add_overflow(totalBytes_, *bytes, &totalBytes_)) {
        absl::Status located = opError(
            op, fmt::format("the graph's values need more than 2^63-1 bytes "
                            "together (at %{} : {})",
                            result->name().str(), result->type().str()));
        return absl::OutOfRangeError(located.message());
      }
    }
    return absl::OkStatus();
  }

  /// Names are unique and use lists match the operand slots that read a value.
  absl::Status verifyResults(const Op &op) {
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      if (!graph_.holdsName(result))
        return opError(op, fmt::format("result name %{} is not unique",
                                       result->name().str()));
      for (const Use &use : result->uses())
        if (use.user->graph() != &graph_ ||
            use.operandIndex >= use.user->numOperands() ||
            use.user->operand(use.operandIndex) != result)
          return opError(op, fmt::format("use list of %{} is out of step with "
                                         "its readers",
                                         result->name().str()));
      if (result->uses().size() != slotsReading_[result->id()])
        return opError(op, fmt::format("%{} has {} uses recorded but {} operand "
                                       "slots read it",
                                       result->name().str(), result->uses().size(),
                                       slotsReading_[result->id()]));
    }
    return absl::OkStatus();
  }

  absl::Status verifyRoots(const std::string &what,
                           llvm::ArrayRef<Value *> values) {
    for (const Value *value : values)
      if (!isScheduledHere(value->producer()))
        return invalidArgument("{}: error: {} %{} is not a value of this graph",
                               graph_.name().str(), what, value->name().str());
    return absl::OkStatus();
  }

  const Graph &graph_;
  const VerifierOptions &options_;
  std::vector<bool> scheduled_;
  std::vector<unsigned> slotsReading_;
  int64_t totalBytes_ = 0;
};

} // namespace

absl::Status verify(const Graph &graph, const VerifierOptions &options) {
  return GraphVerifier(graph, options).run();
}

absl::Status verifyByteTotal(const Graph &graph) {
  return GraphVerifier(graph, {}).runByteTotal();
}

} // namespace remat
