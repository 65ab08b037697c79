//===- Dot.cpp - Graphviz output --------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/Dot.h"

#include "remat/Analysis/Memory.h"
#include "remat/Analysis/OpRoles.h"
#include "remat/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace remat {
namespace {

/// A DOT string literal holding `text`; `\n` in `text` stays a line break.
std::string quoted(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

/// The region paths of a graph as a tree (`a/b` under `a`), numbered in
/// preorder with children in order of first appearance in the schedule.
class RegionTree {
public:
  RegionTree() { nodes_.push_back({}); }

  /// The node for `path`, creating it and its ancestors; 0 (the root) for "".
  unsigned nodeFor(llvm::StringRef path) {
    if (path.empty())
      return 0;
    auto it = byPath_.find(path);
    if (it != byPath_.end())
      return it->second;
    unsigned node = 0;
    size_t componentStart = 0;
    while (true) {
      size_t slash = path.find('/', componentStart);
      auto [slot, inserted] =
          byPath_.try_emplace(path.substr(0, slash), nodes_.size());
      if (inserted) {
        nodes_.push_back({path.slice(componentStart, slash).str(), node});
        nodes_[node].children.push_back(slot->second);
      }
      node = slot->second;
      if (slash == llvm::StringRef::npos)
        break;
      componentStart = slash + 1;
    }
    return node;
  }

  /// Numbers the nodes in preorder; call once every node exists.
  void rank() {
    ranks_.assign(nodes_.size(), 0);
    std::vector<unsigned> stack = {0};
    unsigned next = 0;
    while (!stack.empty()) {
      unsigned node = stack.back();
      stack.pop_back();
      ranks_[node] = next++;
      for (unsigned child : llvm::reverse(nodes_[node].children))
        stack.push_back(child);
    }
  }

  unsigned rankOf(unsigned node) const { return ranks_[node]; }
  unsigned parent(unsigned node) const { return nodes_[node].parent; }
  llvm::StringRef name(unsigned node) const { return nodes_[node].name; }

private:
  struct Node {
    std::string name;
    unsigned parent = 0;
    std::vector<unsigned> children;
  };
  std::vector<Node> nodes_;
  llvm::StringMap<unsigned> byPath_;
  std::vector<unsigned> ranks_;
};

/// Fill colours by `OpRoleKind`, in legend order.
struct RoleColour {
  OpRoleKind role;
  const char *colour;
};
constexpr RoleColour kRoleColours[] = {
    {OpRoleKind::Input, "#eeeeee"},      {OpRoleKind::Param, "#d4d4d4"},
    {OpRoleKind::Forward, "#d6ecfa"},    {OpRoleKind::Kept, "#56b4e9"},
    {OpRoleKind::Recomputed, "#8fd9b6"}, {OpRoleKind::Gradient, "#f6c680"},
    {OpRoleKind::Unused, "#ffffff"},
};

const char *roleColour(OpRoleKind role) {
  for (const RoleColour &entry : kRoleColours)
    if (entry.role == role)
      return entry.colour;
  llvm_unreachable("op role without a colour");
}

/// A cluster with one node per role present in `roles`.
void printLegend(llvm::ArrayRef<OpRoleKind> roles, llvm::raw_ostream &os) {
  std::vector<bool> present(std::size(kRoleColours), false);
  for (OpRoleKind role : roles)
    present[unsigned(role)] = true;
  os << "  subgraph \"cluster_legend\" {\n";
  os << "    label = \"legend\";\n";
  for (const RoleColour &entry : kRoleColours)
    if (present[unsigned(entry.role)])
      os << "    legend_" << opRoleName(entry.role) << " [label="
         << quoted(opRoleName(entry.role)) << ", style=filled, fillcolor="
         << quoted(entry.colour) << "];\n";
  os << "  }\n";
}

std::string nodeLabel(const Op &op) {
  std::string label = op.describe();
  if (op.numResults() != 0) {
    std::vector<std::string> types;
    for (const Type &type : op.resultTypes())
      types.push_back(type.str());
    label += fmt::format("\n{}", fmt::join(types, ", "));
  }
  if (!op.device().empty())
    label += fmt::format("\non {}", op.device().str());
  return label;
}

} // namespace

void printDot(const Graph &graph, llvm::raw_ostream &os) {
  std::vector<const Op *> schedule;
  schedule.reserve(graph.numOps());
  std::vector<unsigned> position(graph.opIdBound(), 0);
  for (const Op &op : graph.ops()) {
    position[op.id()] = schedule.size();
    schedule.push_back(&op);
  }
  std::vector<OpRoleKind> roles = classifyOps(graph, computeLiveness(graph));
  std::vector<bool> producesOutput(graph.opIdBound(), false);
  for (const Value *output : graph.outputs())
    producesOutput[output->producer()->id()] = true;

  RegionTree regions;
  std::vector<unsigned> regionOf(schedule.size());
  for (unsigned i = 0; i < schedule.size(); ++i)
    regionOf[i] = regions.nodeFor(schedule[i]->region());
  regions.rank();
  std::vector<unsigned> emitOrder(schedule.size());
  for (unsigned i = 0; i < schedule.size(); ++i)
    emitOrder[i] = i;
  llvm::stable_sort(emitOrder, [&](unsigned a, unsigned b) {
    return regions.rankOf(regionOf[a]) < regions.rankOf(regionOf[b]);
  });

  os << "digraph " << quoted(graph.name()) << " {\n";
  os << "  node [shape=box, fontname=\"monospace\"];\n";
  os << "  edge [fontname=\"monospace\"];\n";
  // Clusters open along the region path of each op and close when an op
  // outside them comes; preorder makes every cluster's ops contiguous.
  std::vector<unsigned> open = {0};
  auto indent = [&] { return std::string(2 * open.size(), ' '); };
  for (unsigned i : emitOrder) {
    unsigned region = regionOf[i];
    std::vector<unsigned> path;
    for (unsigned n = region; n != 0; n = regions.parent(n))
      path.push_back(n);
    path.push_back(0);
    std::reverse(path.begin(), path.end());
    unsigned common = 0;
    while (common < open.size() && common < path.size() &&
           open[common] == path[common])
      ++common;
    while (open.size() > common) {
      open.pop_back();
      os << indent() << "}\n";
    }
    for (unsigned d = common; d < path.size(); ++d) {
      os << indent() << "subgraph "
         << quoted(fmt::format("cluster_{}", regions.rankOf(path[d])))
         << " {\n";
      open.push_back(path[d]);
      os << indent() << "label = " << quoted(regions.name(path[d])) << ";\n";
    }
    const Op &op = *schedule[i];
    os << indent() << 'n' << i << " [label=" << quoted(nodeLabel(op));
    if (op.hasFlag(OpFlagLeaf))
      os << ", shape=ellipse";
    os << ", style=filled, fillcolor=" << quoted(roleColour(roles[op.id()]));
    if (producesOutput[op.id()])
      os << ", peripheries=2";
    os << "];\n";
  }
  while (open.size() > 1) {
    open.pop_back();
    os << indent() << "}\n";
  }
  std::vector<OpRoleKind> scheduled;
  for (const Op *op : schedule)
    scheduled.push_back(roles[op->id()]);
  printLegend(scheduled, os);

  for (unsigned i = 0; i < schedule.size(); ++i) {
    const Op &op = *schedule[i];
    for (const Value *operand : op.operands())
      os << "  n" << position[operand->producer()->id()] << " -> n" << i
         << " [label=" << quoted(fmt::format("%{}", operand->name().str()))
         << "];\n";
    for (const Op *dep : op.controlDeps())
      os << "  n" << position[dep->id()] << " -> n" << i
         << " [style=dashed];\n";
  }
  os << "}\n";
}

} // namespace remat
