//===- Recompute.cpp - The recompute rewrite and the `recompute` pass -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The rewrite walks the gradient ops in schedule order. Each operand that is
/// a forward value the plan does not keep is replaced by a copy from the
/// operand's segment; a copy's own operands are kept values (read through one
/// shared stop_gradient each) or earlier copies of the same segment, built on
/// demand with an explicit stack. A segment's copies are created right before
/// its first reader, and its root copies (those reading only kept values) wait
/// for the gradient op that feeds that reader. Nested regions repeat the
/// rewrite one level down, on the copies of the enclosing level. Every step is
/// linear in the ops and edges it touches (docs/recompute.md).
///
//===----------------------------------------------------------------------===//

#include "remat/Pass/Recompute.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/Graph.h"
#include "remat/IR/OpRegistry.h"
#include "remat/Pass/Pass.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"
#include "remat/Support/Status.h"

#include "absl/container/flat_hash_map.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <fmt/format.h>

#include <utility>

namespace remat {
namespace {

/// Whether result `i` of `op` shares operand 0's storage (docs/memory-model.md).
bool isAlias(const Op &op, unsigned i) {
  return i == 0 && op.hasFlag(OpFlagView) && op.numOperands() > 0;
}

/// The value owning `value`'s storage, through view ops.
const Value *storageOwner(const Value *value) {
  while (isAlias(*value->producer(), value->resultIndex()))
    value = value->producer()->operand(0);
  return value;
}

/// The selected regions that enclose each op, by depth.
class RegionTree {
public:
  explicit RegionTree(llvm::ArrayRef<RegionSpan> regions) {
    for (size_t i = 0; i < regions.size(); ++i) {
      index_[regions[i].path] = unsigned(i);
      numLevels_ = std::max(numLevels_, regions[i].depth + 1);
    }
    depthOf_.reserve(regions.size());
    for (const RegionSpan &span : regions)
      depthOf_.push_back(span.depth);
  }

  unsigned numLevels() const { return numLevels_; }

  /// The index of the selected region of depth `depth` enclosing `op`, or -1.
  int enclosing(const Op &op, unsigned depth) const {
    llvm::StringRef tag = op.region();
    size_t end = 0;
    while (!tag.empty()) {
      end = tag.find('/', end);
      llvm::StringRef prefix = tag.substr(0, end);
      auto it = index_.find(prefix);
      if (it != index_.end() && depthOf_[it->second] == depth)
        return int(it->second);
      if (end == llvm::StringRef::npos)
        break;
      ++end;
    }
    return -1;
  }

private:
  llvm::StringMap<unsigned> index_;
  std::vector<unsigned> depthOf_;
  unsigned numLevels_ = 0;
};

/// One application of the rewrite: which ops are the computation to
/// recompute, which of their values stay, and how they split into segments.
struct Level {
  unsigned number = 1;
  /// By op id: ops whose values may be recomputed at this level.
  llvm::BitVector source;
  /// By value id: source values the readers may keep reading.
  llvm::BitVector kept;
  /// By op id: the segment of each source op.
  std::vector<int> segment;
  /// Segment labels by segment number.
  std::vector<std::string> labels;
  /// By segment number: whether it is a region, recomputed from its inputs
  /// alone, rather than a stretch between kept values.
  std::vector<bool> isRegion;
};

class Rematerializer {
public:
  Rematerializer(Graph &graph, unsigned forwardOpIdBound,
                 const CheckpointPlan &plan, const RecomputeOptions &options)
      : graph_(graph), forwardOpIdBound_(forwardOpIdBound), plan_(plan),
        options_(options), regions_(plan.regions),
        planned_(graph.valueIdBound()), reported_(graph.valueIdBound()) {
    for (const Value *kept : plan.kept)
      planned_.set(kept->id());
  }

