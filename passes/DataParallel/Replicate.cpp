//===- Replicate.cpp - One copy of the graph per tower ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Copies each non-leaf op once per tower, reading that tower's slice of every
/// input and the shared params, with result types inferred again for the
/// smaller batch. Shape attributes (`shape`, `input_shape`) of ops whose
/// result carries the batch dim are scaled with it. Gradient rules that bake
/// the batch size into a constant (`mse_loss`, `reduce_mean` over the batch)
/// would make a tower's gradient the wrong multiple, so such graphs are
/// refused rather than silently mis-scaled.
///
//===----------------------------------------------------------------------===//

#include "Towers.h"

#include "remat/Analysis/Batch.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Diagnostics.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace remat::dp {

std::string towerDevice(int64_t k) { return fmt::format("gpu:{}", k); }

namespace {

constexpr llvm::StringLiteral kGradSuffix = ".grad";

/// The param whose gradient `output` is, or null.
Value *gradientParam(const Graph &graph, const Value &output) {
  llvm::StringRef name = output.name();
  if (!name.endswith(kGradSuffix))
    return nullptr;
  Value *param = graph.lookupValue(name.drop_back(kGradSuffix.size()));
  return param && param->producer()->kind() == "param" ? param : nullptr;
}

/// The batch dim shared by every input, which `towers` must divide.
absl::StatusOr<int64_t> batchDim(const Graph &graph, int64_t towers) {
  REMAT_ASSIGN_OR_RETURN(int64_t batch, findBatchDim(graph, "data-parallel"));
  const Value *first = graph.inputs().front();
  if (batch % towers != 0)
    return opError(*first->producer(),
                   fmt::format("data-parallel: towers={} does not divide the "
                               "batch {} of %{}",
                               towers, batch, first->name().str()));
  return batch;
}

class Replicator {
public:
  Replicator(Graph &graph, Towers &towers)
      : graph_(graph), towers_(towers), batched_(graph, towers.batch),
        valueMap_(towers.count,
                  std::vector<Value *>(graph.valueIdBound(), nullptr)),
        opMap_(towers.count, std::vector<Op *>(graph.opIdBound(), nullptr)) {}

  absl::Status run() {
    for (const Op &op : graph_.ops())
      if (op.hasFlag(OpFlagLeaf))
        for (Value *leaf : op.results())
          for (auto &map : valueMap_)
            map[leaf->id()] = leaf;
    std::vector<Op *> originals;
    for (Op &op : graph_.ops())
      if (!op.hasFlag(OpFlagLeaf))
        originals.push_back(&op);
    for (Value *input : graph_.inputs()) {
      for (int64_t k = 0; k < towers_.count; ++k)
        REMAT_RETURN_IF_ERROR(sliceInput(input, k));
    }
    for (Op *op : originals) {
      REMAT_RETURN_IF_ERROR(refuseBatchConstant(*op));
      batched_.visit(*op);
      for (int64_t k = 0; k < towers_.count; ++k)
        REMAT_RETURN_IF_ERROR(copy(*op, k));
    }
    towers_.originals = std::move(originals);
    towers_.firstCopy = valueMap_[0];
    for (Value *output : graph_.outputs()) {
      towers_.outputs.push_back(output);
      auto &copies = towers_.outputCopies.emplace_back();
      for (int64_t k = 0; k < towers_.count; ++k)
        copies.push_back(valueMap_[k][output->id()]);
      if (Value *param = gradientParam(graph_, *output)) {
        towers_.params.push_back(param);
        towers_.grads.push_back(copies);
      }
    }
    return absl::OkStatus();
  }

private:
  absl::Status sliceInput(Value *input, int64_t k) {
    int64_t part = towers_.batch / towers_.count;
    std::vector<int64_t> starts(input->type().rank(), 0);
    std::vector<int64_t> ends(input->type().shape().begin(),
                              input->type().shape().end());
    starts[0] = k * part;
    ends[0] = (k + 1) * part;
    Builder builder(graph_);
    builder.setDevice(towerDevice(k));
    REMAT_ASSIGN_OR_RETURN(
        Op * slice,
        builder.tryCreate("slice", {input},
                          {{"starts", Attribute(starts)},
                           {"ends", Attribute(ends)}},
                          {fmt::format("{}.t{}", input->name().str(), k)}));
    valueMap_[k][input->id()] = slice->result();
    towers_.order.push_back(slice);
    return absl::OkStatus();
  }

  absl::Status refuseBatchConstant(const Op &op) {
    if (op.numOperands() == 0 || !batched_.carriesBatch(*op.operand(0)))
      return absl::OkStatus();
    bool baked = op.kind() == "mse_loss";
    if (op.kind() == "reduce_mean") {
      llvm::ArrayRef<int64_t> axes = op.findAttr("axes")
                                         ? op.findAttr("axes")->asIntList()
                                         : llvm::ArrayRef<int64_t>();
      // No axes reduces every dim, the batch included.
      baked = axes.empty() || llvm::is_contained(axes, 0) ||
              llvm::is_contained(axes, -int64_t(op.operand(0)->type().rank()));
    }
    if (!baked)
      return absl::OkStatus();
    return opError(op, "data-parallel: the gradient of this op scales by the "
                       "whole batch; a tower's share would be mis-scaled (use "
                       "reduce_sum or softmax_cross_entropy)");
  }

  absl::Status copy(const Op &op, int64_t k) {
    llvm::SmallVector<Value *, 4> operands;
    for (const Value *operand : op.operands())
      operands.push_back(valueMap_[k][operand->id()]);
    std::vector<std::string> names;
    for (const Value *result : op.results())
      names.push_back(fmt::format("{}.t{}", result->name().str(), k));
    Builder builder(graph_);
    builder.setDevice(towerDevice(k));
    builder.setRegion(op.region().str());
    absl::StatusOr<Op *> created = builder.tryCreate(
        op.kind(), operands,
        batched_.rebatchedAttrs(op, towers_.batch / towers_.count), names);
    if (!created.ok())
      return opError(op, fmt::format("data-parallel: cannot split along the "
                                     "batch: {}",
                                     std::string(created.status().message())));
    Op *clone = *created;
    clone->setLoc(op.loc());
    for (const Op *dep : op.controlDeps())
      if (Op *mapped = opMap_[k][dep->id()])
        clone->addControlDep(mapped);
    opMap_[k][op.id()] = clone;
    for (unsigned i = 0; i < op.numResults(); ++i)
      valueMap_[k][op.result(i)->id()] = clone->result(i);
    towers_.order.push_back(clone);
    return absl::OkStatus();
  }

  Graph &graph_;
  Towers &towers_;
  BatchTracker batched_;
  /// valueMap_[k][id]: tower k's copy of value `id`.
  std::vector<std::vector<Value *>> valueMap_;
  std::vector<std::vector<Op *>> opMap_;
};

} // namespace

absl::StatusOr<Towers> replicateTowers(Graph &graph, int64_t count) {
  Towers towers;
  towers.count = count;
  bool hasGradient = llvm::any_of(graph.outputs(), [&](const Value *output) {
    return gradientParam(graph, *output) != nullptr;
  });
  if (!hasGradient)
    return invalidArgument("data-parallel: graph @{} has no param gradient "
                           "output (run autodiff first)",
                           graph.name().str());
  REMAT_ASSIGN_OR_RETURN(towers.batch, batchDim(graph, count));
  REMAT_RETURN_IF_ERROR(Replicator(graph, towers).run());
  return towers;
}

} // namespace remat::dp
