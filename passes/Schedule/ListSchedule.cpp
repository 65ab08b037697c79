//===- ListSchedule.cpp - Greedy list scheduling by bytes freed -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Kahn's algorithm whose ready ops sit in a max-heap keyed by the bytes
/// running them would free (operand storage they are the last unscheduled
/// reader of) minus the bytes they hold (their read or pinned results), ties
/// to the earlier op in the base order, as XLA's list scheduler does. An
/// op's freed bytes only grow, when another reader of an operand storage
/// runs and leaves it the last one; that reader is found in O(1) as the XOR
/// of the storage's unscheduled readers, and a fresh heap entry supersedes
/// the stale one. O((ops + edges) log ops).
///
//===----------------------------------------------------------------------===//

#include "MemoryOrder.h"

#include <queue>
#include <tuple>

namespace remat::schedule {
namespace {

class ListScheduler {
public:
  ListScheduler(const ScheduleGraph &graph, const Order &base)
      : graph_(graph), base_(base), waitingFor_(graph.numOps(), 0),
        freed_(graph.numOps(), 0), readerCount_(graph.numValues(), 0),
        readerXor_(graph.numValues(), 0), seenAt_(graph.numValues(), 0),
        scheduled_(graph.numOps()) {}

  Order run() {
    countReaders();
    for (Index op = 0; op < graph_.numOps(); ++op) {
      waitingFor_[op] = graph_.predecessors(op).size();
      if (waitingFor_[op] == 0)
        push(op);
    }
    std::vector<Index> order;
    order.reserve(graph_.numOps());
    while (!ready_.empty()) {
      auto [priority, negatedPosition, op] = ready_.top();
      ready_.pop();
      if (scheduled_.test(op) || priority != this->priority(op))
        continue;
      scheduled_.set(op);
      order.push_back(op);
      release(op);
    }
    return Order(std::move(order));
  }

private:
  int64_t priority(Index op) const {
    return freed_[op] - graph_.heldResultBytes(op);
  }

  void push(Index op) {
    ready_.push({priority(op), -int64_t(base_.positionOf(op)), op});
  }

  /// Calls `fn` once per distinct operand storage of `op` that can be freed.
  template <typename Fn> void forEachFreeableOwner(Index op, Fn fn) {
    ++stamp_;
    for (Index value : graph_.operands(op)) {
      Index owner = graph_.owner(value);
      if (seenAt_[owner] == stamp_ || graph_.isPinned(owner))
        continue;
      seenAt_[owner] = stamp_;
      fn(owner);
    }
  }

  void countReaders() {
    for (Index op = 0; op < graph_.numOps(); ++op)
      forEachFreeableOwner(op, [&](Index owner) {
        ++readerCount_[owner];
        readerXor_[owner] ^= op;
      });
    for (Index owner = 0; owner < graph_.numValues(); ++owner)
      if (readerCount_[owner] == 1)
        freed_[readerXor_[owner]] += graph_.bytes(owner);
  }

  /// Marks `op` as run: its storages lose a reader, its readers a wait.
  void release(Index op) {
    forEachFreeableOwner(op, [&](Index owner) {
      readerXor_[owner] ^= op;
      if (--readerCount_[owner] != 1)
        return;
      Index lastReader = readerXor_[owner];
      freed_[lastReader] += graph_.bytes(owner);
      if (waitingFor_[lastReader] == 0)
        push(lastReader);
    });
    for (Index reader : graph_.readers(op))
      if (--waitingFor_[reader] == 0)
        push(reader);
  }

  const ScheduleGraph &graph_;
  const Order &base_;
  /// By op: predecessor entries not yet run.
  std::vector<Index> waitingFor_;
  /// By op: bytes of the storages it is the last unscheduled reader of.
  std::vector<int64_t> freed_;
  /// By owner: distinct unscheduled reader ops, and the XOR of their indices.
  std::vector<Index> readerCount_;
  std::vector<Index> readerXor_;
  /// By value: the `stamp_` of the last `forEachFreeableOwner` that saw it.
  std::vector<uint64_t> seenAt_;
  uint64_t stamp_ = 0;
  llvm::BitVector scheduled_;
  /// (priority, -base position, op); the largest first.
  std::priority_queue<std::tuple<int64_t, int64_t, Index>> ready_;
};

} // namespace

Order listScheduleOrder(const ScheduleGraph &graph, const Order &base) {
  return ListScheduler(graph, base).run();
}

} // namespace remat::schedule
