#include "core/rdp/rdp_summary.h"

#include <algorithm>

namespace sod2 {

bool counted_in_summary(const Graph& graph, const Value& v) {
  if (v.kind == ValueKind::kInitializer || v.kind == ValueKind::kOuterScope) return false;
  if (v.kind == ValueKind::kNodeOutput) return graph.node(v.producer).op_type != "Constant";
  return false;
}

RdpSummary summarize_rdp(const Model& model, const RdpResult& result) {
  RdpSummary s;
  s.assumptions = static_cast<int64_t>(result.assumptions().size());
  visit_graphs(*model.graph, [&](const Graph& g, const Node*) {
    std::vector<ValueId> ids;
    for (size_t i = 0; i < g.num_values(); ++i)
      if (counted_in_summary(g, g.value(static_cast<ValueId>(i)))) ids.push_back(static_cast<ValueId>(i));
    // A graph output that is a graph input is counted too (a pass-through still has a shape).
    for (ValueId id : g.outputs())
      if ((g.value(id).kind == ValueKind::kGraphInput || g.value(id).kind == ValueKind::kOuterScope) &&
          std::find(ids.begin(), ids.end(), id) == ids.end())
        ids.push_back(id);
    for (ValueId id : ids) {
      ++s.values_total;
      const TensorFact& f = result.fact(g, id);
      if (!f.dims) {
        ++s.rank_unknown;
        continue;
      }
      for (const Dim& d : *f.dims) {
        ++s.dims_total;
        if (!d) ++s.dims_unknown;
        else if (d->is_constant()) ++s.dims_constant;
        else if (result.involves_execution(*d)) ++s.dims_execution;
        else ++s.dims_symbolic;
      }
    }
  });
  return s;
}

}  // namespace sod2
