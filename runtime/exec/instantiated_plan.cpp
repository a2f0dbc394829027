#include "runtime/exec/instantiated_plan.h"

#include "runtime/exec/blocked_values.h"

namespace sod2::rt {

InstantiatedPlan instantiated_plan(const Session& session) {
  const ProgramDesc& p = session.program();
  InstantiatedPlan out;
  out.version = session.plan_version();
  out.arena_bytes = session.arena_bytes();
  if (p.graphs.empty()) return out;
  const GraphDesc& main = p.graphs[0];
  for (const NodeDesc& n : main.nodes)
    out.steps.push_back(n.fused_nodes.empty() ? std::vector<std::string>{n.info.name}
                                              : n.fused_nodes);
  const std::span<const int64_t> values = session.plan_values();
  const size_t n = p.num_arena_tensors;
  if (values.size() < 2 * n + 1) return out;  // no run yet
  for (size_t s = 0; s < p.symbols.size(); ++s)
    if (session.symbol_bound(s))
      out.symbols.emplace_back(p.symbols[s].name, session.symbol_value(s));
  out.tensors.resize(n);
  const std::string blocked = blocked_layout_name(session.channel_block());
  for (size_t id = 0; id < main.values.size(); ++id) {
    const ValueDesc& v = main.values[id];
    if (v.storage != ValueStorage::kArena || v.arena_tensor < 0) continue;
    const size_t t = static_cast<size_t>(v.arena_tensor);
    if (t >= n || !out.tensors[t].name.empty()) continue;
    out.tensors[t].name = v.name;
    if (session.value_blocked(id)) out.tensors[t].layout = blocked;
  }
  for (size_t t = 0; t < n; ++t) {
    out.tensors[t].size = values[t];
    out.tensors[t].offset = values[n + t];
  }
  return out;
}

}  // namespace sod2::rt
