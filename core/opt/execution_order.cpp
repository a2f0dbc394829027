#include "core/opt/execution_order.h"

#include <algorithm>

#include "core/opt/lifetimes.h"
#include "core/opt/plan_types.h"

namespace sod2::opt {
namespace {

// Per unit: the distinct arena tensors it reads from other units (explicit and implicit inputs),
// the tensors it writes, and the units that wait for it (one entry per edge).
struct UnitGraph {
  std::vector<std::vector<int32_t>> reads;
  std::vector<std::vector<int32_t>> writes;
  std::vector<std::vector<int32_t>> successors;
  std::vector<int32_t> waiting;
};

UnitGraph unit_graph(const Graph& graph, const StepUnits& units, const TensorSet& set) {
  const size_t n = units.size();
  UnitGraph ug{std::vector<std::vector<int32_t>>(n), std::vector<std::vector<int32_t>>(n),
               std::vector<std::vector<int32_t>>(n), std::vector<int32_t>(n, 0)};
  for (size_t u = 0; u < n; ++u) {
    for (NodeId x : units.nodes[u]) {
      const Node& node = graph.node(x);
      for (ValueId v : node.outputs) {
        // A view adds no bytes: its tensor was written by the value it views.
        if (set.writes_tensor(v)) ug.writes[u].push_back(set.index_of(v));
      }
      auto read = [&](ValueId v) {
        if (v == kNoValue) return;
        const Value& value = graph.value(v);
        const bool from_node = value.kind == ValueKind::kNodeOutput && value.producer != kNoNode;
        const int32_t p = from_node ? units.unit_of[static_cast<size_t>(value.producer)] : -1;
        if (p == static_cast<int32_t>(u)) return;  // made inside the unit
        if (from_node) {
          ug.successors[static_cast<size_t>(p)].push_back(static_cast<int32_t>(u));
          ++ug.waiting[u];
        }
        const int32_t t = set.index_of(v);
        auto& r = ug.reads[u];
        if (t >= 0 && std::find(r.begin(), r.end(), t) == r.end()) r.push_back(t);
      };
      for (ValueId v : node.inputs) read(v);
      for (ValueId v : node.implicit_inputs) read(v);
    }
  }
  return ug;
}

}  // namespace

std::vector<int32_t> list_schedule(const Graph& graph, const StepUnits& units, const TensorSet& set,
                                   std::span<const int64_t> sizes, ScheduleRule rule) {
  UnitGraph ug = unit_graph(graph, units, set);
  const size_t n = units.size();
  std::vector<int32_t> readers_left(set.tensors.size(), 0);
  for (size_t u = 0; u < n; ++u)
    for (int32_t t : ug.reads[u]) ++readers_left[static_cast<size_t>(t)];

  std::vector<int32_t> ready;
  for (size_t u = 0; u < n; ++u)
    if (ug.waiting[u] == 0) ready.push_back(static_cast<int32_t>(u));
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t best = 0;
    int64_t best_key1 = 0, best_key2 = 0;
    for (size_t r = 0; r < ready.size(); ++r) {
      const size_t u = static_cast<size_t>(ready[r]);
      // Bytes the unit's outputs add; those nobody reads later are freed right after it, like
      // the inputs it is the last reader of.
      int64_t alloc = 0, freed = 0;
      for (int32_t t : ug.writes[u]) {
        alloc = saturating_add(alloc, sizes[t]);
        if (readers_left[t] == 0 && !set.tensors[t].graph_output)
          freed = saturating_add(freed, sizes[t]);
      }
      for (int32_t t : ug.reads[u]) {
        if (readers_left[t] == 1 && !set.tensors[t].graph_output)
          freed = saturating_add(freed, sizes[t]);
      }
      const int64_t delta = alloc - freed;
      const int64_t key1 = rule == ScheduleRule::kMinDelta ? delta : alloc;
      const int64_t key2 = rule == ScheduleRule::kMinDelta ? alloc : delta;
      const bool better = r == 0 || key1 < best_key1 ||
                          (key1 == best_key1 &&
                           (key2 < best_key2 || (key2 == best_key2 && ready[r] < ready[best])));
      if (better) {
        best = r;
        best_key1 = key1;
        best_key2 = key2;
      }
    }
    const int32_t chosen = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    order.push_back(chosen);
    for (int32_t t : ug.reads[static_cast<size_t>(chosen)]) --readers_left[t];
    for (int32_t s : ug.successors[static_cast<size_t>(chosen)]) {
      if (--ug.waiting[static_cast<size_t>(s)] == 0) ready.push_back(s);
    }
  }
  return order;  // shorter than n only for a cyclic graph, which lifetimes() then rejects
}

std::vector<NodeId> list_schedule(const Graph& graph, const TensorSet& set,
                                  std::span<const int64_t> sizes, ScheduleRule rule) {
  return list_schedule(graph, units_per_node(graph), set, sizes, rule);
}

Expected<int64_t> order_peak_bytes(const Graph& graph, const StepUnits& units, const TensorSet& set,
                                   std::span<const int32_t> unit_order,
                                   std::span<const int64_t> sizes) {
  SOD2_ASSIGN_OR_RETURN(std::vector<Lifetime> lives,
                        tensor_lifetimes(graph, units, unit_order, set));
  return peak_live_bytes(sizes, lives);
}

Expected<ExecutionOrder> choose_execution_order(const Graph& graph, const StepUnits& units,
                                                const TensorSet& set,
                                                std::span<const int64_t> reference_sizes,
                                                std::span<const std::vector<int64_t>> check_sizes) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int32_t> source, source_unit_order(graph, units));
  SOD2_ASSIGN_OR_RETURN(int64_t source_peak,
                        order_peak_bytes(graph, units, set, source, reference_sizes));
  std::vector<int64_t> source_checks;
  for (const std::vector<int64_t>& sizes : check_sizes) {
    SOD2_ASSIGN_OR_RETURN(int64_t p, order_peak_bytes(graph, units, set, source, sizes));
    source_checks.push_back(p);
  }
  ExecutionOrder best{source, {}, "source", source_peak, source_peak};
  const std::pair<ScheduleRule, const char*> rules[] = {{ScheduleRule::kMinDelta, "min-delta"},
                                                        {ScheduleRule::kMinAlloc, "min-alloc"}};
  for (const auto& [rule, name] : rules) {
    std::vector<int32_t> order = list_schedule(graph, units, set, reference_sizes, rule);
    auto peak = order_peak_bytes(graph, units, set, order, reference_sizes);
    if (!peak.ok() || *peak >= best.peak_bytes) continue;  // ties keep the earlier candidate
    bool no_worse = true;
    for (size_t b = 0; b < check_sizes.size() && no_worse; ++b) {
      auto p = order_peak_bytes(graph, units, set, order, check_sizes[b]);
      no_worse = p.ok() && *p <= source_checks[b];
    }
    if (no_worse) best = {std::move(order), {}, name, *peak, source_peak};
  }
  best.order = node_order(units, best.steps);
  return best;
}

Expected<ExecutionOrder> choose_execution_order(const Graph& graph, const TensorSet& set,
                                                std::span<const int64_t> reference_sizes,
                                                std::span<const std::vector<int64_t>> check_sizes) {
  return choose_execution_order(graph, units_per_node(graph), set, reference_sizes, check_sizes);
}

}  // namespace sod2::opt
