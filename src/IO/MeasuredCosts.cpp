//===- MeasuredCosts.cpp - Op costs a runtime measured --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/MeasuredCosts.h"

#include "remat/Analysis/Cost.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

namespace remat {
namespace {

/// Longer than any step of a training graph; keeps nanoseconds in int64.
constexpr double kMaxNodeSeconds = 1e6;

absl::Status profileError(llvm::StringRef path, const std::string &message) {
  return invalidArgument("{}: error: {}", path.str(), message);
}

/// The op whose first result's name is `node`'s longest prefix ending at a
/// separator the export or a runtime puts after it, or null.
Op *attributedOp(llvm::StringRef node, const llvm::StringMap<Op *> &byName) {
  for (size_t end = node.size(); end > 0; --end) {
    if (end < node.size() && !llvm::StringRef("._/").contains(node[end]))
      continue;
    auto it = byName.find(node.take_front(end));
    if (it != byName.end())
      return it->second;
  }
  return nullptr;
}

} // namespace

absl::StatusOr<NodeProfile> readNodeProfile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return profileError(path, "cannot read file: " +
                                  buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    // LLVM's message is "[line:column, byte=N]: what".
    std::string message = llvm::toString(json.takeError());
    llvm::StringRef text(message);
    if (text.consume_front("[")) {
      auto [where, what] = text.split("]: ");
      return invalidArgument("{}:{}: error: {}", path.str(),
                             where.split(',').first.str(), what.str());
    }
    return profileError(path, message);
  }
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *nodes = root ? root->getArray("nodes") : nullptr;
  if (!nodes)
    return profileError(path, "expected an object with an array \"nodes\" "
                              "(the profile `ort-run --profile` writes)");
  NodeProfile result{path.str(), {}};
  result.nodes.reserve(nodes->size());
  for (size_t i = 0; i < nodes->size(); ++i) {
    const llvm::json::Object *node = (*nodes)[i].getAsObject();
    llvm::Optional<llvm::StringRef> name;
    llvm::Optional<double> seconds;
    if (node) {
      name = node->getString("name");
      seconds = node->getNumber("seconds");
    }
    if (!name || !seconds)
      return profileError(path, fmt::format("nodes[{}] needs a string "
                                            "\"name\" and a number \"seconds\"",
                                            i));
    if (!(*seconds >= 0 && *seconds <= kMaxNodeSeconds))
      return profileError(
          path, fmt::format("nodes[{}] ('{}') has {} seconds, expected 0 to "
                            "{:g}",
                            i, name->str(), *seconds, kMaxNodeSeconds));
    result.nodes.push_back({name->str(), *seconds});
  }
  return result;
}

absl::StatusOr<MeasuredCostSummary>
applyMeasuredCosts(Graph &graph, const NodeProfile &profile) {
  llvm::StringMap<Op *> byName;
  for (Op &op : graph.ops())
    if (!op.def().hasFlag(OpFlagLeaf) && op.numResults() > 0 &&
        !op.result(0)->name().empty())
      byName.try_emplace(op.result(0)->name(), &op);

  MeasuredCostSummary summary;
  llvm::DenseMap<const Op *, double> seconds;
  for (const NodeSeconds &node : profile.nodes) {
    if (Op *op = attributedOp(node.name, byName)) {
      seconds[op] += node.seconds;
      summary.secondsMeasured += node.seconds;
      continue;
    }
    if (summary.nodesUnattributed++ == 0 || node.name < summary.firstUnattributed)
      summary.firstUnattributed = node.name;
    summary.secondsUnattributed += node.seconds;
  }
  if (seconds.empty())
    return profileError(
        profile.path,
        fmt::format("the profile names none of the {} ops of @{}: was it "
                    "measured on the export of this training graph?",
                    byName.size(), graph.name().str()));

  // Ops no node names are costed at the measured ops' time per FLOP (summed
  // as integers: the map's order is the ops' addresses').
  int64_t measuredFlops = 0;
  for (const auto &[op, time] : seconds)
    measuredFlops += opFlops(*op);
  double nanosPerFlop = measuredFlops > 0 ? summary.secondsMeasured * 1e9 /
                                                double(measuredFlops)
                                          : 0;
  for (Op &op : graph.ops()) {
    if (op.def().hasFlag(OpFlagLeaf))
      continue;
    auto it = seconds.find(&op);
    int64_t nanos;
    if (it != seconds.end()) {
      ++summary.opsMeasured;
      nanos = std::max<int64_t>(1, std::llround(it->second * 1e9));
    } else {
      int64_t flops = opFlops(op);
      if (flops == 0)
        continue;
      if (summary.opsEstimated++ == 0)
        summary.firstEstimated = op.describe();
      nanos = std::llround(double(flops) * nanosPerFlop);
    }
    op.setAttr(kCostAttr, Attribute(nanos));
  }
  return summary;
}

} // namespace remat
