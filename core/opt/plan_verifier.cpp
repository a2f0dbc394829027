#include "core/opt/plan_verifier.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace sod2::opt {

Status verify_lifetimes(const Graph& graph, std::span<const NodeId> order, const TensorSet& set,
                        std::span<const Lifetime> lives) {
  std::vector<int32_t> step(graph.num_nodes(), -1);
  for (size_t i = 0; i < order.size(); ++i)
    step[static_cast<size_t>(order[i])] = static_cast<int32_t>(i);
  return verify_lifetimes(graph, step, static_cast<int32_t>(order.size()), set, lives);
}

Status verify_lifetimes(const Graph& graph, std::span<const int32_t> step, int32_t num_steps,
                        const TensorSet& set, std::span<const Lifetime> lives) {
  if (lives.size() != set.tensors.size()) {
    return internal_error(std::to_string(lives.size()) + " lifetimes for " +
                          std::to_string(set.tensors.size()) + " tensors");
  }
  if (step.size() != graph.num_nodes()) {
    return internal_error(std::to_string(step.size()) + " steps for " +
                          std::to_string(graph.num_nodes()) + " nodes");
  }
  const int32_t last = num_steps - 1;
  for (size_t t = 0; t < set.tensors.size(); ++t) {
    const Value& v = graph.value(set.tensors[t].value);
    const Lifetime& l = lives[t];
    const std::string who = "'" + v.name + "' (steps " + std::to_string(l.first_step) + ".." +
                            std::to_string(l.last_step) + ")";
    if (v.producer == kNoNode || step[static_cast<size_t>(v.producer)] != l.first_step) {
      return internal_error(who + " does not start at its producer's step");
    }
    // Its views' bytes are its own: they are read, and made, while it lives.
    std::vector<ValueId> held{set.tensors[t].value};
    held.insert(held.end(), set.tensors[t].views.begin(), set.tensors[t].views.end());
    for (ValueId h : held) {
      const Value& hv = graph.value(h);
      if (h != set.tensors[t].value && !l.contains(step[static_cast<size_t>(hv.producer)])) {
        return internal_error(who + " is not live when '" + graph.node(hv.producer).name +
                              "' makes its view '" + hv.name + "'");
      }
      for (NodeId c : hv.consumers) {
        if (!l.contains(step[static_cast<size_t>(c)])) {
          return internal_error(who + " is not live when '" + graph.node(c).name + "' (step " +
                                std::to_string(step[static_cast<size_t>(c)]) + ") reads '" +
                                hv.name + "'");
        }
      }
    }
    if (set.tensors[t].graph_output && l.last_step != last) {
      return internal_error(who + " is a graph output but does not live to the last step");
    }
  }
  return Status::ok_status();
}

}  // namespace sod2::opt
