//===- ChainDp.cpp - The dynamic program on chains ------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// opt[s][t][kind][pending][leaves][m]: the least cost of running backwards
/// t down to s with m free slots, stage s's input obtained as `kind` says
/// (see `Subproblem`). docs/planning-chain.md gives the moves, the step sizes
/// they take from the DAG's memory accounting, and the schedules that the
/// recurrence does not search.
///
//===----------------------------------------------------------------------===//

#include "ChainDp.h"
#include "ChainInternal.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>

namespace remat::chain {
namespace {

constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max();

/// How a subproblem gets stage s's input (the output of stage s-1), which
/// its forward s and backward s read.
enum InputKind {
  /// The subproblem holds the output until backward s.
  Held = 0,
  /// It takes the output, for free, from the saved activations of stage s-1,
  /// which an outer subproblem holds for backward s-1.
  Rematerialised = 1,
  /// It holds the saved activations of stage s-1 as a checkpoint, takes the
  /// output from them when needed and frees them before backward s.
  HeldSaved = 2,
};
constexpr int kNumInputKinds = 3;

/// The problem in slots, with the step sizes of the recurrence.
class SlotChain {
public:
  SlotChain(const ChainProblem &problem, int64_t slotBytes)
      : problem_(problem), numStages_(int(problem.stages.size())) {
    auto slots = [slotBytes](int64_t bytes) {
      return bytes / slotBytes + (bytes % slotBytes != 0);
    };
    for (int i = 0; i < numStages_; ++i) {
      const ChainStage &stage = problem.stages[i];
      backwardTemp_.push_back(slots(stage.backwardTempBytes));
      output_.push_back(slots(stage.outputBytes));
      gradient_.push_back(slots(stage.gradientBytes));
      paramGradients_.push_back(paramGradients_.back() +
                                slots(stage.paramGradientBytes));
      runs_.emplace_back();
      for (const StageRun &run : stage.leanRuns)
        runs_.back().push_back({slots(run.savedBytes), slots(run.extraBytes),
                                run.extraCost, slots(run.forwardBytes)});
      footprints_.emplace_back();
      for (int r = 0; r <= int(stage.leanRuns.size()); ++r) {
        auto inSlots = [&](bool late) {
          RunFootprint run = forwardRun(problem, i, r, late);
          return RunFootprint{slots(run.savedBytes), slots(run.forwardBytes),
                              run.cost};
        };
        footprints_.back().push_back({inSlots(false), inSlots(true)});
      }
    }
  }

  /// Stage i's forward runs: 0 keeps `saved(i)`, r > 0 the lean run r - 1.
  int numRuns(int i) const { return int(runs_[i].size()) + 1; }
  /// What run r keeps, what its backward holds on top, and what it costs
  /// on top.
  int64_t runSaved(int i, int r) const {
    return footprint(i, r, false).savedBytes;
  }
  int64_t runExtra(int i, int r) const {
    return r == 0 ? 0 : runs_[i][r - 1].extraBytes;
  }
  /// What backward i holds beyond what it reads and makes.
  int64_t backwardTemp(int i) const { return backwardTemp_[i]; }
  int64_t runCost(int i, int r) const {
    return r == 0 ? 0 : runs_[i][r - 1].extraCost;
  }
  /// Run r of stage i as it runs after backward i+1 (`late`) or before it:
  /// what it keeps and holds beyond that while it runs, in slots, and its
  /// FLOPs.
  const RunFootprint &footprint(int i, int r, bool late) const {
    return footprints_[i][r][late];
  }
  /// What run r holds once backward i+1 has run.
  int64_t runKept(int i, int r) const {
    return footprint(i, r, true).savedBytes;
  }

