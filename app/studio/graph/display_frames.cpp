#include "app/studio/graph/display_frames.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace sod2::studio {
namespace {

FrameRect rect_of(const NodeBox& b) {
  return {b.x - b.w / 2, b.y - b.h / 2, b.x + b.w / 2, b.y + b.h / 2};
}

void unite(std::optional<FrameRect>& into, const FrameRect& r) {
  if (!into) {
    into = r;
    return;
  }
  into = FrameRect{std::min(into->left, r.left), std::min(into->top, r.top),
                   std::max(into->right, r.right), std::max(into->bottom, r.bottom)};
}

struct Gathered {
  std::optional<FrameRect> rect;
  std::vector<int> nodes;
  std::string title;
};

}  // namespace

std::vector<DisplayFrame> display_frames(const DisplayGraph& graph,
                                         const std::vector<NodeBox>& boxes) {
  std::vector<DisplayFrame> out;
  if (boxes.size() != graph.nodes.size()) return out;
  auto box = [&](const DisplayNode& n) { return rect_of(boxes[static_cast<size_t>(n.id)]); };
  auto emit = [&out](DisplayFrameKind kind, int target, Gathered g) {
    if (g.rect) out.push_back({kind, target, std::move(g.title), *g.rect, std::move(g.nodes)});
  };

  // Open fused groups shown with >= 2 members, titled by their op types.
  std::map<int, Gathered> groups;
  for (const DisplayNode& n : graph.nodes) {
    if (n.group < 0 || n.is_group_box) continue;
    Gathered& g = groups[n.group];
    unite(g.rect, box(n));
    g.nodes.push_back(n.id);
    if (g.title.empty())
      g.title = n.op;
    else if (g.title.find(n.op) == std::string::npos)
      g.title += "+" + n.op;
  }
  for (auto& [group, g] : groups)
    if (g.nodes.size() >= 2) emit(DisplayFrameKind::kFusedGroup, group, std::move(g));

  // Open shape computations.
  std::map<int, Gathered> shapes;
  for (const DisplayNode& n : graph.nodes) {
    if (n.kind != DisplayNodeKind::kOp || n.shape_cluster < 0 || n.body_of) continue;
    Gathered& g = shapes[n.shape_cluster];
    unite(g.rect, box(n));
    g.nodes.push_back(n.id);
    g.title = "shape computation";
  }
  for (auto& [cluster, g] : shapes) emit(DisplayFrameKind::kShapes, cluster, std::move(g));

  // Open name scopes: a frame holds its nodes and its inner scopes' frames, so children are
  // measured first (they come after their parent in open_scopes).
  const size_t frames = graph.open_scopes.size();
  std::vector<Gathered> scopes(frames);
  for (const DisplayNode& n : graph.nodes) {
    if (n.in_scope < 0 || static_cast<size_t>(n.in_scope) >= frames) continue;
    unite(scopes[static_cast<size_t>(n.in_scope)].rect, box(n));
    // Held by its frame and every frame around it.
    for (int f = n.in_scope; f >= 0 && static_cast<size_t>(f) < frames;) {
      scopes[static_cast<size_t>(f)].nodes.push_back(n.id);
      const int parent = graph.open_scopes[static_cast<size_t>(f)].parent;
      if (parent >= f) break;
      f = parent;
    }
  }
  for (size_t i = frames; i-- > 0;) {
    const int parent = graph.open_scopes[i].parent;
    if (!scopes[i].rect || parent < 0 || static_cast<size_t>(parent) >= i) continue;
    unite(scopes[static_cast<size_t>(parent)].rect, framed(*scopes[i].rect));
  }
  for (size_t i = 0; i < frames; ++i) {
    scopes[i].title = graph.open_scopes[i].title;
    emit(DisplayFrameKind::kScope, graph.open_scopes[i].scope, std::move(scopes[i]));
  }

  // Open bodies: one frame per body around its nodes. A nested body's nodes are listed with
  // their own body_of, so its frame lies inside the one holding its If/Loop/Scan.
  std::map<const Node*, int> control_id;
  for (const DisplayNode& n : graph.nodes)
    if (n.body_expanded) control_id[n.node] = n.id;
  std::map<std::pair<const Node*, std::string>, Gathered> bodies;
  for (const DisplayNode& n : graph.nodes) {
    if (!n.body_of) continue;
    Gathered& g = bodies[{n.body_of, n.body}];
    unite(g.rect, box(n));
    g.nodes.push_back(n.id);
  }
  for (auto& [key, g] : bodies) {
    const auto it = control_id.find(key.first);
    if (it == control_id.end()) continue;
    g.title = key.second + " of " + graph.nodes[static_cast<size_t>(it->second)].label;
    emit(DisplayFrameKind::kBody, it->second, std::move(g));
  }
  return out;
}

}  // namespace sod2::studio
