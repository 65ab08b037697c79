//===- Gradient.cpp - Helpers shared by gradient rules --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

namespace remat {

OpSignature GradientContext::signature() const {
  operandTypes_ = op_.operandTypes();
  return op_.signature(operandTypes_);
}

Value *GradientContext::sumToShape(Value *grad, const Type &target) const {
  if (!grad)
    return nullptr;
  llvm::ArrayRef<int64_t> from = grad->type().shape();
  llvm::ArrayRef<int64_t> to = target.shape();
  if (from == to)
    return grad;
  assert(from.size() >= to.size() && "a gradient has at least its target's rank");
  size_t lead = from.size() - to.size();
  // Dims of size 1 need no sum: the final reshape drops or restores them.
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i) {
    bool stretched = i < lead || to[i - lead] == 1;
    if (stretched && from[i] != 1)
      axes.push_back(int64_t(i));
  }
  Value *summed = grad;
  if (!axes.empty())
    summed = builder_.op("reduce_sum", {grad},
                         {{"axes", Attribute(std::move(axes))},
                          {"keepdims", true}});
  if (!summed || summed->type().shape() == to)
    return summed;
  return builder_.op("reshape", {summed},
                     {{"shape", Attribute(std::vector<int64_t>(to.begin(),
                                                               to.end()))}});
}

Value *GradientContext::scalar(double value, DType dtype) const {
  return builder_.op("constant", {},
                     {{"value", value}, {"dtype", dtypeName(dtype).str()}});
}

} // namespace remat