  int numStages() const { return numStages_; }
  int64_t saved(int i) const { return footprint(i, 0, false).savedBytes; }
  int64_t gradient(int i) const { return gradient_[i]; }
  /// The parameter gradients of backwards a..b, live once they have run.
  int64_t paramGradients(int a, int b) const {
    return a <= b ? paramGradients_[b + 1] - paramGradients_[a] : 0;
  }
  /// What backward i makes: the gradient of its input and of its params.
  int64_t backwardResult(int i) const {
    return gradient_[i] + paramGradients(i, i);
  }
  int64_t forwardCost(int i) const { return problem_.stages[i].forwardCost; }
  int64_t backwardCost(int i) const { return problem_.stages[i].backwardCost; }
  /// Stage s's input: the output of stage s-1; the chain's input is constant.
  int64_t input(int s) const { return s > 0 ? output_[s - 1] : 0; }
  /// The gradient that backward t reads: backward t+1's result.
  int64_t incoming(int t) const {
    return t + 1 < numStages_ ? gradient_[t + 1] : 0;
  }
  /// What a subproblem starting at s holds for its input until backward s.
  int64_t held(int s, int kind) const {
    if (s == 0 || kind == Rematerialised)
      return 0;
    return kind == Held ? input(s) : saved(s - 1);
  }
  /// Bytes live for the input while a forward reads it.
  int64_t inputLive(int s, int kind) const {
    return kind == Held ? input(s) : held(s, kind) + input(s);
  }
  /// The peak of the input's last use, by an op that adds `result` bytes
  /// to `other` bytes besides the input: taking the input from held saved
  /// activations frees them before that op.
  int64_t lastInputUse(int s, int kind, int64_t other, int64_t result) const {
    int64_t need = input(s) + other + result;
    if (kind == HeldSaved)
      need = std::max(need, held(s, kind) + input(s) + other);
    return need;
  }
  /// Running forward s (the full run) from its input: input, what it keeps
  /// and what it holds beyond that live.
  int64_t forwardStep(int s, bool late) const {
    const RunFootprint &run = footprint(s, 0, late);
    return input(s) + run.savedBytes + run.forwardBytes;
  }
  /// Taking output i from its saved activations.
  int64_t outputStep(int i) const { return saved(i) + output_[i]; }

private:
  const ChainProblem &problem_;
  int numStages_;
  std::vector<int64_t> backwardTemp_, output_, gradient_;
  /// By stage and run: early and late, in slots (each rounded from its
  /// bytes, never a difference of rounded sizes).
  std::vector<std::vector<std::array<RunFootprint, 2>>> footprints_;
  /// Prefix sums: the parameter gradients of stages before i at [i].
  std::vector<int64_t> paramGradients_ = {0};
  /// Lean runs in slots (`extraCost` stays in FLOPs).
  std::vector<std::vector<StageRun>> runs_;
};

/// A subproblem: run backwards t down to s+1 and, unless `leaves`,
/// backward s; before them the pending backward t+1 when `pending`. At the
/// start the gradient of output t is in memory, or with `pending` the saved
/// activations of stage t+1 and the gradient of output t+1; stage s's input
/// is available as `kind` says. With `leaves` it ends with forward s's saved
/// activations and the gradient of output s in memory, backward s pending on
/// an input that the caller brings back, and its own input source freed.
struct Subproblem {
  int s = 0, t = 0;
  int kind = Held;
  bool pending = false, leaves = false;
};

/// opt as one array: rows of `numSlots + 1` costs per subproblem, for
/// s - 1 <= t (t = s - 1: nothing left but the pending backward), s = L
/// with t = L - 1 included.
class CostTable {
public:
  CostTable(int numStages, int64_t numSlots)
      : numStages_(numStages), width_(numSlots + 1),
        cells_(size_t(numRows(numStages)) * size_t(width_), kInfinite),
        firstFinite_(size_t(numRows(numStages)), 0) {}

