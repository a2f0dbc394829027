#include "core/opt/execution_order.h"

#include <algorithm>

#include "core/opt/lifetimes.h"
#include "core/opt/memory_stats.h"

namespace sod2::opt {
namespace {

// The distinct arena tensors a node reads (explicit and implicit inputs).
std::vector<int32_t> tensors_read(const Node& node, const TensorSet& set) {
  std::vector<int32_t> out;
  auto add = [&](ValueId v) {
    const int32_t t = set.index_of(v);
    if (t >= 0 && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  for (ValueId v : node.inputs) add(v);
  for (ValueId v : node.implicit_inputs) add(v);
  return out;
}

}  // namespace

std::vector<NodeId> list_schedule(const Graph& graph, const TensorSet& set,
                                  std::span<const int64_t> sizes, ScheduleRule rule) {
  const size_t n = graph.num_nodes();
  std::vector<std::vector<int32_t>> reads(n);
  std::vector<std::vector<NodeId>> successors(n);
  std::vector<int32_t> waiting(n, 0);  // unfinished producers, counted per edge
  std::vector<int32_t> readers_left(set.tensors.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.node(static_cast<NodeId>(i));
    reads[i] = tensors_read(node, set);
    for (int32_t t : reads[i]) ++readers_left[static_cast<size_t>(t)];
    auto depend = [&](ValueId v) {
      if (v == kNoValue) return;
      const Value& value = graph.value(v);
      if (value.kind != ValueKind::kNodeOutput || value.producer == kNoNode) return;
      successors[static_cast<size_t>(value.producer)].push_back(static_cast<NodeId>(i));
      ++waiting[i];
    };
    for (ValueId v : node.inputs) depend(v);
    for (ValueId v : node.implicit_inputs) depend(v);
  }
  // Bytes a node's outputs add, and of those the ones nobody reads (freed right after it).
  auto outputs_of = [&](size_t i, int64_t* alloc, int64_t* dead) {
    *alloc = 0;
    *dead = 0;
    for (ValueId v : graph.node(static_cast<NodeId>(i)).outputs) {
      const int32_t t = set.index_of(v);
      if (t < 0) continue;
      *alloc = saturating_add(*alloc, sizes[t]);
      if (readers_left[t] == 0 && !set.tensors[t].graph_output)
        *dead = saturating_add(*dead, sizes[t]);
    }
  };

  std::vector<NodeId> ready;
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push_back(static_cast<NodeId>(i));
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t best = 0;
    int64_t best_key1 = 0, best_key2 = 0;
    for (size_t r = 0; r < ready.size(); ++r) {
      const size_t i = static_cast<size_t>(ready[r]);
      int64_t alloc = 0, freed = 0;
      outputs_of(i, &alloc, &freed);
      for (int32_t t : reads[i]) {
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
    const NodeId chosen = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    order.push_back(chosen);
    for (int32_t t : reads[static_cast<size_t>(chosen)]) --readers_left[t];
    for (NodeId s : successors[static_cast<size_t>(chosen)]) {
      if (--waiting[static_cast<size_t>(s)] == 0) ready.push_back(s);
    }
  }
  return order;  // shorter than n only for a cyclic graph, which lifetimes() then rejects
}

Expected<int64_t> order_peak_bytes(const Graph& graph, const TensorSet& set,
                                   std::span<const NodeId> order, std::span<const int64_t> sizes) {
  SOD2_ASSIGN_OR_RETURN(std::vector<Lifetime> lives, tensor_lifetimes(graph, order, set));
  return peak_live_bytes(sizes, lives);
}

Expected<ExecutionOrder> choose_execution_order(const Graph& graph, const TensorSet& set,
                                                std::span<const int64_t> reference_sizes,
                                                std::span<const std::vector<int64_t>> check_sizes) {
  SOD2_ASSIGN_OR_RETURN(std::vector<NodeId> source, graph.topological_order());
  SOD2_ASSIGN_OR_RETURN(int64_t source_peak, order_peak_bytes(graph, set, source, reference_sizes));
  std::vector<int64_t> source_checks;
  for (const std::vector<int64_t>& sizes : check_sizes) {
    SOD2_ASSIGN_OR_RETURN(int64_t p, order_peak_bytes(graph, set, source, sizes));
    source_checks.push_back(p);
  }
  ExecutionOrder best{source, "source", source_peak, source_peak};
  const std::pair<ScheduleRule, const char*> rules[] = {{ScheduleRule::kMinDelta, "min-delta"},
                                                        {ScheduleRule::kMinAlloc, "min-alloc"}};
  for (const auto& [rule, name] : rules) {
    std::vector<NodeId> order = list_schedule(graph, set, reference_sizes, rule);
    auto peak = order_peak_bytes(graph, set, order, reference_sizes);
    if (!peak.ok() || *peak >= best.peak_bytes) continue;  // ties keep the earlier candidate
    bool no_worse = true;
    for (size_t b = 0; b < check_sizes.size() && no_worse; ++b) {
      auto p = order_peak_bytes(graph, set, order, check_sizes[b]);
      no_worse = p.ok() && *p <= source_checks[b];
    }
    if (no_worse) best = {std::move(order), name, *peak, source_peak};
  }
  return best;
}

}  // namespace sod2::opt
