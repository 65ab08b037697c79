//===- JointForwardOrder.h - A joint forward in block order -----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The forward pass of a joint graph (AOT Autograd's), reordered so that its
/// blocks follow one another. AOT Autograd lists the parameters' views and
/// the scalar fills at the forward's start, and the updates of the buffers
/// (`copy_` of batch norm's running statistics) at its end. Each such edge
/// spans the whole forward, so no value is a bottleneck by schedule order
/// and the planners that cut the forward at its bottlenecks (`chain`, the AP
/// baselines) see one block (docs/torch.md, "From the joint graph to remat's
/// problem").
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_TRAINING_JOINTFORWARDORDER_H
#define REMAT_SRC_TRAINING_JOINTFORWARDORDER_H

#include "remat/IR/Graph.h"

namespace remat {

/// Reorders the first `forwardOps` ops of `joint`'s schedule, the forward
/// pass whose loss is `joint.outputs()[0]`, and renumbers the graph in
/// schedule order:
/// - the declarations first, as they were;
/// - the loss's ancestors as late as their readers let them (a value that
///   is ready together with others goes last if its own ancestry is the
///   shallowest: a view of a parameter just before its convolution, the
///   labels' ops just before the loss, a shortcut branch just before its
///   add);
/// - every other op that reads one of those (a statistic saved for the
///   backward, a running statistic's update) just after its last operand;
/// - the rest (fills that only the backward reads, and what reads only
///   them) just before its first reader, or before the loss's op.
///
/// Leaves `joint` as it is when its first `forwardOps` ops read a later op
/// or the loss is not among them: `buildJointTrainingGraph` reports that.
/// O((ops + edges) log ops), no recursion.
void orderJointForward(Graph &joint, unsigned forwardOps);

} // namespace remat

#endif // REMAT_SRC_TRAINING_JOINTFORWARDORDER_H
