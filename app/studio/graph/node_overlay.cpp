#include "app/studio/graph/node_overlay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/status/byte_size.h"

namespace sod2::studio {
namespace {

// The distinct groups a drawn node's members ran in, in the order first met.
std::vector<int> groups_of(const NodeOverlay& o, const DisplayNode& node) {
  std::vector<int> out;
  for (NodeId m : node.members) {
    if (m < 0 || static_cast<size_t>(m) >= o.group_of_node.size()) continue;
    const int g = o.group_of_node[static_cast<size_t>(m)];
    if (g < 0 || static_cast<size_t>(g) >= o.groups.size()) continue;
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

}  // namespace

std::optional<double> NodeOverlay::value_of(const DisplayNode& node) const {
  // A node inside an expanded If/Loop/Scan body is not a main-graph node: its members are the
  // main graph's ids of nothing, and it shows no value.
  if (node.body_of != nullptr) return std::nullopt;
  const std::vector<int> gs = groups_of(*this, node);
  if (gs.empty()) return std::nullopt;
  if (categorical()) {
    const double first = groups[static_cast<size_t>(gs.front())].value;
    for (int g : gs)
      if (groups[static_cast<size_t>(g)].value != first) return kMixed;
    return first;
  }
  double sum = 0;
  for (int g : gs) sum += groups[static_cast<size_t>(g)].value;
  return sum;
}

std::string NodeOverlay::describe(const DisplayNode& node) const {
  const std::optional<double> v = value_of(node);
  if (!v) return title + ": not in this run";
  const std::vector<int> gs = groups_of(*this, node);
  std::string s = title + ": " + overlay_value_text(*this, *v);
  if (gs.size() == 1) {
    s += " (" + groups[static_cast<size_t>(gs.front())].label + ")";
  } else {
    s += " over " + std::to_string(gs.size()) + " groups";
  }
  return s;
}

double NodeOverlay::max_abs() const {
  double m = 0;
  for (const Group& g : groups) m = std::max(m, std::fabs(g.value));
  return m;
}

NodeNameIndex::NodeNameIndex(const Graph& g) : size_(g.num_nodes()) {
  for (size_t i = 0; i < g.num_nodes(); ++i)
    ids_.emplace(g.node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
}

std::string overlay_value_text(const NodeOverlay& o, double value) {
  if (o.categorical()) {
    const auto k = static_cast<size_t>(value);
    return value >= 0 && k < o.categories.size() ? o.categories[k] : std::string("mixed");
  }
  if (o.unit == "bytes") {
    const std::string b = human_bytes(static_cast<int64_t>(std::llround(std::fabs(value))));
    return (o.diverging ? (value < 0 ? "-" : "+") : (value < 0 ? "-" : "")) + b;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, o.diverging ? "%+.3f %s" : "%.3f %s", value, o.unit.c_str());
  return buf;
}

}  // namespace sod2::studio
