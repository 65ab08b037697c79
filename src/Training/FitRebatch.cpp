//===- FitRebatch.cpp - A file's forward graph at other batch sizes -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat fit FILE` scales the batch of a graph it did not generate. The
/// batch and the values that carry it come from the analysis the
/// data-parallel pass uses (remat/Analysis/Batch.h), run once on the graph
/// as written; each batch size then gets a copy whose inputs, batch-leading
/// shape attributes and inferred result types are changed in place, so names,
/// regions, devices, collections and control dependencies stay as they were.
///
//===----------------------------------------------------------------------===//

#include "remat/Training/Fit.h"

#include "remat/Analysis/Batch.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/Support/Status.h"

#include <fmt/format.h>

namespace remat {
namespace {

/// A copy of the graph as written, whose ids are dense in schedule order
/// (as `Graph::clone` numbers them), and the values carrying its batch.
struct BatchedGraph {
  BatchedGraph(std::unique_ptr<Graph> copy, int64_t batch)
      : graph(std::move(copy)), tracker(*graph, batch) {
    for (const Op &op : graph->ops())
      if (!op.hasFlag(OpFlagLeaf))
        tracker.visit(op);
  }

  std::unique_ptr<Graph> graph;
  BatchTracker tracker;
};

absl::StatusOr<std::unique_ptr<Graph>> buildAt(const BatchedGraph &source,
                                               int64_t batch) {
  std::unique_ptr<Graph> graph = source.graph->clone();
  for (Value *input : graph->inputs()) {
    std::vector<int64_t> shape(input->type().shape().begin(),
                               input->type().shape().end());
    shape[0] = batch;
    input->setType(Type(input->type().dtype(), shape));
  }
  // A clone of a graph with dense ids has the same ids, so the source's
  // tracker applies to the copy.
  for (Op &op : graph->ops()) {
    if (op.hasFlag(OpFlagLeaf))
      continue;
    AttrList attrs = source.tracker.rebatchedAttrs(op, batch);
    if (attrs != op.attrs())
      for (NamedAttr &attr : attrs)
        op.setAttr(attr.name, std::move(attr.value));
    absl::StatusOr<llvm::SmallVector<Type, 1>> types =
        inferResultTypes(op.def(), op.operandTypes(), op.attrs());
    if (!types.ok())
      return opError(op,
                     fmt::format("fit: cannot build the graph at batch "
                                 "{}: {}",
                                 batch, std::string(types.status().message())));
    for (unsigned i = 0; i < op.numResults(); ++i)
      op.result(i)->setType((*types)[i]);
  }
  REMAT_RETURN_IF_ERROR(verify(*graph));
  return graph;
}

} // namespace

absl::StatusOr<BatchedGraphFn> rebatchingBuilder(const Graph &graph) {
  REMAT_ASSIGN_OR_RETURN(int64_t batch, findBatchDim(graph, "fit"));
  auto source = std::make_shared<const BatchedGraph>(graph.clone(), batch);
  return BatchedGraphFn(
      [source](int64_t size) { return buildAt(*source, size); });
}

} // namespace remat
