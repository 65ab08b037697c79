//===- Regions.cpp - Recompute tagged regions as a whole ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--strategy=regions[=p,q]`: the ops of each selected region path (and of
/// its descendants, `p/...`) are recomputed as a whole, so only what flows
/// into an outermost selected region, and every candidate outside all of
/// them, is kept. Selected regions must nest: two whose schedule spans
/// overlap must be ancestor and descendant by path.
///
/// Every op's tag is looked up once and every distinct tag walks its '/'
/// prefixes once, so the cost is linear in ops plus the length of the tags,
/// plus a sort of the selected regions.
///
//===----------------------------------------------------------------------===//

#include "Planners.h"

#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <limits>
#include <optional>
#include <tuple>

namespace remat::planners {
namespace {

constexpr unsigned kNone = std::numeric_limits<unsigned>::max();

/// The ops of one path, descendants included, where recomputation happens:
/// leaves and constants are never recomputed, so they do not widen a span.
struct Span {
  unsigned first = kNone;
  unsigned last = 0;
  const Op *firstOp = nullptr;

  bool empty() const { return first == kNone; }
  void add(unsigned position, const Op *op) {
    if (first == kNone || position < first) {
      first = position;
      firstOp = op;
    }
    last = std::max(last, position);
  }
  void add(const Span &other) {
    if (!other.empty()) {
      add(other.first, other.firstOp);
      last = std::max(last, other.last);
    }
  }
};

struct Region {
  std::string path;
  Span span;
  bool tagsSomeOp = false;
  unsigned depth = 0;
};

/// Calls `fn` on `path` and then on each proper '/'-prefix, longest first.
template <typename Fn> void forEachPrefix(llvm::StringRef path, Fn fn) {
  while (true) {
    fn(path);
    size_t slash = path.rfind('/');
    if (slash == llvm::StringRef::npos)
      return;
    path = path.take_front(slash);
  }
}

bool isAncestor(llvm::StringRef ancestor, llvm::StringRef path) {
  return path.size() > ancestor.size() && path.startswith(ancestor) &&
         path[ancestor.size()] == '/';
}


class RegionSelector {
public:
  RegionSelector(const PlanningProblem &problem, const Candidates &candidates)
      : problem_(problem), forward_(*problem.graph), candidates_(candidates),
        tagOfOp_(forward_.opIdBound(), kNone) {}

  absl::StatusOr<RematPlan> run(llvm::ArrayRef<std::string> paths) {
    collectTags();
    selectPaths(paths);
    for (const Region &region : regions_)
      if (!region.tagsSomeOp)
        return invalidArgument("planner 'regions': no op is in region '{}'",
                               region.path);
    REMAT_RETURN_IF_ERROR(checkNesting());

    RematPlan plan;
    plan.kept = keptValues();
    for (const Region &region : regions_)
      plan.regions.push_back({region.path, region.depth});
    llvm::sort(plan.regions, [](const RegionSpan &a, const RegionSpan &b) {
      return std::tie(a.depth, a.path) < std::tie(b.depth, b.path);
    });
    return plan;
  }

private:
  struct Tag {
    llvm::StringRef path;
    Span span;
    /// The shortest selected prefix of `path`, or kNone.
    unsigned outermost = kNone;
  };

  void collectTags() {
    llvm::StringMap<unsigned> tagIndex;
    unsigned position = 0;
    for (const Op &op : forward_.ops()) {
      unsigned index = position++;
      if (op.region().empty() || !problem_.isForward(op))
        continue;
      auto [it, inserted] = tagIndex.try_emplace(op.region(), tags_.size());
      if (inserted)
        tags_.push_back({op.region(), {}, kNone});
      tagOfOp_[op.id()] = it->second;
      if (op.numOperands() != 0)
        tags_[it->second].span.add(index, &op);
    }
  }

  /// Fills `regions_` in the order paths are first met, then gives each its
  /// span, depth, and each tag its outermost selected region.
  void selectPaths(llvm::ArrayRef<std::string> paths) {
    auto select = [&](llvm::StringRef path) {
      auto [it, inserted] = regionIndex_.try_emplace(path, regions_.size());
      if (inserted)
        regions_.push_back({path.str(), {}, false, 0});
    };
    if (paths.empty()) {
      for (const Tag &tag : tags_)
        forEachPrefix(tag.path, select);
    } else {
      for (const std::string &path : paths)
        select(path);
    }
    for (Tag &tag : tags_) {
      forEachPrefix(tag.path, [&](llvm::StringRef prefix) {
        auto it = regionIndex_.find(prefix);
        if (it == regionIndex_.end())
          return;
        Region &region = regions_[it->second];
        region.tagsSomeOp = true;
        region.span.add(tag.span);
        tag.outermost = it->second;
      });
    }
    for (Region &region : regions_) {
      llvm::StringRef path = region.path;
      forEachPrefix(path, [&](llvm::StringRef prefix) {
        if (prefix.size() != path.size() && regionIndex_.count(prefix))
          ++region.depth;
      });
    }
  }

