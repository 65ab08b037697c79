//===- ScheduleGraph.cpp - Dense arrays of a graph, orders, peaks ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One sweep over the IR fills the forward arrays (operands, predecessors,
/// results, storage owners and bytes); the reverse ones (readers, read
/// slots) are counted from them without touching the IR again. Peaks of
/// candidate orders apply the live-range rules of docs/memory-model.md to
/// these arrays with a difference array, as `simulateMemory` does.
///
//===----------------------------------------------------------------------===//

#include "MemoryOrder.h"

#include "remat/IR/Graph.h"
#include "remat/Analysis/Memory.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>

namespace remat::schedule {
namespace {

/// Fills `begin`/`items` (CSR) with the reverse of the edges in
/// `forwardBegin`/`forwardItems`: for each op, the ops that list it.
void buildReverse(const std::vector<Index> &forwardBegin,
                  const std::vector<Index> &forwardItems,
                  std::vector<Index> &begin, std::vector<Index> &items) {
  Index numOps = forwardBegin.size() - 1;
  begin.assign(numOps + 1, 0);
  for (Index target : forwardItems)
    ++begin[target + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  items.resize(forwardItems.size());
  std::vector<Index> next(begin.begin(), begin.end() - 1);
  for (Index source = 0; source < numOps; ++source)
    for (Index i = forwardBegin[source]; i < forwardBegin[source + 1]; ++i)
      items[next[forwardItems[i]]++] = source;
}

} // namespace

ScheduleGraph::ScheduleGraph(const Graph &graph) {
  // kUnscheduled until the op or value has been read.
  constexpr Index kUnscheduled = std::numeric_limits<Index>::max();
  std::vector<Index> opIndex(graph.opIdBound(), kUnscheduled);
  std::vector<Index> valueIndex(graph.valueIdBound(), kUnscheduled);
  // Id bounds are upper bounds, known without walking the op list. Most ops
  // have one result and at most two operands.
  size_t expectedOps = graph.opIdBound();
  ops_.reserve(expectedOps);
  operandValues_.reserve(2 * expectedOps);
  predecessors_.reserve(2 * expectedOps);
  producer_.reserve(graph.valueIdBound());
  owner_.reserve(graph.valueIdBound());
  bytes_.reserve(graph.valueIdBound());
  operandBegin_.reserve(expectedOps + 1);
  predecessorBegin_.reserve(expectedOps + 1);
  resultBegin_.reserve(expectedOps + 1);
  operandBegin_.push_back(0);
  predecessorBegin_.push_back(0);
  resultBegin_.push_back(0);
  leaf_.resize(expectedOps);
  pinned_.resize(graph.valueIdBound());
  auto isScheduledValue = [&](const Value *value) {
    return value->id() < valueIndex.size() &&
           valueIndex[value->id()] != kUnscheduled;
  };
  auto isScheduledOp = [&](const Op *op) {
    return op->id() < opIndex.size() && opIndex[op->id()] != kUnscheduled;
  };
  // A const graph still hands out mutable ops, as Graph::inputs() does.
  for (Op &op : const_cast<Graph &>(graph).ops()) {
    if (!llvm::all_of(op.operands(), isScheduledValue) ||
        !llvm::all_of(op.controlDeps(), isScheduledOp)) {
      firstUnorderedOp_ = &op;
      return;
    }
    Index index = ops_.size();
    opIndex[op.id()] = index;
    ops_.push_back(&op);
    bool isLeaf = op.hasFlag(OpFlagLeaf);
    if (isLeaf)
      leaf_.set(index);
    for (const Value *operand : op.operands()) {
      Index value = valueIndex[operand->id()];
      operandValues_.push_back(value);
      predecessors_.push_back(producer_[value]);
    }
    for (const Op *dep : op.controlDeps())
      predecessors_.push_back(opIndex[dep->id()]);
    operandBegin_.push_back(operandValues_.size());
    predecessorBegin_.push_back(predecessors_.size());
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      Index value = producer_.size();
      valueIndex[op.result(i)->id()] = value;
      producer_.push_back(index);
      bool aliases = isAlias(op, i);
      owner_.push_back(aliases ? owner_[operandValues_[operandBegin_[index]]]
                               : value);
      bytes_.push_back(aliases ? 0 : op.result(i)->type().byteSize());
      if (isLeaf)
        pinned_.set(value);
    }
    resultBegin_.push_back(producer_.size());
  }

