//===- MemoryOrder.h - Internals of the memory-aware schedule --*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What `scheduleForMemory` (SchedulePass.cpp) hands to its phases: the
/// graph as dense arrays (`ScheduleGraph`, built in one sweep over the IR so
/// that the phases and the peak simulations of candidate orders never chase
/// IR pointers), candidate orders over it, the order list the phases build
/// their orders in, and the phases. See docs/schedule.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_PASS_SCHEDULE_MEMORYORDER_H
#define REMAT_LIB_PASS_SCHEDULE_MEMORYORDER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace remat {

class Graph;
class Op;

namespace schedule {

/// Dense number of an op (its position in the input schedule) or of a value
/// (results numbered in input order).
using Index = uint32_t;

/// The ops, values, storage and edges of a graph, indexed densely. Storage
/// follows docs/memory-model.md: a view op's result 0 shares the storage of
/// its operand 0's owner; owners of leaf results and of graph outputs are
/// pinned (live to the end whatever the order).
class ScheduleGraph {
public:
  /// Reads `graph`; stops at the first op that reads a value or depends on an
  /// op not scheduled before it (see `firstUnorderedOp`).
  explicit ScheduleGraph(const Graph &graph);

  /// The first op whose operand or control dependency does not come earlier
  /// in the schedule; null for a topological schedule. The arrays are
  /// incomplete when it is set.
  const Op *firstUnorderedOp() const { return firstUnorderedOp_; }

  Index numOps() const { return ops_.size(); }
  Index numValues() const { return producer_.size(); }
  /// The ops in input order.
  llvm::ArrayRef<Op *> ops() const { return ops_; }

  /// Values read by `op`, one per operand slot.
  llvm::ArrayRef<Index> operands(Index op) const {
    return slice(operandBegin_, operandValues_, op);
  }
  /// Ops reading a result of `op` (one entry per operand slot) followed by
  /// its control users.
  llvm::ArrayRef<Index> readers(Index op) const {
    return slice(readerBegin_, readers_, op);
  }
  /// Producers of `op`'s operands followed by its control dependencies.
  llvm::ArrayRef<Index> predecessors(Index op) const {
    return slice(predecessorBegin_, predecessors_, op);
  }
  /// The first value of `op`'s results; they are numbered consecutively.
  Index firstResult(Index op) const { return resultBegin_[op]; }
  Index numResults(Index op) const {
    return resultBegin_[op + 1] - resultBegin_[op];
  }
  bool isLeaf(Index op) const { return leaf_.test(op); }

  Index producer(Index value) const { return producer_[value]; }
  /// The value owning `value`'s storage.
  Index owner(Index value) const { return owner_[value]; }
  /// Storage bytes of an owner.
  int64_t bytes(Index owner) const { return bytes_[owner]; }
  bool isPinned(Index owner) const { return pinned_.test(owner); }
  /// Operand slots of all ops reading `owner`'s storage, directly or
  /// through views.
  int64_t readSlots(Index owner) const { return readSlots_[owner]; }

  /// Bytes of the storage `op` creates that outlives its step: its owned
  /// results that are read or pinned. Moving `op` moves their first step.
  int64_t heldResultBytes(Index op) const { return heldBytes_[op]; }
  /// Whether exactly one op reads results of `op` or depends on it.
  bool hasSingleReader(Index op) const;

private:
  static llvm::ArrayRef<Index> slice(const std::vector<Index> &begin,
                                     const std::vector<Index> &items,
                                     Index op) {
    return llvm::ArrayRef<Index>(items).slice(begin[op],
                                              begin[op + 1] - begin[op]);
  }

  std::vector<Op *> ops_;
  std::vector<Index> operandBegin_, operandValues_;
  std::vector<Index> readerBegin_, readers_;
  std::vector<Index> predecessorBegin_, predecessors_;
  std::vector<Index> resultBegin_;
  llvm::BitVector leaf_;
  std::vector<int64_t> heldBytes_;
  std::vector<Index> producer_, owner_;
  std::vector<int64_t> bytes_;
  std::vector<int64_t> readSlots_;
  llvm::BitVector pinned_;
  const Op *firstUnorderedOp_ = nullptr;
};

/// A schedule of a ScheduleGraph's ops.
class Order {
public:
  /// The input order.
  explicit Order(Index numOps);
  /// `ops` must be a permutation of the op indices.
  explicit Order(std::vector<Index> ops);

  Index size() const { return ops_.size(); }
  Index opAt(Index step) const { return ops_[step]; }
  Index positionOf(Index op) const { return position_[op]; }
  llvm::ArrayRef<Index> ops() const { return ops_; }

private:
  std::vector<Index> ops_;
  std::vector<Index> position_;
};

/// By owner: the last step at which the storage is live in `order`.
std::vector<Index> lastLiveSteps(const ScheduleGraph &graph,
                                 const Order &order);

/// The peak live bytes of `order`, as `simulateMemory` counts them.
int64_t simulatePeak(const ScheduleGraph &graph, const Order &order);

/// A list of ops and one marker element that inserts next to any element
/// and compares two elements' positions in O(1) (OrderList.cpp); amortized
/// O(log n) per insert. The phases build their orders in it.
class OrderList {
public:
  static constexpr Index kNone = std::numeric_limits<Index>::max();

  /// A list holding only the marker, for ops numbered below `numOps`.
  explicit OrderList(Index numOps);

  /// The marker: the end of the schedule for a phase building it backwards,
  /// the beginning for one building it forwards.
  Index marker() const { return marker_; }

  void pushFront(Index op);
  void pushBack(Index op);
  void insertBefore(Index op, Index next);
  void insertAfter(Index op, Index prev);

  /// Whether element `a` comes before element `b`.
  bool precedes(Index a, Index b) const { return label_[a] < label_[b]; }

  /// The ops in list order, without the marker.
  std::vector<Index> ops() const;

private:
  void link(Index op, Index prev, Index next);
  void spread(Index first, Index last, uint64_t count, unsigned __int128 low,
              unsigned __int128 high);
  void relabelAround(Index element);
  void relabelAll();

  Index marker_;
  std::vector<Index> next_, prev_;
  std::vector<uint64_t> label_;
  Index head_, tail_;
  uint64_t size_ = 0;
  uint64_t spacing_;
};

/// An order that sinks ops to just before their first reader when that
/// frees memory (Sink.cpp).
Order sinkOrder(const ScheduleGraph &graph, const Order &order);
/// An order that hoists last readers of operand storage to just after their
/// latest predecessor when that frees more than it holds (Hoist.cpp).
Order hoistOrder(const ScheduleGraph &graph, const Order &order);

/// What a list schedule judges a ready op by (ListSchedule.cpp).
enum class ListKey {
  /// The bytes it frees net of those it holds.
  ByOps,
  /// The bytes the chain of ops it starts would leave, and how high that
  /// chain would rise on the way.
  ByChains,
};

/// A greedy order: among ready ops, the best by `key`, ties to the earlier
/// in `base` (ListSchedule.cpp).
Order listScheduleOrder(const ScheduleGraph &graph, const Order &base,
                        ListKey key);

/// The fewest ops that must move to turn the input order into `order`: the
/// op count minus the longest run kept in input order. O(N log N).
int64_t countMovedOps(const Order &order);

} // namespace schedule
} // namespace remat

#endif // REMAT_LIB_PASS_SCHEDULE_MEMORYORDER_H
