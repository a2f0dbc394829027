// A quantity per fused group of a run, drawn over the graph in place of the class colours: the
// measured time of a profile as a heat map, its output bytes, or the change between two runs of
// the history (red slower, blue faster). No Qt: built from runs and tested headless.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/studio/graph/display_graph.h"

namespace sod2::studio {

struct NodeOverlay {
  std::string title;       // "measured time, run 12"
  std::string unit;        // "ms", "bytes"
  bool diverging = false;  // values around 0 (a change): one colour below, another above
  struct Group {
    std::string label;  // "Conv+Add+Relu /layer1/conv"
    double value = 0;
  };
  std::vector<Group> groups;
  // Per main-graph NodeId: the group it ran in, -1 for none (a node the run did not have).
  std::vector<int> group_of_node;
  // A categorical overlay (where each node runs) names its categories here, and each group's
  // value is an index into them; empty for a quantity.
  std::vector<std::string> categories;
  bool categorical() const { return !categories.empty(); }
  // What value_of gives a categorical overlay's drawn node whose groups fall in several
  // categories (a box over nodes on the device and on the CPU).
  static constexpr double kMixed = -1;

  // What a drawn node shows: the sum over the distinct groups its members ran in (a box of
  // several groups, or one node of a group that ran fused), for a categorical overlay their one
  // category or kMixed; nullopt when none of them ran.
  std::optional<double> value_of(const DisplayNode& node) const;
  // The tooltip line for a drawn node: "measured time: 0.412 ms (Conv+Relu /conv1)".
  std::string describe(const DisplayNode& node) const;
  // The largest |value|: the colour scale's end.
  double max_abs() const;
};

// "0.412 ms", "1.5 MiB", "+0.120 ms": a value in the overlay's unit; a categorical overlay's
// category name ("mixed" for kMixed).
std::string overlay_value_text(const NodeOverlay& overlay, double value);

// Main-graph node ids by name, for overlays built from what runs name (profile groups, backend
// placement rows).
class NodeNameIndex {
 public:
  explicit NodeNameIndex(const Graph& g);
  size_t size() const { return size_; }
  // Marks the named nodes as belonging to group `group` of `o`; names not in the graph are
  // skipped (a run of another version of the model).
  template <typename Names>
  void assign(NodeOverlay& o, const Names& names, int group) const {
    for (const auto& n : names) {
      auto it = ids_.find(std::string(n));
      if (it != ids_.end()) o.group_of_node[static_cast<size_t>(it->second)] = group;
    }
  }

 private:
  size_t size_;
  std::unordered_map<std::string, NodeId> ids_;
};

}  // namespace sod2::studio