  Index numOps = ops_.size();
  Index numValues = producer_.size();
  leaf_.resize(numOps);
  pinned_.resize(numValues);
  for (const Value *output : graph.outputs())
    if (isScheduledValue(output))
      pinned_.set(owner_[valueIndex[output->id()]]);

  buildReverse(predecessorBegin_, predecessors_, readerBegin_, readers_);
  readSlots_.assign(numValues, 0);
  for (Index value : operandValues_)
    ++readSlots_[owner_[value]];
  heldBytes_.assign(numOps, 0);
  for (Index value = 0; value < numValues; ++value)
    if (owner_[value] == value && (readSlots_[value] > 0 || isPinned(value)))
      heldBytes_[producer_[value]] += bytes_[value];
}

bool ScheduleGraph::hasSingleReader(Index op) const {
  llvm::ArrayRef<Index> opReaders = readers(op);
  return !opReaders.empty() &&
         std::all_of(opReaders.begin(), opReaders.end(),
                     [&](Index reader) { return reader == opReaders.front(); });
}

Order::Order(Index numOps) : ops_(numOps), position_(numOps) {
  std::iota(ops_.begin(), ops_.end(), 0);
  std::iota(position_.begin(), position_.end(), 0);
}

Order::Order(std::vector<Index> ops) : ops_(std::move(ops)) {
  position_.resize(ops_.size());
  for (Index step = 0; step < ops_.size(); ++step)
    position_[ops_[step]] = step;
}

std::vector<Index> lastLiveSteps(const ScheduleGraph &graph,
                                 const Order &order) {
  Index numValues = graph.numValues();
  std::vector<Index> last(numValues, 0);
  for (Index step = 0; step < order.size(); ++step) {
    Index op = order.opAt(step);
    for (Index value : graph.operands(op))
      last[graph.owner(value)] = step;
    for (Index i = 0; i < graph.numResults(op); ++i)
      last[graph.firstResult(op) + i] = step;
  }
  for (Index value = 0; value < numValues; ++value)
    if (graph.owner(value) == value && graph.isPinned(value))
      last[value] = order.size() - 1;
  return last;
}

int64_t simulatePeak(const ScheduleGraph &graph, const Order &order) {
  std::vector<Index> last = lastLiveSteps(graph, order);
  std::vector<int64_t> delta(order.size() + 1, 0);
  for (Index step = 0; step < order.size(); ++step) {
    Index op = order.opAt(step);
    Index first = graph.isLeaf(op) ? 0 : step;
    for (Index i = 0; i < graph.numResults(op); ++i) {
      Index value = graph.firstResult(op) + i;
      if (graph.owner(value) != value)
        continue;
      delta[first] += graph.bytes(value);
      delta[last[value] + 1] -= graph.bytes(value);
    }
  }
  int64_t live = 0;
  int64_t peak = 0;
  for (Index step = 0; step < order.size(); ++step) {
    live += delta[step];
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t countMovedOps(const Order &order) {
  // Patience sorting: tails[k] is the smallest last op of an increasing run
  // of length k + 1.
  std::vector<Index> tails;
  for (Index op : order.ops()) {
    auto it = std::lower_bound(tails.begin(), tails.end(), op);
    if (it == tails.end())
      tails.push_back(op);
    else
      *it = op;
  }
  return static_cast<int64_t>(order.size() - tails.size());
}

} // namespace remat::schedule
