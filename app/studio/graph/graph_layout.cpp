#include "app/studio/graph/graph_layout.h"

#include <algorithm>
#include <string>

namespace sod2::studio {
namespace {

constexpr double kCharWidth = 7.0;     // an average character of the view's 9-point font
constexpr size_t kMaxLabelChars = 28;  // the view elides longer names

double text_width(const std::string& s) {
  return kCharWidth * static_cast<double>(std::min(s.size(), kMaxLabelChars));
}

}  // namespace

NodeBox node_size(const DisplayNode& node) {
  NodeBox b;
  switch (node.kind) {
    case DisplayNodeKind::kGraphInput:
    case DisplayNodeKind::kGraphOutput:
      b.w = std::clamp(text_width(node.label) + 16, 48.0, 200.0);
      b.h = 22;
      break;
    case DisplayNodeKind::kOp:
    case DisplayNodeKind::kGroup:
    case DisplayNodeKind::kScope:
    case DisplayNodeKind::kShapes:
      // Two lines: the op (or the box's ops) and the name (or the box's kind).
      b.w = std::clamp(std::max(text_width(node.op), text_width(node.label)) + 20, 64.0, 220.0);
      b.h = is_box(node) ? 40 : 36;
      break;
  }
  return b;
}

LayoutPoint path_midpoint(const EdgePath& path) {
  const auto& p = path.points;
  if (p.empty()) return {};
  if (p.size() == 1) return p.front();
  if (path.bezier && p.size() >= 4) {
    // The middle cubic segment evaluated at t = 0.5.
    const size_t segments = (p.size() - 1) / 3;
    const size_t s = 3 * (segments / 2);
    const LayoutPoint &a = p[s], &b = p[s + 1], &c = p[s + 2], &d = p[s + 3];
    return {(a.x + 3 * b.x + 3 * c.x + d.x) / 8, (a.y + 3 * b.y + 3 * c.y + d.y) / 8};
  }
  const size_t s = (p.size() - 2) / 2;  // of an even count of segments, the upper middle one
  return {(p[s].x + p[s + 1].x) / 2, (p[s].y + p[s + 1].y) / 2};
}

Expected<GraphLayout> layout_graph(const DisplayGraph& graph, const LayoutOptions& options,
                                   const std::atomic<bool>* cancel) {
  const bool too_big = static_cast<int>(graph.nodes.size()) > options.dot_max_nodes;
  if (options.force_layered || too_big) {
    auto layered = layered_layout(graph, options, cancel);
    if (layered.ok() && too_big && !options.force_layered)
      layered->note = std::to_string(graph.nodes.size()) + " nodes: above dot's limit of " +
                      std::to_string(options.dot_max_nodes);
    return layered;
  }
  auto dot = dot_layout(graph, cancel);
  if (dot.ok() || dot.status().code() == StatusCode::kCancelled) return dot;
  // A Graphviz failure still leaves the user a picture, and says why it is not dot's.
  auto layered = layered_layout(graph, options, cancel);
  if (layered.ok()) layered->note = dot.status().message();
  return layered;
}

}  // namespace sod2::studio