  absl::StatusOr<RecomputeResult> run() {
    positions_.assign(graph_.opIdBound(), -1);
    origin_.assign(graph_.opIdBound(), nullptr);
    int64_t step = 0;
    for (Op &op : graph_.ops()) {
      positions_[op.id()] = step++;
      origin_[op.id()] = &op;
      if (op.id() >= forwardOpIdBound_)
        readers_.push_back(&op);
    }

    Level level = firstLevel();
    rewrite(level);
    for (unsigned depth = 1; depth < regions_.numLevels(); ++depth) {
      Level nested = nestedLevel(depth);
      rewrite(nested);
    }
    if (regions_.numLevels() > 1)
      eraseDeadOps();
    return finish();
  }

private:
  //===--------------------------------------------------------------------===//
  // Levels
  //===--------------------------------------------------------------------===//

  /// The forward ops, with the plan's kept values; segments are the regions
  /// of depth 0, and elsewhere the stretches between kept values.
  Level firstLevel() {
    Level level;
    level.source.resize(graph_.opIdBound());
    level.kept.resize(graph_.valueIdBound());
    level.segment.assign(graph_.opIdBound(), -1);
    llvm::BitVector keptOwner(graph_.valueIdBound());
    for (const Value *value : plan_.kept)
      keptOwner.set(storageOwner(value)->id());
    for (const Value *output : graph_.outputs())
      keptOwner.set(storageOwner(output)->id());

    std::vector<int> regionSegment(plan_.regions.size(), -1);
    int stretch = -1;
    for (Op &op : graph_.ops()) {
      if (op.id() >= forwardOpIdBound_)
        continue;
      level.source.set(op.id());
      // An op's results are kept together: recomputing one would recompute
      // them all. Views of leaves and constants share their storage.
      bool keep = op.numOperands() == 0 ||
                  llvm::any_of(op.results(), [&](Value *result) {
                    const Value *owner = storageOwner(result);
                    return keptOwner.test(owner->id()) ||
                           owner->producer()->numOperands() == 0;
                  });
      bool planned = llvm::any_of(
          op.results(), [&](Value *result) { return isPlanned(*result); });
      for (Value *result : op.results()) {
        if (keep)
          level.kept.set(result->id());
        if (planned)
          reported_.set(result->id());
      }
      int region = regions_.enclosing(op, 0);
      if (region >= 0) {
        int &seg = regionSegment[region];
        if (seg < 0) {
          seg = int(level.labels.size());
          level.labels.push_back(
              fmt::format("region {}", plan_.regions[region].path));
          level.isRegion.push_back(true);
        }
        level.segment[op.id()] = seg;
      } else {
        if (stretch < 0) {
          stretch = int(level.labels.size());
          level.labels.push_back("from the leaves");
          level.isRegion.push_back(false);
        }
        level.segment[op.id()] = stretch;
      }
      // A kept result closes the stretch: later ops recompute from it.
      for (Value *result : op.results())
        if (op.numOperands() > 0 && level.kept.test(result->id()) &&
            isPlanned(*result)) {
          stretch = int(level.labels.size());
          level.labels.push_back(fmt::format("after %{}", result->name().str()));
          level.isRegion.push_back(false);
          break;
        }
    }
    keepSegmentCrossings(level);
    return level;
  }

  /// Keeps every value of a stretch that a forward op of a later segment
  /// reads, so that a segment's copies never reach into an earlier stretch:
  /// without this, a second chain beside the kept one (an LSTM's cell state
  /// beside its hidden state) would be recomputed from the start in every
  /// segment, and the copies would grow quadratically. A region's values are
  /// exempt: they are recomputed from the region's inputs, which are kept.
  void keepSegmentCrossings(Level &level) {
    for (Op &op : graph_.ops()) {
      if (!isSource(level, op))
        continue;
      for (Value *operand : op.operands()) {
        Op *producer = operand->producer();
        if (!isSource(level, *producer) || level.kept.test(operand->id()))
          continue;
        int from = level.segment[producer->id()];
        if (from == level.segment[op.id()] || level.isRegion[from])
          continue;
        // Its results stay together, and so does the storage it views (up
        // to a value already kept, so that a chain of views costs its length).
        for (Value *value = operand;;) {
          if (value != operand && level.kept.test(value->id()))
            break;
          for (Value *result : value->producer()->results()) {
            level.kept.set(result->id());
            reported_.set(result->id());
          }
          if (!isAlias(*value->producer(), value->resultIndex()))
            break;
          value = value->producer()->operand(0);
        }
      }
    }
  }

