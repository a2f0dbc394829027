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
  // In step order, the first value a tensor holds is the one written into it; those after it are
  // views of it (runtime/program/byte_views.h).
  auto place = [&](size_t id) {
    const ValueDesc& v = main.values[id];
    if (v.storage != ValueStorage::kArena || v.arena_tensor < 0) return;
    const size_t t = static_cast<size_t>(v.arena_tensor);
    if (t >= n) return;
    if (!out.tensors[t].name.empty()) {
      if (out.tensors[t].name != v.name) out.tensors[t].views.push_back(v.name);
      return;
    }
    out.tensors[t].name = v.name;
    if (session.value_blocked(id)) out.tensors[t].layout = blocked;
  };
  for (const NodeDesc& node : main.nodes)
    for (int32_t v : node.outputs)
      if (v >= 0 && static_cast<size_t>(v) < main.values.size()) place(static_cast<size_t>(v));
  // A tensor no node writes keeps its value's name.
  for (size_t id = 0; id < main.values.size(); ++id) {
    const ValueDesc& v = main.values[id];
    if (v.storage != ValueStorage::kArena || v.arena_tensor < 0) continue;
    const size_t t = static_cast<size_t>(v.arena_tensor);
    if (t < n && out.tensors[t].name.empty()) out.tensors[t].name = v.name;
  }
  for (size_t t = 0; t < n; ++t) {
    out.tensors[t].size = values[t];
    out.tensors[t].offset = values[n + t];
  }
  return out;
}

}  // namespace sod2::rt