  static int64_t numRows(int numStages) {
    int64_t pairs = int64_t(numStages) * (numStages + 1) / 2 + numStages + 1;
    return pairs * kNumInputKinds * 4;
  }
  int64_t *row(const Subproblem &p) {
    return cells_.data() + index(p) * width_;
  }
  int64_t lastSlot() const { return width_ - 1; }
  /// The fewest slots at which `p`'s row is finite (`width_` when it never
  /// is), once `finishRow(p)` has run; 0 before.
  int64_t firstFinite(const Subproblem &p) const {
    return firstFinite_[index(p)];
  }
  /// Records `firstFinite` of `p`'s row, once it is filled.
  void finishRow(const Subproblem &p) {
    const int64_t *cells = row(p);
    int64_t m = 0;
    while (m < width_ && cells[m] == kInfinite)
      ++m;
    firstFinite_[index(p)] = m;
  }

private:
  int64_t index(const Subproblem &p) const {
    int64_t pair = int64_t(p.s) * (numStages_ + 1) -
                   int64_t(p.s) * (p.s - 1) / 2 + (p.t - p.s + 1);
    return ((pair * kNumInputKinds + p.kind) * 2 + p.pending) * 2 + p.leaves;
  }

  int numStages_;
  int64_t width_;
  std::vector<int64_t> cells_;
  std::vector<int64_t> firstFinite_;
};

/// The ways to run a subproblem.
enum class MoveKind {
  /// Nothing left to run.
  Done,
  /// Only the pending backward s (s = t + 1): run it on the input.
  PendingBackward,
  /// Forward s keeping its saved activations; backwards t..s+1 (and the
  /// pending one) with output s taken from them; backward s unless the
  /// subproblem leaves it.
  KeepSaved,
  /// Forwards s..c-1 keeping nothing, hold output c-1 for backwards t..c
  /// (and the pending one); then backwards c-1..s.
  HoldOutput,
  /// Forwards s..c-1 keeping only the saved activations of c-1, which
  /// backwards t..c (and the pending one) take output c-1 from and free;
  /// then backwards c-1..s.
  HoldSaved,
  /// Forwards s..c-1, forward c keeping its saved activations and dropping
  /// output c-1; backwards t..c+1 (and the pending one); then backward c
  /// pending on output c-1, and backwards c-1..s.
  KeepSavedDropInput,
};

/// One way to run a subproblem: feasible from `need` slots, costing `cost`
/// plus the optimum of `child` at m - `shift` slots plus that of `rest` at
/// m - `restShift`, the parameter gradients the child made (each when
/// present).
struct Move {
  MoveKind kind = MoveKind::Done;
  int split = 0;
  /// KeepSaved: the forward run of stage s.
  int run = 0;
  int64_t need = 0;
  int64_t cost = 0;
  std::optional<Subproblem> child;
  int64_t shift = 0;
  std::optional<Subproblem> rest;
  int64_t restShift = 0;
};

/// Fills and reads back the table.
class ChainDp {
public:
  ChainDp(const SlotChain &chain, int64_t numSlots)
      : chain_(chain), table_(chain.numStages(), numSlots) {}

  void fill();
  /// The least cost with `m` free slots (kInfinite when nothing fits).
  int64_t optimum(int64_t m) { return table_.row(whole())[m]; }
  /// The fewest free slots with a finite optimum; -1 when none.
  int64_t fewestSlots() {
    const int64_t *row = table_.row(whole());
    for (int64_t m = 0; m <= table_.lastSlot(); ++m)
      if (row[m] != kInfinite)
        return m;
    return -1;
  }
  /// The optimal schedule with `m` free slots.
  ChainSchedule schedule(int64_t m);

private:
  Subproblem whole() const { return {0, chain_.numStages() - 1, Held}; }
  /// Calls `visit` with every move of `p`, in a fixed order.
  void forEachMove(const Subproblem &p,
                   llvm::function_ref<void(const Move &)> visit);
  /// What `move` costs at m slots; infinite when a part does not fit.
  int64_t costAt(const Move &move, int64_t m) {
    int64_t child = move.child ? table_.row(*move.child)[m - move.shift] : 0;
    int64_t rest =
        move.rest ? table_.row(*move.rest)[m - move.restShift] : 0;
    if (child == kInfinite || rest == kInfinite)
      return kInfinite;
    // validateChain bounds every schedule's cost: no overflow.
    return move.cost + child + rest;
  }
  /// Bytes held at the start for what comes after the subproblem.
  int64_t top(const Subproblem &p) const {
    return p.pending ? chain_.runKept(p.t + 1, 0) + chain_.incoming(p.t + 1)
                     : chain_.incoming(p.t);
  }

