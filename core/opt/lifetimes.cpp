#include "core/opt/lifetimes.h"

#include <algorithm>

namespace sod2::opt {

Expected<std::vector<int32_t>> steps_of(const Graph& graph, std::span<const NodeId> order) {
  return steps_of(graph, units_per_node(graph), order);
}

Expected<std::vector<Lifetime>> tensor_lifetimes(const Graph& graph, std::span<const NodeId> order,
                                                 const TensorSet& set) {
  return tensor_lifetimes(graph, units_per_node(graph), order, set);
}

Expected<std::vector<Lifetime>> tensor_lifetimes(const Graph& graph, const StepUnits& units,
                                                 std::span<const int32_t> unit_order,
                                                 const TensorSet& set) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int32_t> step, steps_of(graph, units, unit_order));
  const int32_t last = unit_order.empty() ? 0 : static_cast<int32_t>(unit_order.size()) - 1;
  std::vector<Lifetime> life(set.tensors.size());
  for (size_t t = 0; t < set.tensors.size(); ++t) {
    const ArenaTensor& tensor = set.tensors[t];
    const int32_t s = step[static_cast<size_t>(tensor.producer)];
    life[t] = {s, tensor.graph_output ? last : s};
  }
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    const int32_t s = step[n];
    auto read = [&](ValueId v) -> Status {
      const int32_t t = set.index_of(v);
      if (t < 0) return Status::ok_status();
      Lifetime& l = life[static_cast<size_t>(t)];
      // A reader in the producer's own unit runs in the same step, after the producer.
      const bool same_unit =
          units.unit_of[n] ==
          units.unit_of[static_cast<size_t>(set.tensors[static_cast<size_t>(t)].producer)];
      if (s < l.first_step || (s == l.first_step && !same_unit)) {
        return internal_error("the execution order runs '" + node.name + "' before '" +
                              graph.node(set.tensors[static_cast<size_t>(t)].producer).name +
                              "', which writes the tensor '" + graph.value(v).name + "' it reads");
      }
      l.last_step = std::max(l.last_step, s);
      return Status::ok_status();
    };
    for (ValueId v : node.inputs) SOD2_RETURN_IF_ERROR(read(v));
    for (ValueId v : node.implicit_inputs) SOD2_RETURN_IF_ERROR(read(v));
  }
  return life;
}

}  // namespace sod2::opt
