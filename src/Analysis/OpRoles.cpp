//===- OpRoles.cpp - What each op of a training graph is for -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One reverse sweep over the schedule (a topological order) marks the ops
/// that feed non-gradient outputs and those that feed gradient outputs; a
/// forward sweep then marks the forward ops whose storage the backward pass
/// reads.
///
//===----------------------------------------------------------------------===//

#include "remat/Analysis/OpRoles.h"

#include "remat/Analysis/Memory.h"
#include "remat/IR/Graph.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringExtras.h"

namespace remat {
namespace {

constexpr llvm::StringLiteral kGradSuffix = ".grad";

/// `name` without a `.N` suffix of `Graph::uniqueName`; `name` when it has
/// none.
llvm::StringRef dropUniqueSuffix(llvm::StringRef name) {
  auto [stem, suffix] = name.rsplit('.');
  if (suffix.empty() || stem.empty() || !llvm::all_of(suffix, llvm::isDigit))
    return name;
  return stem;
}

/// The value `name` names once `suffix` (and a `.N` after it) is removed;
/// null when `name` does not end so or no such value exists.
const Value *valueBefore(const Graph &graph, llvm::StringRef name,
                         llvm::StringRef suffix) {
  for (llvm::StringRef candidate : {name, dropUniqueSuffix(name)})
    if (candidate.endswith(suffix))
      return graph.lookupValue(candidate.drop_back(suffix.size()));
  return nullptr;
}

/// Whether `output` is a gradient output `<x>.grad` of a value `x`.
bool isGradientOutput(const Graph &graph, const Value &output) {
  llvm::StringRef name = output.name();
  return name.endswith(kGradSuffix) &&
         graph.lookupValue(name.drop_back(kGradSuffix.size()));
}

} // namespace

const char *opRoleName(OpRoleKind role) {
  // In `OpRoleKind` order.
  static constexpr const char *kNames[] = {
      "input", "param", "forward", "kept", "recomputed", "gradient", "unused"};
  return kNames[unsigned(role)];
}

bool isRecomputeOp(const Op &op) {
  if (op.numResults() == 0)
    return false;
  const Graph &graph = *op.graph();
  llvm::StringRef name = op.result(0)->name();
  if (const Value *original = valueBefore(graph, name, ".re"))
    return original->producer()->kind() == op.kind() &&
           original->resultIndex() == 0;
  if (op.numOperands() == 0)
    return false;
  const Value *operand = op.operand(0);
  if (op.kind() == "stop_gradient")
    return valueBefore(graph, name, ".sg") == operand;
  if (op.kind() == "sub")
    return valueBefore(graph, name, ".after") == operand;
  return false;
}

std::vector<OpRoleKind> classifyOps(const Graph &graph,
                                    const Liveness &liveness) {
  std::vector<OpRoleKind> roles(graph.opIdBound(), OpRoleKind::Unused);
  llvm::BitVector feedsForward(graph.opIdBound());
  llvm::BitVector feedsGradient(graph.opIdBound());
  for (const Value *output : graph.outputs())
    (isGradientOutput(graph, *output) ? feedsGradient : feedsForward)
        .set(output->producer()->id());
  for (const Op &op : llvm::reverse(graph.ops()))
    for (llvm::BitVector *feeds : {&feedsForward, &feedsGradient})
      if (feeds->test(op.id()))
        for (const Value *operand : op.operands())
          feeds->set(operand->producer()->id());

  for (const Op &op : graph.ops()) {
    OpRoleKind &role = roles[op.id()];
    if (op.hasFlag(OpFlagLeaf))
      role = op.kind() == "param" ? OpRoleKind::Param : OpRoleKind::Input;
    else if (isRecomputeOp(op))
      role = OpRoleKind::Recomputed;
    else if (feedsForward.test(op.id()))
      role = OpRoleKind::Forward;
    else if (feedsGradient.test(op.id()))
      role = OpRoleKind::Gradient;
  }
  for (const Op &op : graph.ops()) {
    OpRoleKind role = roles[op.id()];
    if (role != OpRoleKind::Recomputed && role != OpRoleKind::Gradient)
      continue;
    for (const Value *operand : op.operands()) {
      const Op *producer = liveness.owner[operand->id()]->producer();
      if (roles[producer->id()] == OpRoleKind::Forward)
        roles[producer->id()] = OpRoleKind::Kept;
    }
  }
  return roles;
}

} // namespace remat
