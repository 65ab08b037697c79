//===- Levels.cpp - What each level keeps ---------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What each level of the rewrite recomputes, keeps, and how it splits into
/// segments: stretches between kept values or regions.
///
//===----------------------------------------------------------------------===//

#include "Recompute/Rematerializer.h"

#include <fmt/format.h>

namespace remat::recompute {

RegionTree::RegionTree(llvm::ArrayRef<RegionSpan> regions) {
  for (size_t i = 0; i < regions.size(); ++i) {
    index_[regions[i].path] = unsigned(i);
    numLevels_ = std::max(numLevels_, regions[i].depth + 1);
  }
  depthOf_.reserve(regions.size());
  for (const RegionSpan &span : regions)
    depthOf_.push_back(span.depth);
}

int RegionTree::enclosing(const Op &op, unsigned depth) const {
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

namespace {

bool isSource(const Level &level, const Op &op) {
  return op.id() < level.source.size() && level.source.test(op.id());
}

/// Keeps every value of a stretch that a forward op of a later segment
/// reads, so that a segment's copies never reach into an earlier stretch:
/// without this, a second chain beside the kept one (an LSTM's cell state
/// beside its hidden state) would be recomputed from the start in every
/// segment, and the copies would grow quadratically. A region's values are
/// exempt: they are recomputed from the region's inputs, which are kept.
void keepSegmentCrossings(llvm::ArrayRef<const Op *> forward, Level &level,
                          llvm::BitVector &reported) {
  for (const Op *op : forward) {
    for (const Value *operand : op->operands()) {
      const Op *producer = operand->producer();
      if (!isSource(level, *producer) || level.kept.test(operand->id()))
        continue;
      int from = level.segment[producer->id()];
      if (from == level.segment[op->id()] || level.isRegion[from])
        continue;
      // Its results stay together, and so does the storage it views (up
      // to a value already kept, so that a chain of views costs its length).
      for (const Value *value = operand;;) {
        if (value != operand && level.kept.test(value->id()))
          break;
        for (const Value *result : value->producer()->results()) {
          level.kept.set(result->id());
          reported.set(result->id());
        }
        if (!isAlias(*value->producer(), value->resultIndex()))
          break;
        value = value->producer()->operand(0);
      }
    }
  }
}

} // namespace

Level firstLevel(const Graph &graph, llvm::ArrayRef<const Op *> forward,
                 const RematPlan &plan, const RegionTree &regions,
                 llvm::BitVector &reported) {
  Level level;
  level.source.resize(graph.opIdBound());
  level.kept.resize(graph.valueIdBound());
  level.segment.assign(graph.opIdBound(), -1);
  llvm::BitVector keptOwner(graph.valueIdBound());
  llvm::BitVector planned(graph.valueIdBound());
  for (const Value *value : plan.kept) {
    planned.set(value->id());
    keptOwner.set(storageOwner(value)->id());
  }
  for (const Value *output : graph.outputs())
    keptOwner.set(storageOwner(output)->id());
  auto isPlanned = [&](const Value *value) {
    return planned.test(value->id());
  };

  std::vector<int> regionSegment(plan.regions.size(), -1);
  int stretch = -1;
  for (const Op *op : forward) {
    level.source.set(op->id());
    // An op's results are kept together: recomputing one would recompute
    // them all. Views of leaves and constants share their storage.
    bool keep = op->numOperands() == 0 || !mayRecompute(*op) ||
                llvm::any_of(op->results(), [&](const Value *result) {
                  const Value *owner = storageOwner(result);
                  return keptOwner.test(owner->id()) ||
                         owner->producer()->numOperands() == 0;
                });
    bool isPlannedOp = llvm::any_of(op->results(), isPlanned);
    for (const Value *result : op->results()) {
      if (keep)
        level.kept.set(result->id());
      if (isPlannedOp)
        reported.set(result->id());
    }
    int region = regions.enclosing(*op, 0);
    if (region >= 0) {
      int &seg = regionSegment[region];
      if (seg < 0) {
        seg = int(level.labels.size());
        level.labels.push_back(
            fmt::format("region {}", plan.regions[region].path));
        level.isRegion.push_back(true);
      }
      level.segment[op->id()] = seg;
    } else {
      if (stretch < 0) {
        stretch = int(level.labels.size());
        level.labels.push_back("from the leaves");
        level.isRegion.push_back(false);
      }
      level.segment[op->id()] = stretch;
    }
    // A kept result closes the stretch: later ops recompute from it.
    for (const Value *result : op->results())
      if (op->numOperands() > 0 && level.kept.test(result->id()) &&
          isPlanned(result)) {
        stretch = int(level.labels.size());
        level.labels.push_back(fmt::format("after %{}", result->name().str()));
        level.isRegion.push_back(false);
        break;
      }
  }
  keepSegmentCrossings(forward, level, reported);
  return level;
}

Level Rematerializer::nestedLevel(unsigned depth) {
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
      level.labels.push_back(fmt::format(
          "region {}, level {}", plan_.regions[region].path, level.number));
    level.segment[copy->id()] = it->second;
  }
  // A region's inputs stay: values made outside it and read inside.
  for (Op *copy : copies_) {
    if (!level.source.test(copy->id()) || level.segment[copy->id()] < 0)
      continue;
    for (Value *operand : copy->operands()) {
      Op *producer = operand->producer();
      bool sameSegment =
          level.source.test(producer->id()) &&
          level.segment[producer->id()] == level.segment[copy->id()];
      if (!sameSegment)
        level.kept.set(operand->id());
    }
  }
  return level;
}

} // namespace remat::recompute
