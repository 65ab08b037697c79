//===- ExportContext.cpp - What an op's lowering sees ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include "Waits.h"

#include "remat/IR/Diagnostics.h"

namespace remat::onnxexport {

ExportContext::ExportContext(OnnxGraph &graph, const ValueNames &names,
                             const Op &op)
    : NodeBuilder(graph, op.result(0)->name().str()), op_(op),
      operandTypes_(op.operandTypes()),
      signature_(op.def(), operandTypes_, op.attrs()) {
  for (const Value *operand : op.operands())
    operandNames_.push_back(names.lookup(operand));
}

std::string ExportContext::filledLike(const std::string &like,
                                      llvm::ArrayRef<int64_t> shape,
                                      double fill, DType dtype) {
  std::string value = makeZero(*this, like, dtype);
  if (fill != 0.0)
    value = temp("Add", {value, scalar(fill, dtype)});
  // makeZero's value is [1], which Expand to the shape [] would keep.
  if (shape.empty())
    return reshaped(value, {});
  return temp("Expand", {value, int64s(shape)});
}

absl::Status ExportContext::opError(const std::string &message) const {
  return remat::opError(op_, message);
}

std::string reduce(ExportContext &ctx, llvm::StringRef opType,
                   const std::string &x, llvm::ArrayRef<int64_t> axes,
                   bool keepdims, std::string output) {
  if (output.empty())
    output = ctx.freshName(opType);
  if (opType == "ReduceSum")
    ctx.emit(opType, {x, ctx.int64s(axes)}, {output},
             {intAttr("keepdims", keepdims)});
  else
    ctx.emit(opType, {x}, {output},
             {intsAttr("axes", axes), intAttr("keepdims", keepdims)});
  return output;
}

} // namespace remat::onnxexport
