//===- MinimumCut.cpp - Minimum s-t cuts by Boost.Graph -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Planning/MinCut/MinimumCut.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>

#include <cassert>

namespace remat::mincut {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS,
                                            boost::directedS>;
using Network = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<
        boost::vertex_index_t, long,
        boost::property<
            boost::vertex_color_t, boost::default_color_type,
            boost::property<
                boost::vertex_distance_t, long,
                boost::property<boost::vertex_predecessor_t,
                                Traits::edge_descriptor>>>>,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<
            boost::edge_residual_capacity_t, int64_t,
            boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

} // namespace

void FlowNetwork::addEdge(int from, int to, int64_t capacity) {
  assert(from >= 0 && from < numVertices_ && to >= 0 && to < numVertices_ &&
         capacity >= 0 && "edge out of the network");
  if (from != to && capacity > 0)
    edges_.push_back({from, to, capacity});
}

Cut FlowNetwork::minimumCut(int source, int sink) const {
  Network network(numVertices_);
  auto capacity = boost::get(boost::edge_capacity, network);
  auto reverse = boost::get(boost::edge_reverse, network);
  auto residual = boost::get(boost::edge_residual_capacity, network);
  for (const Edge &edge : edges_) {
    auto forward = boost::add_edge(edge.from, edge.to, network).first;
    auto backward = boost::add_edge(edge.to, edge.from, network).first;
    capacity[forward] = edge.capacity;
    capacity[backward] = 0;
    reverse[forward] = backward;
    reverse[backward] = forward;
  }
  Cut cut;
  cut.capacity =
      boost::boykov_kolmogorov_max_flow(network, source, sink);

  // The source side: what the source reaches along edges with residual
  // capacity, by an explicit stack.
  cut.sourceSide.resize(numVertices_);
  std::vector<int> stack = {source};
  cut.sourceSide.set(source);
  while (!stack.empty()) {
    int vertex = stack.back();
    stack.pop_back();
    for (auto [it, end] = boost::out_edges(vertex, network); it != end; ++it) {
      int next = int(boost::target(*it, network));
      if (residual[*it] > 0 && !cut.sourceSide.test(next)) {
        cut.sourceSide.set(next);
        stack.push_back(next);
      }
    }
  }
  return cut;
}

} // namespace remat::mincut
