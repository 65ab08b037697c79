//===- Batch.cpp - Which values carry the batch dim -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Batch.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace remat {

absl::StatusOr<int64_t> findBatchDim(const Graph &graph, llvm::StringRef user) {
  if (graph.inputs().empty())
    return invalidArgument("{}: graph @{} has no input to take the batch from",
                           user.str(), graph.name().str());
  const Value *first = graph.inputs().front();
  for (const Value *input : graph.inputs()) {
    if (input->type().rank() == 0)
      return opError(*input->producer(),
                     fmt::format("{}: input %{} has no batch dim", user.str(),
                                 input->name().str()));
    if (input->type().dim(0) != first->type().dim(0))
      return opError(*input->producer(),
                     fmt::format("{}: input %{} has batch {} but %{} has {}",
                                 user.str(), input->name().str(),
                                 input->type().dim(0), first->name().str(),
                                 first->type().dim(0)));
  }
  return first->type().dim(0);
}

namespace {

bool isShapeAttr(const NamedAttr &attr) {
  return (attr.name == "shape" || attr.name == "input_shape") &&
         attr.value.kind() == AttrKind::IntList;
}

/// One operand and one result with the same elements: a reshape.
bool isRelayout(const Op &op) {
  return op.numOperands() == 1 && op.numResults() == 1 &&
         op.operand(0)->type().numElements() ==
             op.result()->type().numElements();
}

} // namespace

BatchTracker::BatchTracker(const Graph &graph, int64_t batch)
    : batch_(batch), batched_(graph.valueIdBound()) {
  for (const Value *input : graph.inputs())
    batched_.set(input->id());
}

void BatchTracker::visit(const Op &op) {
  bool readsBatch = llvm::any_of(op.operands(), [&](const Value *operand) {
    return batched_.test(operand->id());
  });
  if (!readsBatch && (!shapedByBatch(op) || isRelayout(op)))
    return;
  for (const Value *result : op.results())
    if (result->type().rank() > 0 && result->type().dim(0) == batch_)
      batched_.set(result->id());
}

bool BatchTracker::carriesBatch(const Value &value) const {
  return value.id() < batched_.size() && batched_.test(value.id());
}

bool BatchTracker::shapedByBatch(const Op &op) const {
  return llvm::any_of(op.attrs(), [&](const NamedAttr &attr) {
    return isShapeAttr(attr) && !attr.value.asIntList().empty() &&
           attr.value.asIntList()[0] == batch_;
  });
}

AttrList BatchTracker::rebatchedAttrs(const Op &op, int64_t newBatch) const {
  AttrList attrs = op.attrs();
  if (op.numResults() == 0 || !carriesBatch(*op.result()))
    return attrs;
  for (NamedAttr &attr : attrs) {
    if (!isShapeAttr(attr))
      continue;
    std::vector<int64_t> dims(attr.value.asIntList().begin(),
                              attr.value.asIntList().end());
    if (!dims.empty() && dims[0] == batch_) {
      dims[0] = newBatch;
      attr.value = Attribute(dims);
    }
  }
  return attrs;
}

} // namespace remat
