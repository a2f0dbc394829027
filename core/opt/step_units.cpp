#include "core/opt/step_units.h"

#include <algorithm>
#include <queue>
#include <string>

namespace sod2::opt {

StepUnits units_per_node(const Graph& graph) {
  StepUnits u;
  u.nodes.resize(graph.num_nodes());
  u.unit_of.resize(graph.num_nodes());
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    u.nodes[n] = {static_cast<NodeId>(n)};
    u.unit_of[n] = static_cast<int32_t>(n);
  }
  return u;
}

StepUnits units_of_fusion(const Graph& graph, const FusionPlan& fusion) {
  StepUnits u;
  u.unit_of.assign(graph.num_nodes(), -1);
  for (const FusionGroup& g : fusion.groups) {
    for (NodeId n : g.nodes) u.unit_of[static_cast<size_t>(n)] = static_cast<int32_t>(u.size());
    u.nodes.push_back(g.nodes);
  }
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    if (u.unit_of[n] >= 0) continue;
    u.unit_of[n] = static_cast<int32_t>(u.size());
    u.nodes.push_back({static_cast<NodeId>(n)});
  }
  return u;
}

std::vector<NodeId> node_order(const StepUnits& units, std::span<const int32_t> unit_order) {
  std::vector<NodeId> out;
  for (int32_t u : unit_order) {
    const auto& nodes = units.nodes[static_cast<size_t>(u)];
    out.insert(out.end(), nodes.begin(), nodes.end());
  }
  return out;
}

Expected<std::vector<int32_t>> steps_of(const Graph& graph, const StepUnits& units,
                                        std::span<const int32_t> unit_order) {
  if (unit_order.size() != units.size()) {
    return internal_error("an execution order has " + std::to_string(unit_order.size()) +
                          " steps for " + std::to_string(units.size()) + " units");
  }
  std::vector<int32_t> step_of_unit(units.size(), -1);
  for (size_t i = 0; i < unit_order.size(); ++i) {
    const int32_t u = unit_order[i];
    if (u < 0 || static_cast<size_t>(u) >= units.size() ||
        step_of_unit[static_cast<size_t>(u)] >= 0)
      return internal_error("an execution order repeats or invents step unit " + std::to_string(u));
    step_of_unit[static_cast<size_t>(u)] = static_cast<int32_t>(i);
  }
  std::vector<int32_t> step(graph.num_nodes(), -1);
  for (size_t n = 0; n < graph.num_nodes(); ++n)
    step[n] = step_of_unit[static_cast<size_t>(units.unit_of[n])];
  return step;
}

Expected<std::vector<int32_t>> source_unit_order(const Graph& graph, const StepUnits& units) {
  SOD2_ASSIGN_OR_RETURN(std::vector<NodeId> nodes, graph.topological_order());
  // Kahn's algorithm over the unit graph, taking the ready unit whose first node comes first in
  // the file's order: for one unit per node this is the source order itself.
  std::vector<int32_t> pos(graph.num_nodes());
  for (size_t i = 0; i < nodes.size(); ++i)
    pos[static_cast<size_t>(nodes[i])] = static_cast<int32_t>(i);
  const size_t n = units.size();
  std::vector<int32_t> first(n, INT32_MAX), waiting(n, 0);
  std::vector<std::vector<int32_t>> next(n);
  for (size_t u = 0; u < n; ++u) {
    for (NodeId x : units.nodes[u]) {
      first[u] = std::min(first[u], pos[static_cast<size_t>(x)]);
      const Node& node = graph.node(x);
      for (const auto* ins : {&node.inputs, &node.implicit_inputs}) {
        for (ValueId v : *ins) {
          if (v == kNoValue || graph.value(v).producer == kNoNode) continue;
          const int32_t p = units.unit_of[static_cast<size_t>(graph.value(v).producer)];
          if (p == static_cast<int32_t>(u)) continue;
          next[static_cast<size_t>(p)].push_back(static_cast<int32_t>(u));
          ++waiting[u];
        }
      }
    }
  }
  auto later = [&](int32_t a, int32_t b) {
    return first[static_cast<size_t>(a)] > first[static_cast<size_t>(b)];
  };
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(later)> ready(later);
  for (size_t u = 0; u < n; ++u)
    if (waiting[u] == 0) ready.push(static_cast<int32_t>(u));
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t u = ready.top();
    ready.pop();
    order.push_back(u);
    for (int32_t s : next[static_cast<size_t>(u)])
      if (--waiting[static_cast<size_t>(s)] == 0) ready.push(s);
  }
  if (order.size() != n) {
    return internal_error("the fused groups depend on each other in a cycle (" +
                          std::to_string(n - order.size()) + " groups never become ready)");
  }
  return order;
}

}  // namespace sod2::opt
