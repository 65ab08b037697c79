//===- Checkpoints.h - Which forward values to keep ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Checkpoint selection: a strategy names the forward values that the
/// backward pass keeps; the recompute rewrite (remat/Pass/Recompute.h)
/// recomputes every other forward value it needs. Inputs, params and results
/// of operand-less ops (constants) are always kept and never listed. See
/// docs/strategies.md.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_CHECKPOINTS_H
#define REMAT_PASS_CHECKPOINTS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace remat {

class Graph;
class Value;

enum class StrategyKind {
  /// Plain autodiff: keep every value the backward pass reads.
  None,
  /// Keep nothing but the leaves: recompute every forward value.
  All,
  /// The `checkpoints` collection and the results of `checkpoint` ops.
  Collection,
  /// Values whose names contain one of `Strategy::names`.
  Names,
  /// Results of matmul and convolution ops.
  Speed,
  /// About sqrt(N) bottlenecks, spread along the schedule.
  Memory,
  /// Chen et al.'s sqrt(N) segments of the linearised graph.
  SqrtN,
  /// Ops tagged with one of the region paths in `Strategy::names` (all
  /// tagged ops when empty) are recomputed as a whole, keeping only each
  /// region's inputs.
  Regions,
};

/// A parsed `--strategy=` value: `none`, `all`, `collection`, `speed`,
/// `memory`, `sqrtn`, `names=a,b,...`, `regions` or `regions=p,q,...`.
struct Strategy {
  StrategyKind kind = StrategyKind::None;
  /// The substrings of `names=`, or the region paths of `regions=`.
  std::vector<std::string> names;

  /// Errors name the unknown strategy and list the known ones.
  static absl::StatusOr<Strategy> parse(llvm::StringRef text);
  /// The text `parse` reads back.
  std::string str() const;
};

/// The spellings `Strategy::parse` accepts, for help and errors.
std::vector<std::string> strategySpellings();

/// A region selected for recomputation.
struct RegionSpan {
  /// The region path, such as "block3/attn".
  std::string path;
  /// How many '/'-separated components enclose it among the selected regions
  /// (0 for an outermost one).
  unsigned depth = 0;
};

/// What a strategy chose.
struct CheckpointPlan {
  /// The kept forward values, in schedule order, without leaves, constants
  /// and the loss.
  std::vector<Value *> kept;
  /// For `regions`: the selected regions, outermost first, then by path.
  std::vector<RegionSpan> regions;
};

/// Runs `strategy` on the verified forward graph `forward` (loss = output 0).
/// Errors: `names=` substrings that match nothing, `memory` finding no
/// bottleneck (suggesting the other strategies), region paths that tag no op,
/// regions whose schedule spans overlap without nesting.
absl::StatusOr<CheckpointPlan> selectCheckpoints(const Graph &forward,
                                                 const Strategy &strategy);

} // namespace remat

#endif // REMAT_PASS_CHECKPOINTS_H
