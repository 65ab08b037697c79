//===- CSE.cpp - Common subexpression elimination ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/AttributeHash.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"

#include "absl/container/flat_hash_set.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace remat {
namespace {

/// Control dependencies as a set: sorted by op id.
llvm::SmallVector<unsigned, 4> controlDepIds(const Op &op) {
  llvm::SmallVector<unsigned, 4> ids;
  for (const Op *dep : op.controlDeps())
    ids.push_back(dep->id());
  llvm::sort(ids);
  return ids;
}

/// Hashes everything `isSameComputation` compares.
struct OpStructuralHash {
  size_t operator()(const Op *op) const {
    llvm::hash_code hash = llvm::hash_combine(&op->def(), op->numOperands());
    for (const Value *operand : op->operands())
      hash = llvm::hash_combine(hash, operand->id());
    for (const NamedAttr &attr : op->attrs())
      hash = llvm::hash_combine(
          hash, attr.name, hashAttribute(attr.value, FloatHashing::ByValue));
    for (unsigned id : controlDepIds(*op))
      hash = llvm::hash_combine(hash, id);
    return llvm::hash_combine(hash, op->region(), op->device());
  }
};

/// True when `a` and `b` compute the same results in the same context.
struct IsSameComputation {
  bool operator()(const Op *a, const Op *b) const {
    return &a->def() == &b->def() && a->operands() == b->operands() &&
           a->attrs() == b->attrs() && a->region() == b->region() &&
           a->device() == b->device() && controlDepIds(*a) == controlDepIds(*b);
  }
};

/// Merges ops that provably compute the same values: same kind, the same
/// operand values in the same order, the same attributes in the same order,
/// the same set of control dependencies, the same region tag and the same
/// device. The schedule is walked in order; the first op of each class is
/// kept, the readers (operands, outputs, collections) and control users of a
/// later duplicate are moved to it, and the duplicate is erased. Expected
/// linear time (one hash lookup per op).
///
/// Never merged:
///  - `input` and `param` declarations: each is a distinct tensor;
///  - random ops whose attributes differ: different seeds draw different
///    numbers. Random ops with equal attributes (and operands) ARE merged:
///    random ops are counter-based and keyed by their attributes, so equal
///    keys replay identical numbers and one draw serves both readers;
///  - ops differing in control dependencies or region tag. This is what keeps
///    CSE from undoing rematerialization: a recomputed copy is ordered after
///    the gradient that needs it by control dependencies and carries its own
///    recompute region, so it never matches the forward op it copies;
///  - a duplicate whose result is a graph output, so output names (such as
///    `<param>.grad`) survive.
///
/// Requires: a verified graph. Guarantees: a verified graph; kept ops keep
/// their place in the schedule (a merged value now lives until the last
/// reader of either copy, which can move the memory peak). It never undoes a
/// recompute rewrite that follows the rule above, so it may run before or
/// after one; a rewrite that emits untagged, unordered copies must not be
/// followed by it.
class CSEPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "cse";
  static constexpr llvm::StringLiteral kSummary =
      "Merges ops that provably compute the same values";

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    llvm::BitVector isOutput(graph.valueIdBound());
    for (const Value *output : graph.outputs())
      isOutput.set(output->id());
    llvm::BitVector isCollected(graph.valueIdBound());
    for (const Collection &collection : graph.collections())
      for (const Value *member : collection.values)
        isCollected.set(member->id());

    // Keys are the ops themselves: an op in the set is earlier than every op
    // still to be visited, and rewrites only touch later ops, so its operands
    // and control dependencies (hence its hash) never change while it is in
    // the set.
    absl::flat_hash_set<Op *, OpStructuralHash, IsSameComputation> known;
    known.reserve(graph.numOps());

    // Erased after the walk, which must not lose its place in the list.
    std::vector<Op *> duplicates;
    for (Op &opRef : graph.ops()) {
      Op *op = &opRef;
      if (op->hasFlag(OpFlagLeaf))
        continue;
      auto [it, inserted] = known.insert(op);
      if (inserted)
        continue;
      Op *kept = *it;
      if (llvm::any_of(op->results(),
                       [&](Value *v) { return isOutput.test(v->id()); }))
        continue;
      moveReaders(graph, op, kept, isCollected);
      duplicates.push_back(op);
    }
    for (Op *duplicate : duplicates)
      graph.erase(duplicate);
    return !duplicates.empty();
  }

private:
  /// Moves every reader and control user of `duplicate` to `kept`, which runs
  /// earlier. Graph::replaceAllUsesWith scans every output and collection, so
  /// it runs only for collection members; other readers are moved here.
  static void moveReaders(Graph &graph, Op *duplicate, Op *kept,
                          const llvm::BitVector &isCollected) {
    for (unsigned i = 0, e = duplicate->numResults(); i < e; ++i) {
      Value *from = duplicate->result(i);
      Value *to = kept->result(i);
      if (isCollected.test(from->id())) {
        graph.replaceAllUsesWith(from, to);
        continue;
      }
      while (from->hasUses()) {
        Use use = from->uses().back();
        use.user->setOperand(use.operandIndex, to);
      }
    }
    while (!duplicate->controlUsers().empty()) {
      Op *user = duplicate->controlUsers().back();
      user->removeControlDep(duplicate);
      user->addControlDep(kept);
    }
  }
};

} // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

void registerCSEPass(PassRegistry &registry) {
  registry.add({.argument = CSEPass::kArgument.str(),
                .summary = CSEPass::kSummary.str(),
                .factory = [](const PassOptions &)
                    -> absl::StatusOr<std::unique_ptr<Pass>> {
                  return createCSEPass();
                }});
}

} // namespace remat
