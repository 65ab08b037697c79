//===- Rewrite.cpp - Copies and their placement ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reroutes the gradient ops' reads of values a level does not keep to
/// per-segment copies, made on demand right before their first reader and
/// ordered after the segment's trigger.
///
//===----------------------------------------------------------------------===//

#include "Recompute/Rematerializer.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/OpRegistry.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>

namespace remat::recompute {

absl::StatusOr<RecomputeResult> Rematerializer::run() {
  positions_.assign(graph_.opIdBound(), -1);
  origin_.assign(graph_.opIdBound(), nullptr);
  int64_t step = 0;
  std::vector<const Op *> forward;
  for (Op &op : graph_.ops()) {
    positions_[op.id()] = step++;
    origin_[op.id()] = &op;
    if (op.id() >= forwardOpIdBound_)
      readers_.push_back(&op);
    else
      forward.push_back(&op);
  }

  Level level = firstLevel(graph_, forward, plan_, regions_, reported_);
  rewrite(level);
  for (unsigned depth = 1; depth < regions_.numLevels(); ++depth) {
    Level nested = nestedLevel(depth);
    rewrite(nested);
  }
  if (regions_.numLevels() > 1)
    eraseDeadOps();
  return finish();
}

void Rematerializer::rewrite(const Level &level) {
  segmentIndex_.assign(level.labels.size(), -1);
  for (Op *reader : readers_) {
    for (unsigned i = 0, e = reader->numOperands(); i < e; ++i) {
      Value *operand = reader->operand(i);
      if (!needsCopy(level, *operand))
        continue;
      int segment = level.segment[operand->producer()->id()];
      reader->setOperand(i, copyOf(level, segment, operand, reader));
    }
  }
}

Value *Rematerializer::copyOf(const Level &level, int segment, Value *value,
                              Op *reader) {
  if (Value *existing = lookupCopy(segment, value))
    return existing;
  // Post-order over the producers still to copy.
  llvm::SmallVector<std::pair<Op *, unsigned>, 16> stack;
  stack.push_back({value->producer(), 0});
  while (!stack.empty()) {
    auto &[op, next] = stack.back();
    if (next < op->numOperands()) {
      Value *operand = op->operand(next++);
      // The stack is a chain of producers, so no op is on it twice; an
      // op reached again by another branch is copied by then.
      if (needsCopy(level, *operand) && !lookupCopy(segment, operand))
        stack.push_back({operand->producer(), 0});
      continue;
    }
    Op *original = op;
    stack.pop_back();
    copyOp(level, segment, original, reader);
  }
  return lookupCopy(segment, value);
}

Value *Rematerializer::lookupCopy(int segment, const Value *value) const {
  auto it = copyMap_.find({segment, value->id()});
  return it == copyMap_.end() ? nullptr : it->second;
}

void Rematerializer::copyOp(const Level &level, int segment, Op *original,
                            Op *reader) {
  llvm::SmallVector<Value *, 4> operands;
  bool isRoot = true;
  for (Value *operand : original->operands()) {
    if (needsCopy(level, *operand)) {
      operands.push_back(lookupCopy(segment, operand));
      isRoot = false;
    } else {
      operands.push_back(boundary(operand, reader));
    }
  }
  Op *copy = createCopy(graph_, *original, operands, reader);
  for (unsigned i = 0; i < original->numResults(); ++i)
    copyMap_[{segment, original->result(i)->id()}] = copy->result(i);

  growTables();
  Op *source = origin_[original->id()];
  origin_[copy->id()] = source ? source : original;
  copyLevel_[copy->id()] = level.number;
  copySegment_[copy->id()] = segment;
  copies_.push_back(copy);
  created_.push_back(copy);

  int index = segmentInfo(level, segment, reader);
  copyInfo_[copy->id()] = index;
  countCopy(segmentsInfo_[index], *copy, +1);
  if (isRoot && segmentsInfo_[index].trigger)
    orderAfter(copy, segmentsInfo_[index].trigger);
}

void countCopy(RecomputeSegment &info, const Op &copy, int sign) {
  info.numCopies += sign;
  info.flops += sign * opFlops(copy);
  for (unsigned i = 0; i < copy.numResults(); ++i)
    if (!isAlias(copy, i))
      info.bytes += sign * copy.result(i)->type().byteSize();
}

Op *createCopy(Graph &graph, const Op &original,
               llvm::ArrayRef<Value *> operands, Op *before) {
  llvm::SmallVector<std::string, 2> names;
  for (const Value *result : original.results())
    names.push_back((llvm::Twine(result->name()) + ".re").str());
  return graph.createCopyOf(original, operands, names, before);
}

Value *Rematerializer::boundary(Value *kept, Op *reader) {
  growTables();
  // A nested level reads what an enclosing copy read before its forced
  // dependency: it has a dependency of its own.
  while (forced_.test(kept->id()))
    kept = kept->producer()->operand(0);
  if (kept->producer()->numOperands() == 0 ||
      kept->producer()->kind() == "stop_gradient")
    return kept;
  if (Value *existing = stopGradient_[kept->id()])
    return existing;
  Op *op = createHelper("stop_gradient", {kept}, {}, kept->type(),
                        (llvm::Twine(kept->name()) + ".sg").str(), reader);
  op->setDevice(kept->producer()->device().str());
  stopGradient_[kept->id()] = op->result();
  return op->result();
}

int Rematerializer::segmentInfo(const Level &level, int segment, Op *reader) {
  int &index = segmentIndex_[segment];
  if (index < 0) {
    index = int(segmentsInfo_.size());
    RecomputeSegment info;
    info.label = level.labels[segment];
    info.level = level.number;
    info.trigger = triggerFor(reader);
    segmentsInfo_.push_back(std::move(info));
  }
  return index;
}

Op *Rematerializer::triggerFor(Op *reader) {
  if (Op *latest = latestGradientOperandProducer(
          *reader, [&](const Op &op) { return isGradientOp(op); },
          [&](const Op *op) { return position(op); }))
    return latest;
  for (auto it = reader->getIterator(); it != graph_.ops().begin();)
    if (isGradientOp(*--it))
      return &*it;
  return nullptr;
}

bool Rematerializer::isGradientOp(const Op &op) const {
  return op.id() >= forwardOpIdBound_ && op.id() < positions_.size();
}

void Rematerializer::growTables() {
  if (origin_.size() < graph_.opIdBound()) {
    origin_.resize(graph_.opIdBound(), nullptr);
    copyLevel_.resize(graph_.opIdBound(), 0);
    copySegment_.resize(graph_.opIdBound(), -1);
    copyInfo_.resize(graph_.opIdBound(), -1);
  }
  if (stopGradient_.size() < graph_.valueIdBound()) {
    stopGradient_.resize(graph_.valueIdBound(), nullptr);
    zeroOf_.resize(graph_.valueIdBound(), nullptr);
    forced_.resize(graph_.valueIdBound());
  }
}

void eraseUnreadOps(Graph &graph, std::vector<Op *> &created,
                    llvm::function_ref<void(Op &)> onErase) {
  llvm::DenseSet<const Op *> erased;
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    Op *op = *it;
    bool used = !op->controlUsers().empty() ||
                llvm::any_of(op->results(),
                             [](Value *result) { return result->hasUses(); });
    if (used)
      continue;
    for (Op *dep : llvm::SmallVector<Op *, 2>(op->controlDeps().begin(),
                                              op->controlDeps().end()))
      op->removeControlDep(dep);
    onErase(*op);
    erased.insert(op);
    graph.erase(op);
  }
  llvm::erase_if(created, [&](Op *op) { return erased.contains(op); });
}

