// EDO segments (DESIGN §5): an execution symbol is known from the step of the node that first
// produces a value whose shape involves it (the EDO node itself). A tensor's segment is the
// step from which every symbol of its size is known; tensors without execution symbols are in
// segment 0.
#pragma once

#include <span>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/tensor_sizes.h"
#include "core/rdp/rdp.h"

namespace sod2::opt {

// `step_of[node]` from steps_of(); one segment per tensor of `set`.
std::vector<int32_t> tensor_segments(const Graph& graph, const RdpResult& rdp, const TensorSet& set,
                                     std::span<const int32_t> step_of);

}  // namespace sod2::opt
