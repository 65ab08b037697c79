//===- Sink.cpp - Sinking ops towards their first reader ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A forward sweep finds the values whose producer may follow its single
/// reader: moving that producer later must not grow the live bytes, counting
/// the operand storage it is the last to read unless that storage's own
/// producer follows in turn. A reverse sweep then builds the new order from
/// the end: an op goes to the front, before every op placed so far, or, when
/// its held results weigh more than the operand storage whose life the move
/// would extend (followers not counted), to just before its first reader.
/// An op that counted on a follower makes it sink too, so chains of copies
/// move together, and the ops sunk before one reader stay contiguous. Both
/// sweeps are linear in ops + edges, but for the order list's amortized
/// O(log n) relabelling.
///
//===----------------------------------------------------------------------===//

#include "MemoryOrder.h"

namespace remat::schedule {
namespace {

constexpr Index kNone = OrderList::kNone;

class Sinker {
public:
  Sinker(const ScheduleGraph &graph, const Order &order)
      : graph_(graph), order_(order), list_(graph.numOps()),
        follows_(graph.numValues()), promised_(graph.numOps()),
        seenAt_(graph.numValues(), 0), lastReader_(graph.numValues(), kNone) {}

  Order run() {
    findFollowers();
    for (Index step = order_.size(); step-- > 0;) {
      Index op = order_.opAt(step);
      Index next = placeBefore(op);
      if (next == kNone)
        list_.pushFront(op);
      else
        list_.insertBefore(op, next);
      for (Index value : graph_.operands(op)) {
        Index &last = lastReader_[graph_.owner(value)];
        if (last == kNone || list_.precedes(last, op))
          last = op;
      }
    }
    return Order(list_.ops());
  }

private:
  /// Sets `follows_` in schedule order, so that operands are decided first.
  void findFollowers() {
    std::vector<Index> lastStep = lastLiveSteps(graph_, order_);
    for (Index step = 0; step < order_.size(); ++step) {
      Index op = order_.opAt(step);
      if (graph_.isLeaf(op) || !graph_.hasSingleReader(op))
        continue;
      int64_t extended = extendedBytes(
          op, [&](Index owner) { return lastStep[owner] == step; });
      if (graph_.heldResultBytes(op) < extended)
        continue;
      for (Index i = 0; i < graph_.numResults(op); ++i) {
        Index value = graph_.firstResult(op) + i;
        Index owner = graph_.owner(value);
        if (graph_.isPinned(owner))
          continue;
        if (owner == value || follows_.test(graph_.operands(op).front()))
          follows_.set(value);
      }
    }
  }

  /// Bytes of the distinct operand storages of `op` that are not pinned,
  /// are not read through a follower, and satisfy `isExtended`.
  template <typename Predicate>
  int64_t extendedBytes(Index op, Predicate isExtended) {
    ++stamp_;
    int64_t bytes = 0;
    for (Index value : graph_.operands(op)) {
      Index owner = graph_.owner(value);
      if (seenAt_[owner] == stamp_)
        continue;
      seenAt_[owner] = stamp_;
      if (!graph_.isPinned(owner) && !follows_.test(value) &&
          isExtended(owner))
        bytes += graph_.bytes(owner);
    }
    return bytes;
  }

  /// `op`'s first reader in the list; the marker (the end) for an op that
  /// nobody reads but whose storage is pinned (an output); none otherwise.
  Index firstReader(Index op) const {
    Index first = kNone;
    for (Index reader : graph_.readers(op))
      if (first == kNone || list_.precedes(reader, first))
        first = reader;
    if (first != kNone)
      return first;
    for (Index i = 0; i < graph_.numResults(op); ++i)
      if (graph_.isPinned(graph_.owner(graph_.firstResult(op) + i)))
        return list_.marker();
    return kNone;
  }

  /// The element `op` sinks before, or none when it stays in front.
  Index placeBefore(Index op) {
    if (graph_.isLeaf(op))
      return kNone;
    Index next = firstReader(op);
    if (next == kNone)
      return kNone;
    if (!promised_.test(op)) {
      // The storage is extended unless some reader placed so far stays
      // behind `op`'s new place, i.e. is `next` or comes after it.
      int64_t extended = extendedBytes(op, [&](Index owner) {
        Index last = lastReader_[owner];
        return last == kNone || list_.precedes(last, next);
      });
      if (graph_.heldResultBytes(op) <= extended)
        return kNone;
    }
    for (Index value : graph_.operands(op))
      if (follows_.test(value))
        promised_.set(graph_.producer(value));
    return next;
  }

  const ScheduleGraph &graph_;
  const Order &order_;
  OrderList list_;
  /// By value: its storage moves with its producer when the producer's
  /// single reader sinks.
  llvm::BitVector follows_;
  /// By op: a reader counted on this op following it.
  llvm::BitVector promised_;
  /// By value: the `stamp_` of the last `extendedBytes` call that saw it.
  std::vector<uint64_t> seenAt_;
  uint64_t stamp_ = 0;
  /// By owner: the reader placed last in the list so far.
  std::vector<Index> lastReader_;
};

} // namespace

Order sinkOrder(const ScheduleGraph &graph, const Order &order) {
  return Sinker(graph, order).run();
}

} // namespace remat::schedule
