#include "app/studio/graph/incremental_layout.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sod2::studio {
namespace {

// What is the same thing in two builds of the display graph: a node by its core node, a box by
// what it holds, an input or output by its value's name.
struct NodeKey {
  int kind = 0;
  const void* node = nullptr;
  int index = -1;
  std::string name;
  bool operator==(const NodeKey&) const = default;
};

struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const {
    size_t h = std::hash<const void*>()(k.node);
    h ^= std::hash<int>()(k.kind * 1000003 + k.index) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    if (!k.name.empty()) h ^= std::hash<std::string>()(k.name) + (h << 6) + (h >> 2);
    return h;
  }
};

NodeKey key_of(const DisplayNode& n) {
  switch (n.kind) {
    case DisplayNodeKind::kOp:
      // A package's nodes have no core Node: its main-graph node id names it.
      if (!n.node && !n.members.empty()) return {0, nullptr, n.members.front(), {}};
      return {0, n.node, -1, {}};
    case DisplayNodeKind::kGroup: return {1, nullptr, n.group, {}};
    case DisplayNodeKind::kScope: return {2, nullptr, n.scope, {}};
    case DisplayNodeKind::kShapes: return {3, nullptr, n.shape_cluster, {}};
    case DisplayNodeKind::kGraphInput: return {4, nullptr, -1, n.label};
    case DisplayNodeKind::kGraphOutput: return {5, nullptr, -1, n.label};
  }
  return {6, nullptr, n.id, {}};
}

// Whether two builds' nodes keyed alike are drawn at one size (a kept node keeps its box).
bool same_size(const NodeBox& a, const NodeBox& b) {
  return std::abs(a.w - b.w) < 0.5 && std::abs(a.h - b.h) < 0.5;
}

class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void unite(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

using Rect = FrameRect;

double centre_x(const Rect& r) { return (r.left + r.right) / 2; }

Rect rect_of(const NodeBox& b) {
  return {b.x - b.w / 2, b.y - b.h / 2, b.x + b.w / 2, b.y + b.h / 2};
}

// One box opened (one node before, its contents now) or boxes closed (several before, one now).
struct Change {
  std::vector<int> before;  // ids in the `before` graph
  std::vector<int> now;     // ids in the `now` graph
  Rect drawn;               // where `before` drew it
  Rect place;               // that, moved as room is made for the changes before it
};

// Makes room: `from` (where something was) becomes `to` (what is there now), which has the same
// top. Centres wholly right of `from` move right by the growth on the right, wholly left move
// left, wholly below move down: a non-decreasing shift per axis, so every pair of boxes (and
// every frame around a set of them) keeps its order and gets no closer.
struct Room {
  Rect from;
  double left = 0, right = 0, down = 0;

  void move(NodeBox& b) const {
    if (b.x > from.right)
      b.x += right;
    else if (b.x < from.left)
      b.x -= left;
    if (b.y > from.bottom) b.y += down;
  }
  void move(Rect& r) const {
    NodeBox b{centre_x(r), (r.top + r.bottom) / 2, r.right - r.left, r.bottom - r.top};
    move(b);
    r = rect_of(b);
  }
};

EdgePath fresh_route(const NodeBox& a, const NodeBox& b) {
  const LayoutPoint s{a.x, a.y + a.h / 2}, t{b.x, b.y - b.h / 2};
  const double bend = std::max(20.0, std::abs(t.y - s.y) / 2);
  EdgePath p;
  p.bezier = true;
  p.points = {s, {s.x, s.y + bend}, {t.x, t.y - bend}, t};
  return p;
}

void translate(EdgePath& p, double dx, double dy) {
  for (LayoutPoint& q : p.points) {
    q.x += dx;
    q.y += dy;
  }
}

// The display graph of `ids` alone (their edges among themselves and the open scopes they are
// drawn in), for laying out an opened box's contents. `edge_of` gets, per edge of `graph`, its
// index in the result or -1.
DisplayGraph subgraph(const DisplayGraph& graph, const std::vector<int>& ids,
                      std::vector<int>* edge_of) {
  DisplayGraph sub;
  std::vector<int> sub_id(graph.nodes.size(), -1);
  std::vector<int> frame_of(graph.open_scopes.size(), -1);
  std::vector<bool> frame_used(graph.open_scopes.size(), false);
  for (int id : ids)
    for (int f = graph.nodes[static_cast<size_t>(id)].in_scope;
         f >= 0 && static_cast<size_t>(f) < frame_used.size() &&
         !frame_used[static_cast<size_t>(f)];
         f = graph.open_scopes[static_cast<size_t>(f)].parent)
      frame_used[static_cast<size_t>(f)] = true;
  for (size_t f = 0; f < graph.open_scopes.size(); ++f) {  // parents come first
    if (!frame_used[f]) continue;
    DisplayScopeFrame frame = graph.open_scopes[f];
    const int parent = frame.parent;
    frame.parent =
        parent >= 0 && static_cast<size_t>(parent) < f ? frame_of[static_cast<size_t>(parent)] : -1;
    frame_of[f] = static_cast<int>(sub.open_scopes.size());
    sub.open_scopes.push_back(std::move(frame));
  }
  for (int id : ids) {
    DisplayNode n = graph.nodes[static_cast<size_t>(id)];
    n.id = static_cast<int>(sub.nodes.size());
    if (n.in_scope >= 0 && static_cast<size_t>(n.in_scope) < frame_of.size())
      n.in_scope = frame_of[static_cast<size_t>(n.in_scope)];
    sub_id[static_cast<size_t>(id)] = n.id;
    sub.nodes.push_back(std::move(n));
  }
  edge_of->assign(graph.edges.size(), -1);
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    const DisplayEdge& edge = graph.edges[e];
    const int from = sub_id[static_cast<size_t>(edge.from)];
    const int to = sub_id[static_cast<size_t>(edge.to)];
    if (from < 0 || to < 0) continue;
    (*edge_of)[e] = static_cast<int>(sub.edges.size());
    sub.edges.push_back({from, to, edge.label, edge.value});
  }
  return sub;
}

