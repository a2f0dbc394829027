// A quantity per fused group of a run, drawn over the graph in place of the class colours: the
// measured time of a profile as a heat map, its output bytes, or the change between two runs of
// the history (red slower, blue faster). No Qt: built from runs and tested headless.
#pragma once

#include <optional>
#include <string>
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

  // What a drawn node shows: the sum over the distinct groups its members ran in (a box of
  // several groups, or one node of a group that ran fused); nullopt when none of them ran.
  std::optional<double> value_of(const DisplayNode& node) const;
  // The tooltip line for a drawn node: "measured time: 0.412 ms (Conv+Relu /conv1)".
  std::string describe(const DisplayNode& node) const;
  // The largest |value|: the colour scale's end.
  double max_abs() const;
};

// "0.412 ms", "1.5 MiB", "+0.120 ms": a value in the overlay's unit.
std::string overlay_value_text(const NodeOverlay& overlay, double value);

}  // namespace sod2::studio