void Rematerializer::eraseDeadOps() {
  llvm::DenseSet<const Op *> erased;
  eraseUnreadOps(graph_, created_, [&](Op &op) {
    if (copyInfo_[op.id()] >= 0)
      countCopy(segmentsInfo_[copyInfo_[op.id()]], op, -1);
    erased.insert(&op);
  });
  llvm::erase_if(copies_, [&](Op *op) { return erased.contains(op); });
}

absl::StatusOr<RecomputeResult> Rematerializer::finish() {
  RecomputeResult result;
  // Segments in the order their first copies run, nested levels included.
  std::vector<bool> listed(segmentsInfo_.size(), false);
  std::vector<int64_t> copiesOf(forwardOpIdBound_, 0);
  for (Op &op : graph_.ops()) {
    if (op.id() < copyLevel_.size() && copyLevel_[op.id()] > 0)
      result.maxRecomputations = std::max(
          result.maxRecomputations, ++copiesOf[origin_[op.id()]->id()]);
    if (op.id() < copyInfo_.size() && copyInfo_[op.id()] >= 0) {
      int index = copyInfo_[op.id()];
      if (!listed[index] && segmentsInfo_[index].numCopies > 0)
        result.segments.push_back(segmentsInfo_[index]);
      listed[index] = true;
    }
    if (op.id() >= forwardOpIdBound_ || op.numOperands() == 0)
      continue;
    for (Value *value : op.results())
      if (reported_.test(value->id()))
        result.kept.push_back(value);
  }
  result.numCopies = int64_t(copies_.size());
  // Forced dependencies count as recomputation: they exist only for it.
  for (Op *op : created_)
    result.flopsRecompute += opFlops(*op);
  return result;
}

} // namespace remat::recompute