  const SlotChain &chain_;
  CostTable table_;
};

void ChainDp::forEachMove(const Subproblem &p,
                          llvm::function_ref<void(const Move &)> visit) {
  auto [s, t, kind, pending, leaves] = p;
  int64_t held = chain_.held(s, kind);
  int64_t onTop = top(p);
  if (s == t + 1) {
    if (leaves)
      return;
    if (!pending)
      return visit({MoveKind::Done});
    Move move{MoveKind::PendingBackward};
    move.need = chain_.lastInputUse(s, kind, onTop + chain_.backwardTemp(s),
                                    chain_.backwardResult(s));
    move.cost = chain_.backwardCost(s);
    return visit(move);
  }
  bool hasChild = s < t || pending;
  // A descent's first forward, s, comes before backward s+1.
  const RunFootprint &first = chain_.footprint(s, 0, false);
  int64_t firstStep =
      onTop + chain_.inputLive(s, kind) + first.savedBytes + first.forwardBytes;
  // The last backward the subproblem runs, and the parameter gradients of
  // backwards c..last, which a child made before the rest runs.
  int lastBackward = t + int(pending);
  auto madeFrom = [&](int c) {
    return chain_.paramGradients(c, lastBackward);
  };

  // A backward that stays in the subproblem may follow a lean run; one left
  // to the caller (`leaves`, and the pending backwards) follows a full run.
  // Without a child, forward s comes after backward s+1: a late run.
  for (int run = 0, e = leaves ? 1 : chain_.numRuns(s); run < e; ++run) {
    const RunFootprint &forwardRun = chain_.footprint(s, run, !hasChild);
    int64_t saved = forwardRun.savedBytes;
    // Backward s+1 has run when backward s does.
    int64_t backward = chain_.runKept(s, run) + chain_.runExtra(s, run) +
                       chain_.backwardTemp(s);
    Move keep{MoveKind::KeepSaved};
    keep.run = run;
    keep.cost = forwardRun.cost +
                (leaves ? 0 : chain_.backwardCost(s) + chain_.runCost(s, run));
    int64_t whileRunning = onTop + forwardRun.forwardBytes;
    int64_t forwardStep = whileRunning + chain_.inputLive(s, kind) + saved;
    if (leaves) {
      // Forward s is the input's last use; the child runs without it.
      keep.need = chain_.lastInputUse(s, kind, whileRunning, saved);
      keep.shift = saved;
    } else if (hasChild) {
      // The input is taken again for backward s.
      keep.need = std::max(
          forwardStep,
          chain_.lastInputUse(s, kind,
                              backward + chain_.incoming(s) + madeFrom(s + 1),
                              chain_.backwardResult(s)));
      keep.shift = held + saved;
    } else {
      // Forward s and backward s read the same input.
      keep.need = std::max(
          {forwardStep, chain_.lastInputUse(s, kind, whileRunning, saved),
           chain_.input(s) + backward + onTop + chain_.backwardResult(s)});
    }
    if (hasChild) {
      keep.child = Subproblem{s + 1, t, Rematerialised, pending, false};
      keep.need = std::max(keep.need, keep.shift);
    }
    visit(keep);
  }

  // The descent's steps after the first: outputs s..c-1 and forwards
  // s+1..c-1 (s+1..c for KeepSavedDropInput).
  int64_t descent = 0, forward = 0;
  for (int c = s + 1; c <= t + int(pending); ++c) {
    forward += chain_.forwardCost(c - 1);
    // Hold h_{c-1} (its steps end at forward c-1) or f_{c-1} (one step
    // more). The child may leave backward c to the rest, unless that would
    // make the rest this very subproblem.
    int64_t savedNeed = std::max({firstStep, onTop + held + descent, held});
    descent = std::max(descent, chain_.outputStep(c - 1));
    int64_t outputNeed = std::max({firstStep, onTop + held + descent, held});
    for (auto [moveKind, childKind, need] :
         {std::tuple(MoveKind::HoldSaved, int(HeldSaved), savedNeed),
          std::tuple(MoveKind::HoldOutput, int(Held), outputNeed)})
      for (bool childLeaves : {false, true}) {
        if (childLeaves && c > t)
          continue;
        Move hold{moveKind, c};
        hold.cost = forward;
        hold.child = Subproblem{c, t, childKind, pending, childLeaves};
        hold.shift = held;
        hold.rest = Subproblem{s, c - 1, kind, childLeaves, leaves};
        hold.restShift = madeFrom(c + int(childLeaves));
        hold.need = std::max(need, hold.restShift);
        visit(hold);
      }

    if (c > t)
      continue;
    // Forward c is late when backward c+1 has run: the last iteration.
    bool late = c == t && !pending;
    descent = std::max(descent, chain_.forwardStep(c, late));
    Move drop{MoveKind::KeepSavedDropInput, c};
    drop.shift = held + chain_.footprint(c, 0, late).savedBytes;
    drop.need = std::max({firstStep, onTop + held + descent, drop.shift});
    drop.cost = forward + chain_.footprint(c, 0, late).cost;
    drop.child = Subproblem{c + 1, t, Rematerialised, pending, false};
    drop.rest = Subproblem{s, c - 1, kind, true, leaves};
    drop.restShift = madeFrom(c + 1);
    drop.need = std::max(drop.need, drop.restShift);
    visit(drop);
  }
}

void ChainDp::fill() {
  int numStages = chain_.numStages();
  int64_t last = table_.lastSlot();
  for (int length = -1; length < numStages; ++length)
    for (int s = 0; s + length < numStages; ++s)
      for (int kind : {Held, Rematerialised, HeldSaved})
        for (bool leaves : {false, true})
          // Pending after non-pending: HoldOutput at c = t + 1 reads the
          // latter.
          for (bool pending : {false, true}) {
            Subproblem p{s, s + length, kind, pending, leaves};
            if (pending && p.t + 1 >= numStages)
              continue;
            int64_t *row = table_.row(p);
            forEachMove(p, [&](const Move &move) {
              if (!move.child) {
                for (int64_t m = move.need; m <= last; ++m)
                  row[m] = std::min(row[m], costAt(move, m));
                return;
              }
              // The hot loop: both parts' rows, shifted, from the first
              // slot count where both are finite (below it every sum is
              // infinite). Plain pointers and compares: most of the
              // planner's time is spent here, in unoptimised builds too.
              int64_t from = std::max(
                  move.need, move.shift + table_.firstFinite(*move.child));
              if (move.rest)
                from = std::max(from, move.restShift +
                                          table_.firstFinite(*move.rest));
              if (from > last)
                return;
              const int64_t *child =
                  table_.row(*move.child) + (from - move.shift);
              const int64_t *rest =
                  move.rest ? table_.row(*move.rest) + (from - move.restShift)
                            : nullptr;
              int64_t *out = row + from;
              int64_t count = last - from + 1, cost = move.cost;
              for (int64_t i = 0; i < count; ++i) {
                int64_t a = child[i], b = rest ? rest[i] : 0;
                if (a != kInfinite && b != kInfinite && cost + a + b < out[i])
                  out[i] = cost + a + b;
              }
            });
            table_.finishRow(p);
          }
}

/// A step of the reconstruction: solve a subproblem or emit an op.
struct Task {
  Subproblem subproblem;
  int64_t slots = 0;
  std::optional<ChainOp> op;
};

ChainSchedule ChainDp::schedule(int64_t m) {
  ChainSchedule result;
  std::vector<Task> stack = {{whole(), m, {}}};
  // Explicit stack: the recursion is as deep as the chain is long. Each
  // subproblem pushes its tasks in reverse order of execution.
  while (!stack.empty()) {
    Task task = stack.back();
    stack.pop_back();
    if (task.op) {
      result.ops.push_back(*task.op);
      continue;
    }
    const Subproblem &p = task.subproblem;
    int64_t m = task.slots;
    int64_t value = table_.row(p)[m];
    assert(value != kInfinite && "reconstructing an infeasible subproblem");
    std::optional<Move> chosen;
    forEachMove(p, [&](const Move &move) {
      if (!chosen && m >= move.need && costAt(move, m) == value)
        chosen = move;
    });
    assert(chosen && "no move reaches the optimum");
    auto emit = [&](ChainOpKind kind, int stage, int run = 0) {
      stack.push_back({{}, 0, ChainOp{kind, stage, 0, run}});
    };
    if (chosen->rest)
      stack.push_back({*chosen->rest, m - chosen->restShift, {}});
    int s = p.s, c = chosen->split;
    switch (chosen->kind) {
    case MoveKind::Done:
      continue;
    case MoveKind::PendingBackward:
      emit(ChainOpKind::Backward, s);
      break;
    case MoveKind::KeepSaved:
      if (!p.leaves) {
        emit(ChainOpKind::Backward, s);
        if (p.kind != Held && s > 0 && chosen->child)
          emit(ChainOpKind::Output, s - 1);
      }
      if (chosen->child)
        stack.push_back({*chosen->child, m - chosen->shift, {}});
      emit(ChainOpKind::Forward, s, chosen->run);
      break;
    case MoveKind::HoldOutput:
    case MoveKind::HoldSaved:
    case MoveKind::KeepSavedDropInput: {
      stack.push_back({*chosen->child, m - chosen->shift, {}});
      int last = chosen->kind == MoveKind::KeepSavedDropInput ? c : c - 1;
      if (chosen->kind != MoveKind::HoldOutput)
        emit(ChainOpKind::Forward, last--);
      for (int i = last; i >= s; --i) {
        emit(ChainOpKind::Output, i);
        emit(ChainOpKind::Forward, i);
      }
      break;
    }
    }
    if (p.kind != Held && s > 0)
      emit(ChainOpKind::Output, s - 1);
  }
  setLastUses(chain_.numStages(), result);
  return result;
}

/// Every size the DP rounds to slots.
std::vector<int64_t> chainSizes(const ChainProblem &problem) {
  std::vector<int64_t> sizes;
  for (int i = 0, e = int(problem.stages.size()); i < e; ++i) {
    const ChainStage &stage = problem.stages[i];
    sizes.insert(sizes.end(),
                 {stage.savedBytes, stage.outputBytes, stage.gradientBytes,
                  stage.paramGradientBytes, stage.forwardTempBytes,
                  stage.backwardTempBytes});
    for (const StageRun &run : stage.leanRuns)
      sizes.insert(sizes.end(),
                   {run.savedBytes, run.extraBytes, run.forwardBytes});
    for (int r = 0; r <= int(stage.leanRuns.size()); ++r) {
      RunFootprint late = forwardRun(problem, i, r, true);
      sizes.insert(sizes.end(), {late.savedBytes, late.forwardBytes});
    }
  }
  return sizes;
}

/// Bytes lost to rounding `sizes` up and `available` down to `unit`.
__int128 roundingLoss(llvm::ArrayRef<int64_t> sizes, int64_t available,
                      int64_t unit) {
  __int128 loss = available % unit;
  for (int64_t size : sizes)
    loss += (unit - size % unit) % unit;
  return loss;
}

/// The slot size: as asked, or the gcd of all sizes; when that would cut
/// the budget left after the constants into more than `maxSlots` slots, the
/// slot of at least `available / maxSlots` bytes that loses the fewest bytes
/// to rounding among that bound, its multiple of the gcd, and the largest
/// sizes' divisors (with `fitSlots`; else the bound itself).
int64_t chooseSlotBytes(const ChainProblem &problem, int64_t available,
                        const DpOptions &options) {
  if (options.slotBytes > 0)
    return options.slotBytes;
  std::vector<int64_t> sizes = chainSizes(problem);
  int64_t unit = 0;
  for (int64_t size : sizes)
    unit = std::gcd(unit, size);
  unit = std::max<int64_t>(unit, 1);
  int64_t maxSlots = std::max<int64_t>(options.maxSlots, 1);
  if (available / unit <= maxSlots)
    return unit;
  int64_t least = available / maxSlots + (available % maxSlots != 0);
  if (!options.fitSlots)
    return least;
  std::vector<int64_t> candidates = {least,
                                     int64_t(llvm::divideCeil(least, unit)) * unit};
  // Divisors of the largest distinct sizes: a slot that divides the sizes
  // held most often wastes nothing on them.
  std::vector<int64_t> distinct = sizes;
  llvm::sort(distinct, std::greater<>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()),
                 distinct.end());
  constexpr size_t kFittedSizes = 64;
  for (size_t i = 0; i < std::min(distinct.size(), kFittedSizes); ++i)
    if (int64_t size = distinct[i]; size >= least)
      candidates.push_back(int64_t(llvm::divideCeil(size, size / least)));
  int64_t best = least;
  __int128 bestLoss = roundingLoss(sizes, available, least);
  for (int64_t candidate : candidates) {
    __int128 loss = roundingLoss(sizes, available, candidate);
    if (loss < bestLoss || (loss == bestLoss && candidate < best)) {
      best = candidate;
      bestLoss = loss;
    }
  }
  return best;
}

/// `solveChainDp`, reading the table back at the fewest slots with the
/// budget's optimum cost or, with `lowestPeak`, at the fewest that admit a
/// schedule.
absl::StatusOr<ChainResult> solve(const ChainProblem &problem,
                                  const DpOptions &options, bool lowestPeak) {
  REMAT_RETURN_IF_ERROR(validateChain(problem));
  ChainResult result;
  int64_t available = problem.budgetBytes - problem.constantBytes;
  if (available < 0)
    return result;
  result.slotBytes = chooseSlotBytes(problem, available, options);
  int64_t numSlots = available / result.slotBytes;
  result.exact = llvm::all_of(chainSizes(problem), [&](int64_t size) {
    return size % result.slotBytes == 0;
  });

  int numStages = int(problem.stages.size());
  int64_t cells = 0;
  if (llvm::MulOverflow(CostTable::numRows(numStages), numSlots + 1,
                        cells) ||
      cells > options.maxCells)
    return invalidArgument(
        "chain dp: {} stages and {} slots need more than the limit of {} "
        "table cells; use larger slots",
        numStages, numSlots + 1, options.maxCells);

  SlotChain chain(problem, result.slotBytes);
  ChainDp dp(chain, numSlots);
  dp.fill();
  int64_t slots = lowestPeak ? dp.fewestSlots() : numSlots;
  if (slots < 0 || dp.optimum(slots) == kInfinite)
    return result;
  int64_t optimum = dp.optimum(slots);
  // The cheapest schedule of least peak: the fewest slots at that cost,
  // which leaves the budget search room.
  while (slots > 0 && dp.optimum(slots - 1) == optimum)
    --slots;
  result.schedule = dp.schedule(slots);
  REMAT_ASSIGN_OR_RETURN(result.cost,
                         evaluateChainSchedule(problem, result.schedule));
  if (result.cost.cost != optimum ||
      result.cost.peakBytes > problem.budgetBytes)
    return absl::InternalError(fmt::format(
        "chain dp: schedule costs {} with a peak of {} bytes, the table said "
        "{} within {}",
        result.cost.cost, result.cost.peakBytes, optimum,
        problem.budgetBytes));
  result.status = ChainStatusKind::Optimal;
  return result;
}

} // namespace

absl::StatusOr<ChainResult> solveChainDp(const ChainProblem &problem,
                                         const DpOptions &options) {
  return solve(problem, options, /*lowestPeak=*/false);
}

absl::StatusOr<ChainResult>
solveChainDpLowestPeak(const ChainProblem &problem, const DpOptions &options) {
  return solve(problem, options, /*lowestPeak=*/true);
}

} // namespace remat::chain
