//===- Loss.cpp - The loss appended to a forward-only model -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Loss.h"

namespace remat::onnximport {

static absl::Status lossError(const ImportContext &ctx,
                              const std::string &message) {
  return absl::InvalidArgumentError(
      fmt::format("{}: error: {}", ctx.fileName(), message));
}

absl::Status addLoss(ImportContext &ctx, OnnxLoss loss,
                     std::vector<Value *> &outputs) {
  Value *first = outputs.front();
  const Type &type = first->type();
  Builder &b = ctx.builder();
  b.setRegion("loss");
  absl::StatusOr<Op *> lossOp;
  switch (loss) {
  case OnnxLoss::Output:
    if (type.rank() != 0)
      return lossError(
          ctx, fmt::format("the model's first output '{}' is {}, not a scalar "
                           "loss; choose one with --loss=softmax_cross_entropy, "
                           "--loss=mse or --loss=sum",
                           first->name().str(), type.str()));
    return absl::OkStatus();
  case OnnxLoss::SoftmaxCrossEntropy: {
    if (type.rank() < 1 || !type.isFloat())
      return lossError(ctx, fmt::format("--loss=softmax_cross_entropy needs "
                                        "float logits [..., C], the first "
                                        "output '{}' is {}",
                                        first->name().str(), type.str()));
    llvm::ArrayRef<int64_t> dims = type.shape().drop_back();
    Value *labels = b.input(b.graph().uniqueName("labels"),
                            Type(DType::I32, std::vector<int64_t>(dims.begin(),
                                                                  dims.end())));
    lossOp = b.tryCreate("softmax_cross_entropy", {first, labels}, {}, {"loss"});
    break;
  }
  case OnnxLoss::Mse: {
    Value *target = b.input(b.graph().uniqueName("target"), type);
    lossOp = b.tryCreate("mse_loss", {first, target}, {}, {"loss"});
    break;
  }
  case OnnxLoss::Sum:
    lossOp = b.tryCreate("reduce_sum", {first}, {}, {"loss"});
    break;
  }
  if (!lossOp.ok())
    return lossError(ctx, std::string(lossOp.status().message()));
  outputs.insert(outputs.begin(), (*lossOp)->result(0));
  return absl::OkStatus();
}

} // namespace remat::onnximport