  /// Sweeps the regions by span start with a stack of open spans; each new
  /// span that starts inside the top one must be its descendant by path.
  absl::Status checkNesting() const {
    std::vector<const Region *> bySpan;
    for (const Region &region : regions_)
      if (!region.span.empty())
        bySpan.push_back(&region);
    llvm::sort(bySpan, [](const Region *a, const Region *b) {
      return std::make_tuple(a->span.first, ~a->span.last, a->path.size(),
                             llvm::StringRef(a->path)) <
             std::make_tuple(b->span.first, ~b->span.last, b->path.size(),
                             llvm::StringRef(b->path));
    });
    std::vector<const Region *> open;
    for (const Region *region : bySpan) {
      while (!open.empty() && open.back()->span.last < region->span.first)
        open.pop_back();
      if (!open.empty() && !isAncestor(open.back()->path, region->path))
        return overlapError(*open.back(), *region);
      open.push_back(region);
    }
    return absl::OkStatus();
  }

  /// `earlier` starts no later than `later`, and `later` starts inside
  /// `earlier`'s span: names `later`'s first op and the first op of
  /// `earlier` from there on.
  absl::Status overlapError(const Region &earlier, const Region &later) const {
    const Op *earlierOp = nullptr;
    unsigned position = 0;
    for (const Op &op : forward_.ops()) {
      if (position++ < later.span.first || op.numOperands() == 0)
        continue;
      unsigned tag = tagOfOp_[op.id()];
      if (tag == kNone)
        continue;
      llvm::StringRef path = tags_[tag].path;
      if (path == earlier.path || isAncestor(earlier.path, path)) {
        earlierOp = &op;
        break;
      }
    }
    assert(earlierOp &&
           "the op ending the earlier span follows the later's start");
    return invalidArgument("regions '{}' and '{}' overlap in the schedule but "
                           "do not nest (ops at {} and {})",
                           earlier.path, later.path, opLocation(*earlierOp),
                           opLocation(*later.span.firstOp));
  }

  unsigned outermostOf(const Op &op) const {
    unsigned tag = tagOfOp_[op.id()];
    return tag == kNone ? kNone : tags_[tag].outermost;
  }

  /// Candidates outside every selected region, and those that an on-path op
  /// of an outermost region reads from outside it.
  std::vector<Value *> keptValues() const {
    ValueSet chosen(forward_.valueIdBound());
    for (const Value *value : candidates_.values)
      if (outermostOf(*value->producer()) == kNone)
        chosen.set(value->id());
    for (const Op &op : forward_.ops()) {
      unsigned region = outermostOf(op);
      if (region == kNone || !candidates_.onPathOps.test(op.id()))
        continue;
      for (const Value *operand : op.operands())
        if (candidates_.set.test(operand->id()) &&
            outermostOf(*operand->producer()) != region)
          chosen.set(operand->id());
    }
    return keepChosen(candidates_, chosen);
  }

  const PlanningProblem &problem_;
  /// The training graph; only its forward ops are looked at.
  const Graph &forward_;
  const Candidates &candidates_;
  std::vector<Tag> tags_;
  /// Index into `tags_` of each op's region, or kNone; by op id.
  std::vector<unsigned> tagOfOp_;
  std::vector<Region> regions_;
  llvm::StringMap<unsigned> regionIndex_;
};

} // namespace

absl::StatusOr<RematPlan>
selectRegions(const PlanningProblem &problem, const Candidates &candidates,
              llvm::ArrayRef<std::string> paths) {
  return RegionSelector(problem, candidates).run(paths);
}

void registerRegionsPlanner(PlannerRegistry &registry) {
  PlannerInfo info{
       .name = "regions",
       .summary =
           "Recomputes tagged regions (all, or the PATHs) from their inputs",
       .argument = "PATH,...",
       .factory = [](std::optional<llvm::StringRef> argument)
           -> absl::StatusOr<std::unique_ptr<Planner>> {
         std::vector<std::string> paths;
         if (argument) {
           REMAT_ASSIGN_OR_RETURN(paths, splitPlannerList("regions", *argument));
         }
         return std::make_unique<RulePlanner>(
             [paths](const PlanningProblem &problem,
                     const Candidates &candidates) {
               return selectRegions(problem, candidates, paths);
             });
       }};
  info.search.autoCandidates = autoTriesOnce("regions", autorank::Regions);
  registry.add(std::move(info));
}

} // namespace remat::planners