  static bool isSource(const Level &level, const Op &op) {
    return op.id() < level.source.size() && level.source.test(op.id());
  }

  bool isPlanned(const Value &value) const { return planned_.test(value.id()); }

  /// The copies of the enclosing level whose originals lie in regions of
  /// `depth`: each such region is recomputed again from its inputs.
  Level nestedLevel(unsigned depth) {
    Level level;
    level.number = depth + 1;
    level.source.resize(graph_.opIdBound());
    level.kept.resize(graph_.valueIdBound());
    level.segment.assign(graph_.opIdBound(), -1);
    // Segments are (segment of the enclosing copy, region) pairs.
    absl::flat_hash_map<std::pair<int, int>, int> segments;
    for (Op *copy : copies_) {
      if (copyLevel_[copy->id()] != depth)
        continue;
      Op *original = origin_[copy->id()];
      int region = regions_.enclosing(*original, depth);
      level.source.set(copy->id());
      if (region < 0) {
        for (Value *result : copy->results())
          level.kept.set(result->id());
        continue;
      }
      auto key = std::make_pair(copySegment_[copy->id()], region);
      auto [it, added] = segments.try_emplace(key, int(level.labels.size()));
      if (added)
        level.labels.push_back(fmt::format("region {}, level {}",
                                           plan_.regions[region].path,
                                           level.number));
      level.segment[copy->id()] = it->second;
    }
    // A region's inputs stay: values made outside it and read inside.
    for (Op *copy : copies_) {
      if (!level.source.test(copy->id()) || level.segment[copy->id()] < 0)
        continue;
      for (Value *operand : copy->operands()) {
        Op *producer = operand->producer();
        bool sameSegment = level.source.test(producer->id()) &&
                           level.segment[producer->id()] ==
                               level.segment[copy->id()];
        if (!sameSegment)
          level.kept.set(operand->id());
      }
    }
    return level;
  }

  //===--------------------------------------------------------------------===//
  // The rewrite
  //===--------------------------------------------------------------------===//

  bool needsCopy(const Level &level, const Value &value) const {
    const Op *producer = value.producer();
    return producer->id() < level.source.size() &&
           level.source.test(producer->id()) && !level.kept.test(value.id());
  }

