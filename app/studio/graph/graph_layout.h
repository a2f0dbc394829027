// Positions for a DisplayGraph (DESIGN §8): Graphviz dot for graphs it lays out in about a second,
// a layered layout of our own above that (dot takes 12-23 s for 10,000 nodes here). Runs on a
// worker thread; no Qt. Coordinates are scene units (points), y grows downwards, origin at the
// top-left of the drawing.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "app/studio/graph/display_graph.h"
#include "core/status/status.h"

namespace sod2::studio {

struct LayoutPoint {
  double x = 0, y = 0;
};

// A node's box: (x, y) is its CENTRE; w and h its full width and height.
struct NodeBox {
  double x = 0, y = 0, w = 0, h = 0;
};

struct EdgePath {
  // From the source's border to the target's border. With `bezier`, points are cubic Bezier
  // control points (1 + 3k of them: start, then c1 c2 end per segment), else a polyline.
  std::vector<LayoutPoint> points;
  bool bezier = false;
  double label_x = 0, label_y = 0;  // where the edge's label is centred
};

struct GraphLayout {
  std::vector<NodeBox> nodes;   // per DisplayGraph::nodes index
  std::vector<EdgePath> edges;  // per DisplayGraph::edges index
  double width = 0, height = 0;
  bool used_dot = false;
  std::string note;  // why dot was not used when it was asked for ("" otherwise)
  // From incremental_layout: where the drawing it was made from has its origin in this one (all
  // it kept moved by this, and what made room by more).
  LayoutPoint moved;
};

struct LayoutOptions {
  int dot_max_nodes = 1500;  // above this the layered layout runs (dot takes ~1 s at 2,000)
  bool force_layered = false;
  double rank_gap = 40;  // vertical space between ranks
  double node_gap = 24;  // horizontal space between neighbours in a rank
};

// The size a node is drawn at, from its text (about 7 points per character of the view's font).
NodeBox node_size(const DisplayNode& node);

// The point halfway along a path (the middle segment's midpoint): where its label goes.
LayoutPoint path_midpoint(const EdgePath& path);

// Errors: cancelled (when *cancel turns true; dot itself cannot be interrupted, so with dot this
// is noticed before and after it runs).
Expected<GraphLayout> layout_graph(const DisplayGraph& graph, const LayoutOptions& options = {},
                                   const std::atomic<bool>* cancel = nullptr);

// The two layouts, for tests and benchmarks. dot_layout errors: Graphviz failed, or cancelled.
Expected<GraphLayout> dot_layout(const DisplayGraph& graph, const std::atomic<bool>* cancel);
Expected<GraphLayout> layered_layout(const DisplayGraph& graph, const LayoutOptions& options,
                                     const std::atomic<bool>* cancel);

}  // namespace sod2::studio
