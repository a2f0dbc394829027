// Checks a memory plan at one binding, independently of the planners: it recomputes nothing
// they compute and trusts none of their invariants, so a planner bug shows up here.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/ir/graph.h"
#include "core/opt/plan_types.h"
#include "core/opt/tensor_sizes.h"
#include "core/status/status.h"

namespace sod2::opt {

// Every offset is non-negative and a multiple of kTensorAlignment, every size non-negative,
// every tensor inside [0, arena_bytes), and no two tensors whose lifetimes overlap share a byte.
// The runtime's own check (runtime/program/plan_layout.h), so compiler and loader agree.
using plan::verify_layout;

// Every arena tensor is live from its producer's step to the step of its last reader (implicit
// reads by subgraphs included) and graph outputs to the last step; read from the graph's own
// producer/consumer links, not from the lifetime code.
// `step_of[node]` is the step that runs the node (nodes of one fused group share a step) and
// `num_steps` the order's length.
Status verify_lifetimes(const Graph& graph, std::span<const int32_t> step_of, int32_t num_steps,
                        const TensorSet& set, std::span<const Lifetime> lives);
// One node per step: step i runs order[i].
Status verify_lifetimes(const Graph& graph, std::span<const NodeId> order, const TensorSet& set,
                        std::span<const Lifetime> lives);

}  // namespace sod2::opt