bool overlaps_any(const NodeBox& box, const std::vector<NodeBox>& boxes,
                  const std::vector<bool>& placed) {
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (!placed[i]) continue;
    const NodeBox& o = boxes[i];
    if (std::abs(o.x - box.x) < (o.w + box.w) / 2 && std::abs(o.y - box.y) < (o.h + box.h) / 2)
      return true;
  }
  return false;
}

bool intersects(const Rect& a, const Rect& b) {
  constexpr double kSlack = 0.5;
  return a.left < b.right - kSlack && b.left < a.right - kSlack && a.top < b.bottom - kSlack &&
         b.top < a.bottom - kSlack;
}

// Whether `boxes` draw `graph` with no two nodes overlapping and no node inside a frame it is
// not drawn in (open scopes, fused groups, shape computations), as the view frames them. False
// also when checking would cost too much, or bodies are open (their nodes are not framed apart).
bool nothing_overlaps(const DisplayGraph& graph, const std::vector<NodeBox>& boxes) {
  const size_t n = graph.nodes.size();
  std::vector<size_t> by_top(n);
  std::iota(by_top.begin(), by_top.end(), 0);
  auto top = [&](size_t i) { return boxes[i].y - boxes[i].h / 2; };
  std::sort(by_top.begin(), by_top.end(), [&](size_t a, size_t b) { return top(a) < top(b); });
  for (size_t k = 0; k < n; ++k) {
    const Rect a = rect_of(boxes[by_top[k]]);
    for (size_t m = k + 1; m < n && top(by_top[m]) < a.bottom; ++m)
      if (intersects(a, rect_of(boxes[by_top[m]]))) return false;
  }
  // Frames (a box's contents are framed: the room made for them includes the frame), each
  // against the nodes it does not hold.
  for (const DisplayNode& node : graph.nodes)
    if (node.body_of) return false;
  const std::vector<DisplayFrame> frames = display_frames(graph, boxes);
  if (frames.size() * n > 4'000'000) return false;
  std::vector<bool> holds(n);
  for (const DisplayFrame& f : frames) {
    std::fill(holds.begin(), holds.end(), false);
    for (int id : f.nodes) holds[static_cast<size_t>(id)] = true;
    const Rect r = framed(f.members);
    for (size_t i = 0; i < n; ++i)
      if (!holds[i] && intersects(r, rect_of(boxes[i]))) return false;
  }
  return true;
}

