//===- ForcedOrder.cpp - Control dependencies as data ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ForcedOrder.h"

#include "llvm/ADT/STLExtras.h"

namespace remat::onnxexport {
namespace {

/// Whether an op can wait for `value` by data: a zero is made from its
/// first element.
bool isAwaitable(const Value &value) {
  return isFloatDType(value.type().dtype()) && value.type().numElements() > 0;
}

/// The value an op's dependents wait for: its first awaitable result.
const Value *awaitedResult(const Op &op) {
  for (const Value *result : op.results())
    if (isAwaitable(*result))
      return result;
  return nullptr;
}

int smallestFloatOperand(const Op &op) {
  int slot = -1;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    const Type &type = op.operand(i)->type();
    if (isFloatDType(type.dtype()) &&
        (slot < 0 ||
         type.byteSize() < op.operand(unsigned(slot))->type().byteSize()))
      slot = int(i);
  }
  return slot;
}

} // namespace

absl::Status ForcedOrder::apply(ExportContext &ctx) {
  const Op &op = ctx.op();
  std::vector<const Value *> awaited;
  for (const Op *trigger : op.controlDeps()) {
    const Value *value = awaitedResult(*trigger);
    if (!value)
      return ctx.error("its control dependency on '{}' has no ONNX form: "
                       "the op has no float result to wait for",
                       trigger->describe());
    awaited.push_back(value);
  }
  awaitedZero_.clear();
  int slot = smallestFloatOperand(op);
  if (slot < 0 && !awaited.empty())
    return ctx.error("its control dependencies have no ONNX form: no "
                     "float operand to carry them");
  if (slot < 0)
    return absl::OkStatus();
  llvm::append_range(awaited, unread_);
  unread_.clear();
  if (awaited.empty())
    return absl::OkStatus();
  std::vector<std::pair<std::string, DType>> tensors;
  for (const Value *value : awaited)
    tensors.push_back({names_.find(value)->second, value->type().dtype()});
  awaitedZero_ = waits_.zeroOfAll(
      ctx, tensors, op.operand(unsigned(slot))->type().dtype());
  ctx.rebindOperand(unsigned(slot), waits_.waiting(ctx, ctx.operand(unsigned(slot)),
                                                   awaitedZero_));
  return absl::OkStatus();
}

void ForcedOrder::lowered(const Op &op, int begin, int end) {
  OpNodes nodes{&op, begin, end};
  if (!awaitedZero_.empty()) {
    nodes.follows = awaitedZero_;
    nodes.followsZero = true;
  } else {
    const Value *latest = nullptr;
    for (const Value *operand : op.operands())
      if (isAwaitable(*operand) && !operand->producer()->hasFlag(OpFlagLeaf) &&
          (!latest || position_.lookup(operand->producer()) >
                          position_.lookup(latest->producer())))
        latest = operand;
    if (latest)
      nodes.follows = names_.find(latest)->second;
  }
  opNodes_.push_back(std::move(nodes));
  position_[&op] = int(position_.size());
  for (const Value *result : op.results())
    if (result->uses().empty() && isAwaitable(*result))
      unread_.push_back(result);
}

} // namespace remat::onnxexport
