//===- OpRoles.h - What each op of a training graph is for -------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Tells the forward ops of a training graph from its gradient ops and from
/// the copies the recompute rewrite made, using only what a graph file keeps:
/// data edges, the `<x>.grad` outputs autodiff adds and the names the rewrite
/// gives its copies (docs/pictures.md). `remat dot` colours ops by role and
/// the memory timeline splits live bytes by it. Linear in ops + edges.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_OPROLES_H
#define REMAT_ANALYSIS_OPROLES_H

#include <cstdint>
#include <vector>

namespace remat {

class Graph;
class Op;
struct Liveness;

enum class OpRoleKind : uint8_t {
  Input,
  Param,
  /// Computes an output that is not a gradient (the loss, metrics).
  Forward,
  /// A forward op whose storage a gradient op or a copy reads: a value kept
  /// for the backward pass.
  Kept,
  /// A copy of a forward op made by the recompute rewrite (`%v.re`), or one
  /// of the stop_gradient boundaries (`%v.sg`) and forced dependencies
  /// (`%v.after`) that feed copies.
  Recomputed,
  /// Feeds only gradient outputs (`<x>.grad` for a value `x` of the graph).
  Gradient,
  /// Feeds no output.
  Unused,
};

/// A lowercase name of `role` for legends and docs (`kept`, `recomputed`).
const char *opRoleName(OpRoleKind role);

/// The role of every op of `graph`, indexed by op id (entries of ids not in
/// the graph are `Unused`). `liveness` must be `computeLiveness(graph)`; it
/// tells which storage a view reads. The graph must be verified.
std::vector<OpRoleKind> classifyOps(const Graph &graph,
                                    const Liveness &liveness);

/// Whether `op` is one of the recompute rewrite's ops by its name and shape:
/// result 0 named `<v>.re` (optionally `.N`, as `Graph::uniqueName` makes
/// names unique) for a value `v` produced by an op of the same kind, or a
/// `stop_gradient` named `<v>.sg` / a `sub` named `<v>.after` whose operand
/// 0 is `v`.
bool isRecomputeOp(const Op &op);

} // namespace remat

#endif // REMAT_ANALYSIS_OPROLES_H
