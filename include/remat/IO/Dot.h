//===- Dot.h - Graphviz output -----------------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes a graph as a graphviz digraph: one node per op labelled with its
/// results, kind and result types; one edge per operand use labelled with the
/// value's name; dashed edges for control dependencies; one cluster per region
/// tag, nested along the region path (`block3/attn` inside `block3`). Leaf ops
/// (inputs, params) are ellipses and ops producing a graph output have a double
/// border. Ops are filled by their role (remat/Analysis/OpRoles.h: forward,
/// kept, recomputed, gradient, ...), explained by a legend cluster of the roles
/// present. The output depends only on the graph, never on addresses.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_DOT_H
#define REMAT_IO_DOT_H

#include "llvm/Support/raw_ostream.h"

namespace remat {

class Graph;

/// Writes `graph` in graphviz's DOT language. Nodes are named `n<i>` after the
/// op's position `i` in the schedule. Linear in ops + edges, plus a sort of the
/// ops by region.
void printDot(const Graph &graph, llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_IO_DOT_H
