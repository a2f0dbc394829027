#include "app/studio/device/run_overlays.h"

#include <map>

#include "app/profiling/run_compare.h"
#include "core/store/profile_store.h"

namespace sod2::studio {
namespace {

NodeOverlay per_group(const profiling::ProfileResult& r, const Graph& graph, std::string title,
                      std::string unit, double (*value)(const profiling::GroupProfile&)) {
  const NodeNameIndex names(graph);
  NodeOverlay o;
  o.title = std::move(title);
  o.unit = std::move(unit);
  o.group_of_node.assign(names.size(), -1);
  for (const profiling::GroupProfile& g : r.groups) {
    const int index = static_cast<int>(o.groups.size());
    o.groups.push_back({g.op_label() + " " + g.name, value(g)});
    names.assign(o, g.nodes, index);
  }
  return o;
}

std::string run_suffix(int64_t id) { return id > 0 ? ", run " + std::to_string(id) : ""; }

}  // namespace

NodeOverlay measured_time_overlay(const profiling::ProfileResult& result, const Graph& graph) {
  return per_group(result, graph, "measured time" + run_suffix(result.run_id), "ms",
                   [](const profiling::GroupProfile& g) { return g.avg_ms; });
}

NodeOverlay output_bytes_overlay(const profiling::ProfileResult& result, const Graph& graph) {
  return per_group(
      result, graph, "output bytes" + run_suffix(result.run_id), "bytes",
      [](const profiling::GroupProfile& g) { return static_cast<double>(g.output_bytes); });
}

NodeOverlay run_delta_overlay(const store::RunRecord& a, const store::RunRecord& b,
                              const Graph& graph) {
  const NodeNameIndex names(graph);
  NodeOverlay o;
  o.title = "change in time, run " + std::to_string(a.id) + " -> " + std::to_string(b.id);
  o.unit = "ms";
  o.diverging = true;
  o.group_of_node.assign(names.size(), -1);
  // A group's nodes as the run that has it recorded them (B's when both do).
  std::map<std::string, const store::GroupRecord*> nodes_of;
  for (const store::GroupRecord& g : a.groups) nodes_of[g.name] = &g;
  for (const store::GroupRecord& g : b.groups) nodes_of[g.name] = &g;
  for (const profiling::GroupDelta& d : profiling::compare_groups(a, b)) {
    const double v = d.in_both() ? d.delta_ms() : (d.b_ms >= 0 ? d.b_ms : -d.a_ms);
    const int index = static_cast<int>(o.groups.size());
    std::string label = d.op_types + " " + d.name;
    if (!d.in_both())
      label += d.b_ms >= 0 ? " (only in run " + std::to_string(b.id) + ")"
                           : " (only in run " + std::to_string(a.id) + ")";
    o.groups.push_back({std::move(label), v});
    auto it = nodes_of.find(d.name);
    if (it != nodes_of.end()) names.assign(o, store::split_names(it->second->nodes, ','), index);
  }
  return o;
}

}  // namespace sod2::studio
