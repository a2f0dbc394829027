#include "app/studio/backend/backend_overlay.h"

#include <map>

namespace sod2::studio {

NodeOverlay backend_overlay(const backend::BackendPlacement& placement, const Graph& graph) {
  const NodeNameIndex names(graph);
  NodeOverlay o;
  o.title = "backend";
  o.unit = "";
  o.group_of_node.assign(names.size(), -1);
  // Categories in a stable order, whatever order the rows come in.
  std::map<int, std::string> present;  // -1: the device; else CpuReason
  for (const backend::PlacementRow& row : placement.rows) {
    if (row.device)
      present[-1] = placement.backend.empty() ? std::string("device") : placement.backend;
    else
      present[static_cast<int>(row.reason)] =
          std::string("CPU: ") + rt::cpu_reason_name(row.reason);
  }
  std::map<int, double> index;
  for (const auto& [key, name] : present) {
    index[key] = static_cast<double>(o.categories.size());
    o.categories.push_back(name);
  }
  for (const backend::PlacementRow& row : placement.rows) {
    const int key = row.device ? -1 : static_cast<int>(row.reason);
    const int group = static_cast<int>(o.groups.size());
    std::string label = row.node;
    if (!row.device && !row.why_cpu.empty()) label += ": " + row.why_cpu;
    o.groups.push_back({std::move(label), index[key]});
    if (row.fused_nodes.empty())
      names.assign(o, std::vector<std::string>{row.node}, group);
    else
      names.assign(o, row.fused_nodes, group);
  }
  return o;
}

}  // namespace sod2::studio
