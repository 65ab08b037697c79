//===- XlaPlanner.cpp - The `xla` planner ---------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--planner=xla` with a budget: XLA's HloRematerialization pass over the
/// training graph's node graph (Problem/GraphProblem.h) in autodiff's order, or
/// with `xla=scheduled` in the memory-aware scheduler's, as XLA walks its
/// memory-minimizing sequence. The walk
/// visits the nodes; wherever the live bytes exceed the budget it
/// rematerializes the live forward value of least compute cost per byte
/// freed (XLA's ranking), with a copy before each of its remaining readers,
/// and repeats until the budget is met or no candidate is left. Operands
/// that are dead there are recomputed with it (a block, XLA's
/// `block_size_limit`, up to three deep), and the bytes of the dead
/// operands below the block, which the copies revive, count against it.
/// Copies are never rematerialized again. The candidates sit in a heap whose
/// keys never overrate a candidate, so a walk costs O((N + E + C * F)
/// log N) for C copies of fan-out F, not XLA's O(N) scan per step.
/// docs/planners.md#xla says what differs from XLA.
///
//===----------------------------------------------------------------------===//

#include "Planning/ApBaselines.h"
#include "Planning/Problem/GraphProblem.h"
#include "Planning/Planners.h"

#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>

namespace remat::planners {
namespace {

/// The most nodes rematerialized as one block: a value and its operands
/// dead at the program point, down to this depth (XLA's `block_size_limit`,
/// counted along operand chains).
constexpr int kBlockSize = 3;

/// The walk over slots: node n runs at slot 2n + 1, the copies made before
/// it at slot 2n. A value is live from the slot that computes it to the last
/// slot that reads it.
class XlaWalk {
public:
  XlaWalk(const problem::GraphProblem &graph, int64_t budget)
      : graph_(graph), nodes_(graph.problem.nodes), budget_(budget),
        numForward_(problem::numForward(graph.problem)),
        readers_(problem::readersOf(graph.problem)) {}

  void run();

  /// The copies made, in the order made.
  std::vector<problem::NodeCopy> copies;
  int64_t rematerialized = 0;
  /// The walk's peak after rematerialization, and the first node at which
  /// no candidate was left with the budget still exceeded (-1: none).
  int64_t peak = 0;
  int stuckAt = -1;

private:
  /// One computation of a forward value: a copy, live [start, end].
  struct Copy {
    int start, end;
  };
  /// A heap entry: cost per byte freed, bytes freed (more first), node.
  using Key = std::tuple<double, int64_t, int>;

  static int slotOf(int node) { return 2 * node + 1; }
  /// Contributions at slots up to the current one are in `live_`.
  void applyAt(int slot, int64_t bytes) {
    if (slot <= now_)
      live_ += bytes;
    else
      delta_[slot] += bytes;
  }
  void moveEnd(int &end, int newEnd, int64_t bytes) {
    applyAt(end + 1, bytes);
    applyAt(newEnd + 1, -bytes);
    end = newEnd;
  }
  /// The newest copy of `node` that starts by `slot`, or -1 (the original).
  int copyAt(int node, int slot) const {
    const std::vector<Copy> &list = copies_[node];
    auto it = llvm::partition_point(
        list, [&](const Copy &copy) { return copy.start <= slot; });
    return it == list.begin() ? -1 : int(it - list.begin()) - 1;
  }
  bool isLive(int node) const {
    int copy = node < numForward_ ? copyAt(node, now_) : -1;
    int end = copy < 0 ? originalEnd_[node] : copies_[node][copy].end;
    int start = copy < 0 ? slotOf(node) : copies_[node][copy].start;
    return start <= now_ && now_ <= end;
  }
  /// Whether `node`'s original is live now and may be rematerialized.
  bool isCandidate(int node) const {
    return node < numForward_ && node != current_ &&
           nodes_[node].bytes > 0 && copyAt(node, now_) < 0 &&
           slotOf(node) <= now_ && originalEnd_[node] > now_;
  }
  /// The candidate's key now; nullopt when it frees nothing.
  std::optional<Key> keyOf(int node) const;
  void push(int node) {
    if (std::optional<Key> key = isCandidate(node) ? keyOf(node) : std::nullopt)
      heap_.push(*key);
  }
  /// `node` became live now: it and its live readers may rank higher.
  void revived(int node);
  void pushReaders(int node);
  /// A copy at `slot` reads `dep`: when no computation of it is live
  /// there, `dep` is copied at `slot` too, and so on down the block.
  void readOrCopyAt(int dep, int slot);
  /// The best candidate now, or -1.
  int pickCandidate();
  /// Copies `node` before each of its original's remaining readers.
  void rematerialize(int node);
  /// A copy at `slot` reads `node`: the instance it reads stays live.
  void readAt(int node, int slot);

