// When each arena tensor holds its bytes in a given execution order.
#pragma once

#include <span>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/plan_types.h"
#include "core/opt/tensor_sizes.h"
#include "core/status/status.h"

namespace sod2::opt {

// step_of[node] = its position in `order`. Errors: `order` is not a permutation of the graph's
// nodes.
Expected<std::vector<int32_t>> steps_of(const Graph& graph, std::span<const NodeId> order);

// Step i runs order[i]. A tensor lives from its producer's step to the step of its last consumer;
// reads by a subgraph (a node's implicit inputs) count as reads by the node that owns it; a graph
// output lives to the last step; a tensor nobody reads lives during its producer's step only.
// Errors: `order` is not a topological order of the graph (names the node and the tensor).
Expected<std::vector<Lifetime>> tensor_lifetimes(const Graph& graph, std::span<const NodeId> order,
                                                 const TensorSet& set);

}  // namespace sod2::opt
