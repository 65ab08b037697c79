//===- ListSchedule.cpp - Greedy list scheduling by bytes freed -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Kahn's algorithm whose ready ops sit in a max-heap, ties to the earlier op
/// in the base order. For each op, the bytes it frees are the operand
/// storage it is the last unscheduled reader of, and the bytes it holds its
/// read or pinned results. By ops alone, the key is the bytes freed net of
/// those held, as in XLA's list scheduler.
///
/// By chains, a ready op is judged with the chain it starts: the ops that
/// would each be ready right after the previous one, as its only reader (a
/// recomputed segment, an elementwise run), up to `kChainLength` ops. Along
/// the chain the bytes give its residual R (bytes left once it has run) and
/// the highest live bytes P on the way, both relative to now. Chains that
/// free memory (R < 0) run first, the lowest P first: the order of least
/// peak for independent chains that each free memory. Then the lowest R; of
/// equal R, the highest P - R, the order of least peak for two such chains
/// (Liu's rule for trees). A recomputed segment that rises to two
/// activations before leaving one thus runs before a gradient op leaving
/// one, not after it with that gradient live on top.
///
/// An op's freed bytes only grow, when another reader of an operand storage
/// runs and leaves it the last one; that reader is found in O(1) as the XOR
/// of the storage's unscheduled readers and pushed afresh. A key that ops
/// run since its push changed otherwise (a chain member's freed bytes, a
/// chain grown by a predecessor run) is recomputed when popped and pushed
/// again. O(kChainLength (ops + edges) log ops).
///
//===----------------------------------------------------------------------===//

#include "MemoryOrder.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

namespace remat::schedule {
namespace {

/// How many ops of the chain a ready op starts are judged with it.
constexpr unsigned kChainLength = 8;

class ListScheduler {
public:
  ListScheduler(const ScheduleGraph &graph, const Order &base, ListKey key)
      : graph_(graph), base_(base),
        chainLength_(key == ListKey::ByChains ? kChainLength : 1),
        waitingFor_(graph.numOps(), 0), freed_(graph.numOps(), 0),
        readerCount_(graph.numValues(), 0), readerXor_(graph.numValues(), 0),
        seenAt_(graph.numValues(), 0), scheduled_(graph.numOps()) {}

  Order run() {
    countReaders();
    for (Index op = 0; op < graph_.numOps(); ++op)
      waitingFor_[op] = graph_.predecessors(op).size();
    std::vector<Index> order;
    order.reserve(graph_.numOps());
    // By chains, leaves run first: their storage is live from the first
    // step whatever their place, and their readers then compete by the
    // bytes they move, not by when a leaf is taken.
    if (chainLength_ > 1)
      for (Index op : base_.ops())
        if (graph_.isLeaf(op) && waitingFor_[op] == 0)
          run(op, order);
    for (Index op = 0; op < graph_.numOps(); ++op)
      if (graph_.predecessors(op).empty() && !scheduled_.test(op))
        push(op);
    while (!ready_.empty()) {
      auto [priority, negatedPosition, op] = ready_.top();
      ready_.pop();
      if (scheduled_.test(op))
        continue;
      if (Priority current = this->priority(op); priority != current) {
        ready_.push({current, negatedPosition, op});
        continue;
      }
      run(op, order);
    }
    return Order(std::move(order));
  }

private:
  /// The largest runs first (see the file comment): by ops, (freed - held,
  /// 0, 0); by chains, (1, -P, -R) for a chain freeing memory and (0, -R,
  /// P - R) for one that does not.
  using Priority = std::tuple<int64_t, int64_t, int64_t>;

  Priority priority(Index op) const {
    int64_t residual = 0, peak = std::numeric_limits<int64_t>::min();
    for (unsigned length = 1;; ++length) {
      int64_t held = graph_.heldResultBytes(op);
      peak = std::max(peak, residual + held);
      residual += held - freed_[op];
      if (length == chainLength_ || !chainSuccessor(op))
        break;
    }
    if (chainLength_ == 1)
      return {-residual, 0, 0};
    if (residual < 0)
      return {1, -peak, -residual};
    return {0, -residual, peak - residual};
  }

  /// Moves `op` to its only reader when that reader waits for nothing else.
  bool chainSuccessor(Index &op) const {
    if (!graph_.hasSingleReader(op))
      return false;
    Index reader = graph_.readers(op).front();
    for (Index predecessor : graph_.predecessors(reader))
      if (predecessor != op && !scheduled_.test(predecessor))
        return false;
    op = reader;
    return true;
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

  /// Appends `op` to `order`: its storages lose a reader, its readers a
  /// wait.
  void run(Index op, std::vector<Index> &order) {
    scheduled_.set(op);
    order.push_back(op);
    release(op);
  }

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
  /// Ops judged together with a ready op, itself included.
  unsigned chainLength_;
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
  std::priority_queue<std::tuple<Priority, int64_t, Index>> ready_;
};

} // namespace

Order listScheduleOrder(const ScheduleGraph &graph, const Order &base,
                        ListKey key) {
  return ListScheduler(graph, base, key).run();
}

} // namespace remat::schedule
