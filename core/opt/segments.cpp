#include "core/opt/segments.h"

#include <algorithm>
#include <unordered_map>

#include "core/sym/transform.h"

namespace sod2::opt {

std::vector<int32_t> tensor_segments(const Graph& graph, const RdpResult& rdp, const TensorSet& set,
                                     std::span<const int32_t> step_of) {
  // Every node output counts, in the arena or not: an EDO output left out of the arena still
  // marks the step its symbol becomes known.
  std::unordered_map<sym::Symbol, int32_t> known_at;
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId v : graph.node(static_cast<NodeId>(n)).outputs) {
      if (v == kNoValue) continue;
      const TensorFact& f = rdp.fact(graph, v);
      if (!f.dims) continue;
      for (const Dim& d : *f.dims) {
        if (!d) continue;
        for (const sym::Symbol& s : sym::free_symbols(*d)) {
          if (!rdp.is_execution_symbol(s)) continue;
          auto [it, fresh] = known_at.emplace(s, step_of[n]);
          if (!fresh) it->second = std::min(it->second, step_of[n]);
        }
      }
    }
  }
  std::vector<int32_t> segment(set.tensors.size(), 0);
  for (size_t t = 0; t < set.tensors.size(); ++t) {
    for (const sym::Symbol& s : sym::free_symbols(set.tensors[t].bytes)) {
      auto it = known_at.find(s);
      if (it != known_at.end()) segment[t] = std::max(segment[t], it->second);
    }
  }
  return segment;
}

}  // namespace sod2::opt