// Ids are indices and edges name nodes that exist.
bool well_formed(const DisplayGraph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].id != static_cast<int>(i)) return false;
  const int n = static_cast<int>(g.nodes.size());
  return std::all_of(g.edges.begin(), g.edges.end(), [n](const DisplayEdge& e) {
    return e.from >= 0 && e.from < n && e.to >= 0 && e.to < n;
  });
}

}  // namespace

Expected<std::optional<GraphLayout>> incremental_layout(const DisplayGraph& before,
                                                        const GraphLayout& before_layout,
                                                        const DisplayGraph& now,
                                                        const LayoutOptions& options,
                                                        const std::atomic<bool>* cancel) {
  const size_t nb = before.nodes.size(), nn = now.nodes.size();
  if (before_layout.nodes.size() != nb || before_layout.edges.size() != before.edges.size() ||
      !well_formed(before) || !well_formed(now))
    return std::optional<GraphLayout>{};

  // Pair the nodes of both builds; a key drawn twice makes the pairing meaningless.
  std::unordered_map<NodeKey, int, NodeKeyHash> before_by_key;
  for (const DisplayNode& n : before.nodes)
    if (!before_by_key.emplace(key_of(n), n.id).second) return std::optional<GraphLayout>{};
  std::vector<int> twin(nn, -1);  // now id -> before id of the same thing
  std::vector<int> kept(nn, -1);  // now id -> before id, when it also keeps its box
  std::vector<bool> before_kept(nb, false);
  DisjointSets sets(nb + nn);  // before ids, then now ids offset by nb
  {
    std::unordered_map<NodeKey, int, NodeKeyHash> now_keys;
    for (const DisplayNode& n : now.nodes) {
      NodeKey key = key_of(n);
      const auto it = before_by_key.find(key);
      if (!now_keys.emplace(std::move(key), n.id).second) return std::optional<GraphLayout>{};
      if (it == before_by_key.end()) continue;
      const size_t j = static_cast<size_t>(n.id);
      twin[j] = it->second;
      sets.unite(static_cast<size_t>(it->second), nb + j);
      if (same_size(node_size(n), before_layout.nodes[static_cast<size_t>(it->second)])) {
        kept[j] = it->second;
        before_kept[static_cast<size_t>(it->second)] = true;
      }
    }
  }
  std::vector<bool> now_kept(nn);
  for (size_t j = 0; j < nn; ++j) now_kept[j] = kept[j] >= 0;

  // What changed hangs together by the core nodes it shows, and a body's nodes by the
  // If/Loop/Scan holding them.
  for (size_t i = 0; i < nb; ++i) {
    if (before_kept[i]) continue;
    for (NodeId m : before.nodes[i].members)
      if (const int a = now.display_node_of(m); a >= 0 && !now_kept[static_cast<size_t>(a)])
        sets.unite(i, nb + static_cast<size_t>(a));
  }
  for (size_t j = 0; j < nn; ++j) {
    if (now_kept[j]) continue;
    for (NodeId m : now.nodes[j].members)
      if (const int r = before.display_node_of(m); r >= 0 && !before_kept[static_cast<size_t>(r)])
        sets.unite(nb + j, static_cast<size_t>(r));
  }
  auto unite_bodies = [&sets](const DisplayGraph& g, size_t offset) {
    std::unordered_map<const Node*, size_t> shown;
    for (const DisplayNode& n : g.nodes)
      if (n.kind == DisplayNodeKind::kOp && n.node)
        shown.emplace(n.node, static_cast<size_t>(n.id));
    for (const DisplayNode& n : g.nodes)
      if (n.body_of)
        if (const auto it = shown.find(n.body_of); it != shown.end())
          sets.unite(offset + static_cast<size_t>(n.id), offset + it->second);
  };
  unite_bodies(before, 0);
  unite_bodies(now, nb);

  std::map<size_t, Change> by_root;
  for (size_t i = 0; i < nb; ++i) by_root[sets.find(i)].before.push_back(static_cast<int>(i));
  for (size_t j = 0; j < nn; ++j) by_root[sets.find(nb + j)].now.push_back(static_cast<int>(j));
  std::vector<Change> changes;
  for (auto& [root, c] : by_root) {
    const bool unchanged = c.before.size() == 1 && c.now.size() == 1 &&
                           kept[static_cast<size_t>(c.now[0])] == c.before[0];
    if (unchanged) continue;
    // Opened (one before) or closed into one (one now); anything else is not a box toggled.
    if (c.before.empty() || c.now.empty() || (c.before.size() > 1 && c.now.size() > 1))
      return std::optional<GraphLayout>{};
    changes.push_back(std::move(c));
  }
  // An If/Loop/Scan opening or closing its bodies is kept but drawn again with them.
  for (const Change& c : changes)
    for (int j : c.now) kept[static_cast<size_t>(j)] = -1;

  std::vector<NodeBox> box(nn);
  std::vector<bool> placed(nn, false);
  // Where each node stood when its route was made: routes are kept when both ends moved alike.
  std::vector<LayoutPoint> routed_at(nn);
  std::vector<std::optional<EdgePath>> route(now.edges.size());
  for (size_t j = 0; j < nn; ++j) {
    if (kept[j] < 0) continue;
    box[j] = before_layout.nodes[static_cast<size_t>(kept[j])];
    placed[j] = true;
    routed_at[j] = {box[j].x, box[j].y};
  }
  {
    std::map<std::pair<int, int>, size_t> before_edge;
    for (size_t e = 0; e < before.edges.size(); ++e)
      before_edge.emplace(std::make_pair(before.edges[e].from, before.edges[e].to), e);
    for (size_t e = 0; e < now.edges.size(); ++e) {
      const int from = kept[static_cast<size_t>(now.edges[e].from)];
      const int to = kept[static_cast<size_t>(now.edges[e].to)];
      if (from < 0 || to < 0) continue;
      if (const auto it = before_edge.find({from, to}); it != before_edge.end())
        route[e] = before_layout.edges[it->second];
    }
  }
  for (Change& c : changes) {
    const std::vector<int>& ids = c.before;
    Rect r = rect_of(before_layout.nodes[static_cast<size_t>(ids[0])]);
    for (int id : ids) {
      const Rect b = rect_of(before_layout.nodes[static_cast<size_t>(id)]);
      r = {std::min(r.left, b.left), std::min(r.top, b.top), std::max(r.right, b.right),
           std::max(r.bottom, b.bottom)};
    }
    if (ids.size() > 1) r = framed(r);
    c.drawn = c.place = r;
  }

  // Dot's drawing while the whole would still be given to dot (layout_graph's rule), else the
  // layered one's.
  const bool dot_drawing = before_layout.used_dot && !options.force_layered &&
                           nn <= static_cast<size_t>(std::max(0, options.dot_max_nodes));
  auto make_room = [&](const Room& room, size_t current) {
    for (size_t j = 0; j < nn; ++j)
      if (placed[j]) room.move(box[j]);
    for (size_t k = current + 1; k < changes.size(); ++k) room.move(changes[k].place);
  };

  for (size_t k = 0; k < changes.size(); ++k) {
    if (cancel && cancel->load()) return cancelled("graph layout cancelled");
    Change& c = changes[k];
    const Rect from = c.place;
    if (c.now.size() == 1) {
      // Closed into one box: at its own old place when it had one (an If/Loop/Scan closing its
      // bodies), else at the top of the space its contents took, which they alone filled.
      const size_t j = static_cast<size_t>(c.now[0]);
      NodeBox b = node_size(now.nodes[j]);
      const int old = twin[j];
      if (old >= 0 && std::find(c.before.begin(), c.before.end(), old) != c.before.end()) {
        const NodeBox& was = before_layout.nodes[static_cast<size_t>(old)];
        b.x = was.x + (from.left - c.drawn.left);
        b.y = was.y - was.h / 2 + b.h / 2 + (from.top - c.drawn.top);
      } else {
        b.x = centre_x(from);
        b.y = from.top + b.h / 2;
      }
      const Rect to = rect_of(b);
      make_room({from, std::max(0.0, from.left - to.left), std::max(0.0, to.right - from.right),
                 std::max(0.0, to.bottom - from.bottom)},
                k);
      // Bodies' nodes are not clustered, so others may stand inside their span.
      if (overlaps_any(b, box, placed)) return std::optional<GraphLayout>{};
      box[j] = b;
      placed[j] = true;
      routed_at[j] = {b.x, b.y};
      continue;
    }
    // Opened: its contents laid out alone, framed, their frame's top where the box's top was.
    std::vector<int> edge_of;
    const DisplayGraph sub = subgraph(now, c.now, &edge_of);
    // Laid out as the drawing it goes into would be: a layered drawing gets layered contents
    // (dot would look foreign there, and takes ~25 ms to start even for a few nodes).
    LayoutOptions inner_options = options;
    inner_options.force_layered = !dot_drawing;
    auto inner = layout_graph(sub, inner_options, cancel);
    if (!inner.ok()) return inner.status();
    const double width = inner->width + 2 * kFrameSide;
    const double height = inner->height + kFrameTop + kFrameBottom;
    const Rect to{centre_x(from) - width / 2, from.top, centre_x(from) + width / 2,
                  from.top + height};
    make_room({from, std::max(0.0, from.left - to.left), std::max(0.0, to.right - from.right),
               std::max(0.0, to.bottom - from.bottom)},
              k);
    const double dx = to.left + kFrameSide, dy = to.top + kFrameTop;
    for (size_t s = 0; s < c.now.size(); ++s) {
      const size_t j = static_cast<size_t>(c.now[s]);
      NodeBox b = inner->nodes[s];
      b.x += dx;
      b.y += dy;
      box[j] = b;
      placed[j] = true;
      routed_at[j] = {b.x, b.y};
    }
    for (size_t e = 0; e < now.edges.size(); ++e) {
      if (edge_of[e] < 0) continue;
      EdgePath p = inner->edges[static_cast<size_t>(edge_of[e])];
      translate(p, dx, dy);
      route[e] = std::move(p);
    }
  }

  // One box closed: the room its contents took closes up, across and up, or else only up,
  // where that brings nothing onto anything.
  if (changes.size() == 1 && changes[0].now.size() == 1 && changes[0].before.size() > 1) {
    const Rect from = changes[0].place;
    const Rect to = rect_of(box[static_cast<size_t>(changes[0].now[0])]);
    const double up = std::min(0.0, to.bottom - from.bottom);
    for (const Room& room :
         {Room{from, std::min(0.0, from.left - to.left), std::min(0.0, to.right - from.right), up},
          Room{from, 0, 0, up}}) {
      std::vector<NodeBox> closer = box;
      for (size_t j = 0; j < nn; ++j)
        if (static_cast<int>(j) != changes[0].now[0]) room.move(closer[j]);
      if (!nothing_overlaps(now, closer)) continue;
      box = std::move(closer);
      break;
    }
  }

  GraphLayout out;
  out.used_dot = dot_drawing;
  out.nodes = std::move(box);
  // Nothing may start left of or above the drawing's origin.
  double min_x = 0, min_y = 0;
  for (const NodeBox& b : out.nodes) {
    min_x = std::min(min_x, b.x - b.w / 2);
    min_y = std::min(min_y, b.y - b.h / 2);
  }
  for (NodeBox& b : out.nodes) {
    b.x -= min_x;
    b.y -= min_y;
  }
  out.moved = {-min_x, -min_y};
  out.edges.reserve(now.edges.size());
  for (size_t e = 0; e < now.edges.size(); ++e) {
    const size_t from = static_cast<size_t>(now.edges[e].from);
    const size_t to = static_cast<size_t>(now.edges[e].to);
    const NodeBox &a = out.nodes[from], &b = out.nodes[to];
    const double ax = a.x - routed_at[from].x, ay = a.y - routed_at[from].y;
    const double bx = b.x - routed_at[to].x, by = b.y - routed_at[to].y;
    EdgePath p;
    if (route[e] && std::abs(ax - bx) < 1e-6 && std::abs(ay - by) < 1e-6) {
      p = std::move(*route[e]);
      translate(p, ax, ay);
    } else {
      p = fresh_route(a, b);
    }
    const LayoutPoint mid = path_midpoint(p);
    p.label_x = mid.x;
    p.label_y = mid.y;
    out.edges.push_back(std::move(p));
  }
  for (const NodeBox& b : out.nodes) {
    out.width = std::max(out.width, b.x + b.w / 2);
    out.height = std::max(out.height, b.y + b.h / 2);
  }
  for (const EdgePath& p : out.edges)
    for (const LayoutPoint& q : p.points) {
      out.width = std::max(out.width, q.x);
      out.height = std::max(out.height, q.y);
    }
  return std::optional<GraphLayout>(std::move(out));
}

}  // namespace sod2::studio
