// What one step of an execution order runs: a fused group (one kernel launch), or a single node
// when the plan is made without fusion. Lifetimes, orders and EDO segments count in steps, so a
// value that stays inside a group never occupies the arena, and a group's inputs stay live until
// the whole group has run.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/fusion.h"
#include "core/status/status.h"

namespace sod2::opt {

struct StepUnits {
  std::vector<std::vector<NodeId>> nodes;  // per unit, in a topological order
  std::vector<int32_t> unit_of;            // per NodeId

  size_t size() const { return nodes.size(); }
};

// One unit per node, numbered like the nodes.
StepUnits units_per_node(const Graph& graph);

// One unit per fused group, numbered like the groups, then one per node outside every group
// (Constant nodes, whose value the package stores).
StepUnits units_of_fusion(const Graph& graph, const FusionPlan& fusion);

// The nodes of `unit_order`'s units, in that order.
std::vector<NodeId> node_order(const StepUnits& units, std::span<const int32_t> unit_order);

// step_of[node] = the position of its unit in `unit_order`. Errors: `unit_order` is not a
// permutation of the units.
Expected<std::vector<int32_t>> steps_of(const Graph& graph, const StepUnits& units,
                                        std::span<const int32_t> unit_order);

// The units in an order that runs every producer's unit before its readers' (the source order's
// units by their first node). Errors: the graph has a cycle, or the units are not convex.
Expected<std::vector<int32_t>> source_unit_order(const Graph& graph, const StepUnits& units);

}  // namespace sod2::opt
