//===- PassTestSupport.h - Helpers for pass unit tests -----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reading a graph's schedule back as names, for tests of passes that remove
/// or reorder ops.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_PASSTESTSUPPORT_H
#define REMAT_TESTS_UNIT_PASSTESTSUPPORT_H

#include "remat/IR/Graph.h"

#include <string>
#include <vector>

namespace remat::test {

/// An f32 tensor type.
inline Type floatTensor(std::initializer_list<int64_t> shape) {
  return Type(DType::F32, shape);
}

/// The first result name of every op, in schedule order.
inline std::vector<std::string> scheduleNames(const Graph &graph) {
  std::vector<std::string> names;
  for (const Op &op : graph.ops())
    names.push_back(op.numResults() ? op.result()->name().str()
                                    : op.kind().str());
  return names;
}

} // namespace remat::test

#endif // REMAT_TESTS_UNIT_PASSTESTSUPPORT_H
