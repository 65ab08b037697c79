//===- Hoist.cpp - Hoisting last readers towards their producers ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One sweep in schedule order builds the new order from the beginning. An
/// op that is the last reader of operand storage frees it; moving the op up
/// to just after its latest predecessor frees that storage earlier and
/// allocates the op's results earlier. The op moves there when the storage
/// it frees there (operands whose other readers are all placed before that
/// point) outweighs its results; failing that, when all the storage it
/// frees outweighs its results, it moves to just after the latest of its
/// predecessors and those other readers. Otherwise it goes to the back.
/// Ops are placed before their readers are decided, so chains of reductions
/// move together. Linear in ops + edges, but for the order list's amortized
/// O(log n) relabelling.
///
//===----------------------------------------------------------------------===//

#include "MemoryOrder.h"

namespace remat::schedule {
namespace {

constexpr Index kNone = OrderList::kNone;

class Hoister {
public:
  Hoister(const ScheduleGraph &graph, const Order &order)
      : graph_(graph), order_(order), list_(graph.numOps()),
        unreadSlots_(graph.numValues(), 0), seenAt_(graph.numValues(), 0),
        lastReader_(graph.numValues(), kNone) {
    for (Index value = 0; value < graph.numValues(); ++value)
      unreadSlots_[value] = graph.readSlots(value);
  }

  Order run() {
    for (Index step = 0; step < order_.size(); ++step) {
      Index op = order_.opAt(step);
      Index prev = placeAfter(op);
      if (prev == kNone)
        list_.pushBack(op);
      else
        list_.insertAfter(op, prev);
      for (Index value : graph_.operands(op)) {
        Index &last = lastReader_[graph_.owner(value)];
        if (last == kNone || list_.precedes(last, op))
          last = op;
      }
    }
    return Order(list_.ops());
  }

private:
  /// The later of two placed elements, either of which may be none.
  Index later(Index a, Index b) const {
    if (a == kNone)
      return b;
    if (b == kNone)
      return a;
    return list_.precedes(a, b) ? b : a;
  }

  /// The element `op` hoists after, or none when it goes to the back.
  Index placeAfter(Index op) {
    for (Index value : graph_.operands(op))
      --unreadSlots_[graph_.owner(value)];
    if (graph_.isLeaf(op) || graph_.operands(op).empty())
      return kNone;
    Index nearAnchor = kNone;
    for (Index predecessor : graph_.predecessors(op))
      nearAnchor = later(nearAnchor, predecessor);
    Index farAnchor = nearAnchor;
    int64_t freedNear = 0;
    int64_t freedAll = 0;
    ++stamp_;
    for (Index value : graph_.operands(op)) {
      Index owner = graph_.owner(value);
      if (seenAt_[owner] == stamp_)
        continue;
      seenAt_[owner] = stamp_;
      if (graph_.isPinned(owner) || unreadSlots_[owner] != 0)
        continue;
      Index otherReader = lastReader_[owner];
      freedAll += graph_.bytes(owner);
      farAnchor = later(farAnchor, otherReader);
      if (later(otherReader, nearAnchor) == nearAnchor)
        freedNear += graph_.bytes(owner);
    }
    int64_t held = graph_.heldResultBytes(op);
    if (freedNear > held)
      return nearAnchor;
    if (freedAll > held)
      return farAnchor;
    return kNone;
  }

  const ScheduleGraph &graph_;
  const Order &order_;
  OrderList list_;
  /// By owner: operand slots reading the storage not yet swept.
  std::vector<int64_t> unreadSlots_;
  /// By value: the `stamp_` of the last `placeAfter` call that saw it.
  std::vector<uint64_t> seenAt_;
  uint64_t stamp_ = 0;
  /// By owner: the reader placed last in the list so far.
  std::vector<Index> lastReader_;
};

} // namespace

Order hoistOrder(const ScheduleGraph &graph, const Order &order) {
  return Hoister(graph, order).run();
}

} // namespace remat::schedule