  void rewrite(const Level &level) {
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

  /// The copy of `value` in `segment`, created before `reader` if needed.
  Value *copyOf(const Level &level, int segment, Value *value, Op *reader) {
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

  Value *lookupCopy(int segment, const Value *value) const {
    auto it = copyMap_.find({segment, value->id()});
    return it == copyMap_.end() ? nullptr : it->second;
  }

  void copyOp(const Level &level, int segment, Op *original, Op *reader) {
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
    llvm::SmallVector<std::string, 2> names;
    for (Value *result : original->results())
      names.push_back(graph_.uniqueName(baseName(*result)));
    Op *copy = graph_.createOp(original->def(), operands, original->attrs(),
                               original->resultTypes(), names, reader);
    copy->setRegion(original->region().str());
    copy->setDevice(original->device().str());
    copy->setLoc(original->loc());
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
    count(segmentsInfo_[index], *copy, +1);
    if (isRoot && segmentsInfo_[index].trigger)
      orderAfter(copy, segmentsInfo_[index].trigger);
  }

  /// Adds (`sign` +1) or removes (-1) `copy` from a segment's figures.
  static void count(RecomputeSegment &info, const Op &copy, int sign) {
    info.numCopies += sign;
    info.flops += sign * opFlops(copy);
    for (unsigned i = 0; i < copy.numResults(); ++i)
      if (!isAlias(copy, i))
        info.bytes += sign * copy.result(i)->type().byteSize();
  }

  /// The name of a copy: the original's with `.re` (made unique).
  static std::string baseName(const Value &value) {
    return (llvm::Twine(value.name()) + ".re").str();
  }

  /// What a copy reads for a value it does not recompute: a shared
  /// stop_gradient of it, so that no gradient could flow back through the
  /// copy into the kept value.
  Value *boundary(Value *kept, Op *reader) {
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

  /// The index of the segment's report entry, created with its trigger at
  /// the segment's first copy.
  int segmentInfo(const Level &level, int segment, Op *reader) {
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

  /// The gradient op the first reader of a segment waits for: the latest
  /// producer of one of its gradient operands, else the gradient op just
  /// before it. Both precede every copy of the segment, so ordering the
  /// copies after it makes no cycle.
  Op *triggerFor(Op *reader) {
    Op *latest = nullptr;
    for (Value *operand : reader->operands()) {
      Op *producer = operand->producer();
      if (!isGradientOp(*producer) || producer->numOperands() == 0)
        continue;
      if (!latest || position(producer) > position(latest))
        latest = producer;
    }
    if (latest)
      return latest;
    for (auto it = reader->getIterator(); it != graph_.ops().begin();)
      if (isGradientOp(*--it))
        return &*it;
    return nullptr;
  }

  /// An op autodiff emitted (not a forward op, copy or helper of the rewrite).
  bool isGradientOp(const Op &op) const {
    return op.id() >= forwardOpIdBound_ && op.id() < positions_.size();
  }

  /// The schedule position of an op that existed before the rewrite.
  int64_t position(const Op *op) const { return positions_[op->id()]; }

  void orderAfter(Op *copy, Op *trigger) {
    if (!options_.forceDataDependency) {
      copy->addControlDep(trigger);
      return;
    }
    forceDataDependency(copy, trigger);
  }

  /// Makes the smallest float operand of `copy` read `operand - 0 * g0^2`,
  /// g0 the first element of the trigger's first float result: exactly
  /// `operand`, bit for bit, while g0 is finite. Falls back to a control
  /// dependency when there is no such pair of values.
  void forceDataDependency(Op *copy, Op *trigger) {
    Value *gradient = nullptr;
    for (Value *result : trigger->results())
      if (isFloatDType(result->type().dtype())) {
        gradient = result;
        break;
      }
    int slot = -1;
    for (unsigned i = 0; gradient && i < copy->numOperands(); ++i) {
      const Type &type = copy->operand(i)->type();
      if (type.dtype() == gradient->type().dtype() &&
          (slot < 0 ||
           type.byteSize() < copy->operand(slot)->type().byteSize()))
        slot = int(i);
    }
    if (slot < 0) {
      copy->addControlDep(trigger);
      return;
    }
    Value *zero = zeroOf(gradient);
    Value *operand = copy->operand(slot);
    Op *dependent = createHelper(
        "sub", {operand, zero}, {}, operand->type(),
        (llvm::Twine(operand->name()) + ".after").str(), copy);
    forced_.set(dependent->result()->id());
    copy->setOperand(slot, dependent->result());
  }

  /// A scalar +0 computed from `gradient`, once per gradient and placed right
  /// after its producer, so that every later copy can read it:
  /// 0 * (g0 * g0) with g0 = reshape(slice(g, 0, 1), []).
  Value *zeroOf(Value *gradient) {
    growTables();
    if (Value *existing = zeroOf_[gradient->id()])
      return existing;
    Op *before = &*std::next(gradient->producer()->getIterator());
    const Type &type = gradient->type();
    Type scalar(type.dtype(), {});
    std::string base = (llvm::Twine(gradient->name()) + ".first").str();
    Value *element = gradient;
    if (type.rank() > 0) {
      std::vector<int64_t> starts(type.rank(), 0), ends(type.rank(), 1);
      Value *slice =
          createHelper("slice", {gradient}, {{"starts", starts}, {"ends", ends}},
                       Type(type.dtype(), std::vector<int64_t>(type.rank(), 1)),
                       base, before)
              ->result();
      element = createHelper("reshape", {slice},
                             {{"shape", std::vector<int64_t>()}}, scalar,
                             base + ".scalar", before)
                    ->result();
    }
    Value *square = createHelper("mul", {element, element}, {}, scalar,
                                 base + ".square", before)
                        ->result();
    Value *zero = createHelper(
                      "constant", {},
                      {{"value", 0.0}, {"dtype", dtypeName(type.dtype()).str()}},
                      scalar, "zero", before)
                      ->result();
    Value *product = createHelper("mul", {square, zero}, {}, scalar,
                                  base + ".zero", before)
                         ->result();
    zeroOf_[gradient->id()] = product;
    return product;
  }

  /// Creates an op of the rewrite's own (not a copy) before `before`.
  Op *createHelper(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
                   AttrList attrs, Type resultType, const std::string &name,
                   Op *before) {
    Op *op = graph_.createOp(*OpRegistry::global().lookup(kind), operands,
                             std::move(attrs), {std::move(resultType)},
                             {graph_.uniqueName(name)}, before);
    growTables();
    created_.push_back(op);
    return op;
  }

  /// Keeps the id-indexed tables as large as the graph's id space.
  void growTables() {
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

  /// After nested levels: erases what the rewrite made and nothing reads any
  /// more (copies of the enclosing level that the nested one replaced, and
  /// their stop_gradients), last first so that chains go together.
  void eraseDeadOps() {
    llvm::DenseSet<const Op *> erased;
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
      Op *op = *it;
      bool used = !op->controlUsers().empty() ||
                  llvm::any_of(op->results(),
                               [](Value *result) { return result->hasUses(); });
      if (used)
        continue;
      for (Op *dep : llvm::SmallVector<Op *, 2>(op->controlDeps().begin(),
                                                 op->controlDeps().end()))
        op->removeControlDep(dep);
      if (copyInfo_[op->id()] >= 0)
        count(segmentsInfo_[copyInfo_[op->id()]], *op, -1);
      erased.insert(op);
      graph_.erase(op);
    }
    auto isErased = [&](Op *op) { return erased.contains(op); };
    llvm::erase_if(copies_, isErased);
    llvm::erase_if(created_, isErased);
  }

  absl::StatusOr<RecomputeResult> finish() {
    RecomputeResult result;
    // Segments in the order their first copies run, nested levels included.
    std::vector<bool> listed(segmentsInfo_.size(), false);
    for (Op &op : graph_.ops()) {
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

  Graph &graph_;
  unsigned forwardOpIdBound_;
  const CheckpointPlan &plan_;
  const RecomputeOptions &options_;
  RegionTree regions_;
  /// The gradient ops, in schedule order, before the rewrite.
  std::vector<Op *> readers_;
  /// Copies by (segment, value id of the original).
  absl::flat_hash_map<std::pair<int, unsigned>, Value *> copyMap_;
  /// Every copy, in creation order.
  std::vector<Op *> copies_;
  /// Every op the rewrite made (copies, stop_gradients, forced
  /// dependencies), in creation order.
  std::vector<Op *> created_;
  /// By op id: the forward op a copy recomputes (itself for forward ops).
  std::vector<Op *> origin_;
  /// By op id: the level that made a copy (0 for other ops).
  std::vector<unsigned> copyLevel_;
  std::vector<int> copySegment_;
  /// By op id: a copy's index into `segmentsInfo_`.
  std::vector<int> copyInfo_;
  /// By value id: the stop_gradient of a kept value, the zero of a gradient.
  std::vector<Value *> stopGradient_;
  std::vector<Value *> zeroOf_;
  /// By value id: results of forced dependencies (`k - 0 * g0^2`).
  llvm::BitVector forced_;
  llvm::BitVector planned_;
  /// By value id: the kept values the result lists: the plan's, their
  /// sibling results, and those kept because a later segment reads them.
  llvm::BitVector reported_;
  /// By op id, for the ops that existed before the rewrite.
  std::vector<int64_t> positions_;
  std::vector<RecomputeSegment> segmentsInfo_;
  /// By segment of the current level: index into `segmentsInfo_`.
  std::vector<int> segmentIndex_;
};

/// An error unless every kept value is a forward value of `graph`.
absl::Status checkPlan(const Graph &graph, unsigned forwardOpIdBound,
                       const CheckpointPlan &plan) {
  for (const Value *kept : plan.kept)
    if (kept->producer()->graph() != &graph ||
        kept->producer()->id() >= forwardOpIdBound)
      return invalidArgument("checkpoint %{} is not a forward value of "
                             "graph @{}",
                             kept->name().str(), graph.name().str());
  return absl::OkStatus();
}

/// `recompute{strategy=S}`: a forward graph becomes its training graph with
/// the strategy's values kept and the rest recomputed.
class RecomputePass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "recompute";
  static constexpr llvm::StringLiteral kSummary =
      "Differentiates the loss and recomputes the forward values a strategy "
      "does not keep";

  RecomputePass(Strategy strategy, RecomputeOptions options)
      : strategy_(std::move(strategy)), options_(std::move(options)) {}

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_ASSIGN_OR_RETURN(CheckpointPlan plan,
                           selectCheckpoints(graph, strategy_));
    if (strategy_.kind == StrategyKind::None) {
      REMAT_ASSIGN_OR_RETURN(AutodiffResult result,
                             differentiate(graph, options_.autodiff));
      return result.numOpsAdded > 0;
    }
    REMAT_ASSIGN_OR_RETURN(RecomputeResult result,
                           recomputeGradients(graph, plan, options_));
    return result.autodiff.numOpsAdded > 0;
  }

private:
  Strategy strategy_;
  RecomputeOptions options_;
};

} // namespace

std::unique_ptr<Pass> createRecomputePass(Strategy strategy,
                                          RecomputeOptions options) {
  return std::make_unique<RecomputePass>(std::move(strategy),
                                         std::move(options));
}

void registerRecomputePass(PassRegistry &registry) {
  registry.add(
      {.argument = RecomputePass::kArgument.str(),
       .summary = RecomputePass::kSummary.str(),
       .options = {{.name = "strategy",
                    .help = "Which forward values to keep: none, all, "
                            "collection, speed, memory, sqrtn, "
                            "\"names=a,b\", regions or \"regions=p,q\"",
                    .kind = PassOptionKind::String,
                    .defaultValue = "sqrtn"},
                   {.name = "force-data-dependency",
                    .help = "Orders recomputation with a data dependency "
                            "instead of control dependencies",
                    .kind = PassOptionKind::Bool,
                    .defaultValue = "false"}},
       .factory = [](const PassOptions &text)
           -> absl::StatusOr<std::unique_ptr<Pass>> {
         REMAT_ASSIGN_OR_RETURN(
             Strategy strategy,
             Strategy::parse(text.getString("strategy", "sqrtn")));
         RecomputeOptions options;
         REMAT_ASSIGN_OR_RETURN(
             options.forceDataDependency,
             text.getBool("force-data-dependency", false));
         return createRecomputePass(std::move(strategy), std::move(options));
       }});
}

absl::StatusOr<RecomputeResult> rematerialize(Graph &training,
                                              unsigned forwardOpIdBound,
                                              const CheckpointPlan &plan,
                                              const RecomputeOptions &options) {
  REMAT_RETURN_IF_ERROR(checkPlan(training, forwardOpIdBound, plan));
  return Rematerializer(training, forwardOpIdBound, plan, options).run();
}

absl::StatusOr<RecomputeResult>
recomputeGradients(Graph &graph, const CheckpointPlan &plan,
                   const RecomputeOptions &options) {
  unsigned forwardOpIdBound = graph.opIdBound();
  REMAT_RETURN_IF_ERROR(checkPlan(graph, forwardOpIdBound, plan));
  REMAT_ASSIGN_OR_RETURN(AutodiffResult gradients,
                         differentiate(graph, options.autodiff));
  REMAT_ASSIGN_OR_RETURN(
      RecomputeResult result,
      rematerialize(graph, forwardOpIdBound, plan, options));
  result.autodiff = std::move(gradients);
  return result;
}

} // namespace remat
