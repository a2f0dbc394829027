// When each arena tensor holds its bytes in a given execution order.
#pragma once

#include <span>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/plan_types.h"
#include "core/opt/step_units.h"
#include "core/opt/tensor_sizes.h"
#include "core/status/status.h"

namespace sod2::opt {

// step_of[node] = its position in `order`. Errors: `order` is not a permutation of the graph's
// nodes.
Expected<std::vector<int32_t>> steps_of(const Graph& graph, std::span<const NodeId> order);

// Step i runs the unit unit_order[i]. A tensor lives from its producer's step to the step of its
// last consumer; reads by a subgraph (a node's implicit inputs) count as reads by the node that
// owns it; a graph output lives to the last step; a tensor nobody reads lives during its
// producer's step only. Errors: `unit_order` does not run every producer before its readers
// (names the node and the tensor).
Expected<std::vector<Lifetime>> tensor_lifetimes(const Graph& graph, const StepUnits& units,
                                                 std::span<const int32_t> unit_order,
                                                 const TensorSet& set);

// The same with one node per step: step i runs order[i].
Expected<std::vector<Lifetime>> tensor_lifetimes(const Graph& graph, std::span<const NodeId> order,
                                                 const TensorSet& set);

}  // namespace sod2::opt