  const problem::GraphProblem &graph_;
  const std::vector<problem::RematNode> &nodes_;
  int64_t budget_;
  int numForward_;
  std::vector<std::vector<int>> readers_;
  /// By forward node: the slots its original is read at, increasing.
  std::vector<std::vector<int>> originalReaders_;
  std::vector<int> originalEnd_;
  std::vector<std::vector<Copy>> copies_;
  std::vector<int64_t> delta_;
  int64_t live_ = 0;
  int now_ = -1;
  int current_ = -1;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> heap_;
  /// Copies by start slot, earliest first.
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>,
                      std::greater<std::pair<int, int>>>
      copyStarts_;
};

/// `deps` without repeats.
static std::vector<int> distinct(llvm::ArrayRef<int> deps) {
  std::vector<int> result;
  for (int dep : deps)
    if (!llvm::is_contained(result, dep))
      result.push_back(dep);
  return result;
}

std::optional<XlaWalk::Key> XlaWalk::keyOf(int node) const {
  int64_t freed = nodes_[node].bytes, cost = nodes_[node].cost;
  // The block: the value and its dead operands up to kBlockSize deep,
  // recomputed together; the dead operands below it are revived.
  std::vector<std::pair<int, int>> block = {{node, 1}};
  std::vector<int> revived;
  for (size_t i = 0; i < block.size(); ++i) {
    auto [member, size] = block[i];
    for (int dep : distinct(nodes_[member].deps)) {
      if (isLive(dep) || llvm::is_contained(revived, dep) ||
          llvm::any_of(block, [&](auto &other) { return other.first == dep; }))
        continue;
      if (size < kBlockSize) {
        block.push_back({dep, size + 1});
        cost += nodes_[dep].cost;
      } else {
        revived.push_back(dep);
        freed -= nodes_[dep].bytes;
      }
    }
  }
  if (freed <= 0)
    return std::nullopt;
  return Key{double(cost) / double(freed), -freed, node};
}

void XlaWalk::revived(int node) {
  push(node);
  pushReaders(node);
}

void XlaWalk::pushReaders(int node) {
  // Readers rank higher with a live operand, and so do the values whose
  // blocks may reach it.
  // Each reader once, however many paths reach it.
  std::vector<std::pair<int, int>> readers = {{node, 1}};
  llvm::SmallDenseSet<int, 16> seen;
  for (size_t i = 0; i < readers.size(); ++i)
    for (int reader : readers_[readers[i].first])
      if (reader < numForward_ && seen.insert(reader).second) {
        push(reader);
        if (readers[i].second < kBlockSize)
          readers.push_back({reader, readers[i].second + 1});
      }
}

int XlaWalk::pickCandidate() {
  std::vector<int> inUse;
  int best = -1;
  while (!heap_.empty()) {
    Key key = heap_.top();
    heap_.pop();
    int node = std::get<2>(key);
    if (!isCandidate(node))
      continue;
    if (llvm::is_contained(nodes_[current_].deps, node)) {
      inUse.push_back(node);
      continue;
    }
    std::optional<Key> actual = keyOf(node);
    if (!actual)
      continue;
    if (*actual != key) {
      heap_.push(*actual);
      continue;
    }
    best = node;
    break;
  }
  for (int node : inUse)
    push(node);
  return best;
}

void XlaWalk::readAt(int node, int slot) {
  bool wasLive = isLive(node);
  int copy = copyAt(node, slot);
  int64_t bytes = nodes_[node].bytes;
  if (copy >= 0) {
    Copy &instance = copies_[node][copy];
    if (slot > instance.end)
      moveEnd(instance.end, slot, bytes);
  } else {
    std::vector<int> &slots = originalReaders_[node];
    slots.insert(llvm::upper_bound(slots, slot), slot);
    if (slot > originalEnd_[node])
      moveEnd(originalEnd_[node], slot, bytes);
  }
  if (!wasLive && isLive(node))
    revived(node);
}

void XlaWalk::rematerialize(int node) {
  ++rematerialized;
  int64_t bytes = nodes_[node].bytes;
  std::vector<int> &slots = originalReaders_[node];
  auto firstLater = llvm::upper_bound(slots, now_);
  // One copy per step that reads it: slot 2n for readers at 2n and 2n + 1.
  std::vector<Copy> made;
  for (auto it = firstLater; it != slots.end(); ++it) {
    int start = *it & ~1;
    if (!made.empty() && made.back().start == start)
      made.back().end = *it;
    else
      made.push_back({start, *it});
  }
  int newEnd = firstLater == slots.begin() ? slotOf(node) : *(firstLater - 1);
  slots.erase(firstLater, slots.end());
  moveEnd(originalEnd_[node], newEnd, bytes);
  std::vector<Copy> &list = copies_[node];
  auto at = llvm::partition_point(
      list, [&](const Copy &copy) { return copy.start <= made.front().start; });
  list.insert(at, made.begin(), made.end());
  for (const Copy &copy : made) {
    applyAt(copy.start, bytes);
    applyAt(copy.end + 1, -bytes);
    copyStarts_.push({copy.start, node});
    copies.push_back({copy.start / 2, node});
    for (int dep : distinct(nodes_[node].deps))
      readOrCopyAt(dep, copy.start);
  }
}

void XlaWalk::readOrCopyAt(int dep, int slot) {
  std::vector<std::pair<int, int>> work = {{dep, 2}};
  while (!work.empty()) {
    auto [operand, size] = work.back();
    work.pop_back();
    int copy = copyAt(operand, slot);
    int end = copy < 0 ? originalEnd_[operand] : copies_[operand][copy].end;
    if (size > kBlockSize || isLive(operand) || end >= slot) {
      readAt(operand, slot);
      continue;
    }
    std::vector<Copy> &list = copies_[operand];
    auto at = llvm::partition_point(
        list, [&](const Copy &other) { return other.start <= slot; });
    list.insert(at, Copy{slot, slot});
    applyAt(slot, nodes_[operand].bytes);
    applyAt(slot + 1, -nodes_[operand].bytes);
    copyStarts_.push({slot, operand});
    copies.push_back({slot / 2, operand});
    for (int second : distinct(nodes_[operand].deps))
      work.push_back({second, size + 1});
  }
}

void XlaWalk::run() {
  int n = int(nodes_.size());
  delta_.assign(2 * n + 3, 0);
  originalReaders_.resize(numForward_);
  originalEnd_.resize(n);
  copies_.resize(numForward_);
  for (int node = 0; node < n; ++node) {
    int end = slotOf(node);
    for (int reader : readers_[node]) {
      end = std::max(end, slotOf(reader));
      if (node < numForward_)
        originalReaders_[node].push_back(slotOf(reader));
    }
    originalEnd_[node] = end;
    delta_[slotOf(node)] += nodes_[node].bytes;
    delta_[end + 1] -= nodes_[node].bytes;
  }
  peak = graph_.problem.constantBytes;
  for (current_ = 0; current_ < n; ++current_) {
    // The copies made before this node, with the operands copied for them
    // alone, live at its even slot: the walk's peak counts them, though it
    // checks the budget at the node's own slot (docs/planners.md).
    now_ = slotOf(current_) - 1;
    live_ += delta_[now_];
    peak = std::max(peak, graph_.problem.constantBytes + live_);
    now_ = slotOf(current_);
    live_ += delta_[now_];
    while (!copyStarts_.empty() && copyStarts_.top().first <= now_) {
      int node = copyStarts_.top().second;
      copyStarts_.pop();
      pushReaders(node);
    }
    // The previous node's results: the one running now is no candidate.
    if (current_ > 0)
      push(current_ - 1);
    while (graph_.problem.constantBytes + live_ > budget_) {
      int best = pickCandidate();
      if (best < 0) {
        if (stuckAt < 0)
          stuckAt = current_;
        break;
      }
      rematerialize(best);
    }
    peak = std::max(peak, graph_.problem.constantBytes + live_);
  }
}

class XlaPlanner : public Planner {
public:
  explicit XlaPlanner(problem::GraphModel model) : nodes_(model) {}

  absl::StatusOr<RematPlan> plan(const PlanningProblem &problem) override {
    if (!problem.budgetBytes)
      return invalidArgument("planner 'xla' needs a budget (--budget=SIZE)");
    const problem::GraphProblem &graph = nodes_.get(problem);
    REMAT_RETURN_IF_ERROR(problem::validateProblem(graph.problem));
    XlaWalk walk(graph, *problem.budgetBytes);
    walk.run();
    if (problem.onProgress)
      problem.onProgress(fmt::format(
          "xla: {} nodes, {} values rematerialized in {} copies, walk peak "
          "{} (budget {})",
          graph.problem.nodes.size(), walk.rematerialized, walk.copies.size(),
          formatBytes(walk.peak), formatBytes(*problem.budgetBytes)));
    RematPlan plan;
    if (walk.stuckAt >= 0)
      plan.budgetNotes.push_back(fmt::format(
          "xla: no value left to rematerialize at node {} of {}; the walk's "
          "peak stays at {}, over the budget of {}",
          walk.stuckAt, graph.problem.nodes.size(), formatBytes(walk.peak),
          formatBytes(*problem.budgetBytes)));
    plan.modelledPeakBytes = walk.peak;
    if (walk.copies.empty())
      plan.plain = true;
    else
      plan.schedule = problem::stepsOfCopies(graph, std::move(walk.copies));
    return plan;
  }

private:
  /// In the order walked: autodiff's, or the memory-aware scheduler's.
  problem::GraphProblemCache nodes_;
};

} // namespace

void registerXlaPlanner(PlannerRegistry &registry) {
  PlannerInfo info{.name = "xla",
                .summary =
                    "XLA's HloRematerialization: walk the schedule "
                    "(autodiff's order, or 'scheduled': the memory-aware "
                    "scheduler's) and, where the live bytes exceed the "
                    "budget, recompute the live value of least compute per "
                    "byte freed before each later reader",
                .argument = "ORDER",
                .factory = [](std::optional<llvm::StringRef> argument)
                    -> absl::StatusOr<std::unique_ptr<Planner>> {
                  problem::GraphModel model = problem::GraphModel::Emitted;
                  if (argument && *argument == "scheduled")
                    model = problem::GraphModel::Scheduled;
                  else if (argument && *argument != "emitted")
                    return invalidArgument(
                        "planner 'xla' walks 'emitted' (autodiff's order, "
                        "the default) or 'scheduled', got 'xla={}'",
                        argument->str());
                  return std::make_unique<XlaPlanner>(model);
                }};
  info.search.takesBudget = true;
  info.search.calibratedInSearch = true;
  info.search.autoCandidates = [](const Graph &) {
    return std::vector<AutoCandidate>{
        {"xla", autorank::Xla}, {"xla=scheduled", autorank::XlaScheduled}};
  };
  info.search.ilpWarmStarts = {"xla", "xla=scheduled"};
  registry.add(std::move(info));
}

} // namespace remat::planners
