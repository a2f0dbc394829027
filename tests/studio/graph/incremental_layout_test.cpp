// Opening and closing boxes in place (incremental_layout.h): on a scoped transformer and on every
// corpus model, what was not opened or closed moves rigidly (a handful of distinct moves), keeps
// its order and gaps, keeps its edges' routes, and nothing overlaps; what is not a toggle is left
// to a fresh layout.
#include "app/studio/graph/incremental_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "app/studio/graph/graph_hierarchy.h"
#include "corpus_graphs.h"

namespace sod2::studio {
namespace {

using testing::corpus_graphs;
using testing::expect_sound_layout;

using Key = std::tuple<int, const void*, int, int, int, std::string, NodeId>;

Key key(const DisplayNode& n) {
  const bool named =
      n.kind == DisplayNodeKind::kGraphInput || n.kind == DisplayNodeKind::kGraphOutput;
  return {static_cast<int>(n.kind), n.node, n.kind == DisplayNodeKind::kGroup ? n.group : -1,
          n.scope, n.kind == DisplayNodeKind::kShapes ? n.shape_cluster : -1,
          named ? n.label : std::string(),
          // A package's op nodes have no core Node, only their id.
          n.kind == DisplayNodeKind::kOp && !n.node && !n.members.empty() ? n.members.front()
                                                                          : kNoNode};
}

struct Drawing {
  DisplayGraph graph;
  GraphLayout layout;
};

// Per node of `now`, the node of `before` showing the same thing (-1: none).
std::vector<int> same_nodes(const DisplayGraph& before, const DisplayGraph& now) {
  std::map<Key, int> by_key;
  for (const DisplayNode& n : before.nodes) by_key[key(n)] = n.id;
  std::vector<int> out(now.nodes.size(), -1);
  for (const DisplayNode& n : now.nodes)
    if (const auto it = by_key.find(key(n)); it != by_key.end())
      out[static_cast<size_t>(n.id)] = it->second;
  return out;
}

// What did not open or close: moved by one of at most 3 x 2 rigid moves per change, in the same
// order with gaps no narrower, and an edge between two nodes moved alike has its old route moved
// along. Returns the distinct moves, rounded to a point.
std::set<std::pair<long, long>> expect_kept_in_place(const Drawing& before, const Drawing& now,
                                                     const std::string& what,
                                                     bool closing_up = false) {
  const std::vector<int> same = same_nodes(before.graph, now.graph);
  std::vector<std::pair<size_t, size_t>> kept;  // (now, before)
  std::set<std::pair<long, long>> moves;
  for (size_t j = 0; j < same.size(); ++j) {
    if (same[j] < 0) continue;
    const NodeBox& a = before.layout.nodes[static_cast<size_t>(same[j])];
    const NodeBox& b = now.layout.nodes[j];
    if (std::abs(a.w - b.w) > 0.5 || std::abs(a.h - b.h) > 0.5) continue;  // redrawn
    kept.push_back({j, static_cast<size_t>(same[j])});
    moves.insert({std::lround(b.x - a.x), std::lround(b.y - a.y)});
  }
  constexpr double kSlack = 0.5;
  int broken = 0;
  for (const auto& [jp, ip] : kept)
    for (const auto& [jq, iq] : kept) {
      if (closing_up) break;
      const NodeBox &p0 = before.layout.nodes[ip], &q0 = before.layout.nodes[iq];
      const NodeBox &p1 = now.layout.nodes[jp], &q1 = now.layout.nodes[jq];
      const double gap_x0 = (q0.x - q0.w / 2) - (p0.x + p0.w / 2);
      const double gap_y0 = (q0.y - q0.h / 2) - (p0.y + p0.h / 2);
      if (gap_x0 >= 0 && (q1.x - q1.w / 2) - (p1.x + p1.w / 2) < gap_x0 - kSlack && broken++ < 3)
        ADD_FAILURE() << what << ": nodes " << p1.x << "," << p1.y << " and " << q1.x << "," << q1.y
                      << " got closer side by side";
      if (gap_y0 >= 0 && (q1.y - q1.h / 2) - (p1.y + p1.h / 2) < gap_y0 - kSlack && broken++ < 3)
        ADD_FAILURE() << what << ": nodes got closer one above the other";
    }
  EXPECT_EQ(broken, 0) << what;
  // Routes of edges between nodes that moved alike.
  std::map<std::pair<int, int>, size_t> before_edge;
  for (size_t e = 0; e < before.graph.edges.size(); ++e)
    before_edge[{before.graph.edges[e].from, before.graph.edges[e].to}] = e;
  size_t kept_routes = 0;
  for (size_t e = 0; e < now.graph.edges.size(); ++e) {
    const DisplayEdge& edge = now.graph.edges[e];
    const int from = same[static_cast<size_t>(edge.from)], to = same[static_cast<size_t>(edge.to)];
    if (from < 0 || to < 0) continue;
    const auto it = before_edge.find({from, to});
    if (it == before_edge.end()) continue;
    const NodeBox &a0 = before.layout.nodes[static_cast<size_t>(from)],
                  &a1 = now.layout.nodes[static_cast<size_t>(edge.from)];
    const NodeBox &b0 = before.layout.nodes[static_cast<size_t>(to)],
                  &b1 = now.layout.nodes[static_cast<size_t>(edge.to)];
    const double dx = a1.x - a0.x, dy = a1.y - a0.y;
    if (std::abs(b1.x - b0.x - dx) > 1e-6 || std::abs(b1.y - b0.y - dy) > 1e-6) continue;
    const EdgePath& p0 = before.layout.edges[it->second];
    const EdgePath& p1 = now.layout.edges[e];
    EXPECT_EQ(p0.points.size(), p1.points.size()) << what << " edge " << e;
    if (p0.points.size() != p1.points.size()) continue;
    for (size_t k = 0; k < p0.points.size(); ++k) {
      EXPECT_NEAR(p1.points[k].x, p0.points[k].x + dx, 1e-6) << what << " edge " << e;
      EXPECT_NEAR(p1.points[k].y, p0.points[k].y + dy, 1e-6) << what << " edge " << e;
    }
    ++kept_routes;
  }
  EXPECT_GT(kept_routes, 0u) << what;
  return moves;
}

Drawing changed(const Drawing& before, DisplayGraph now, const std::string& what) {
  auto layout = incremental_layout(before.graph, before.layout, now);
  EXPECT_TRUE(layout.ok()) << what << ": " << layout.status().to_string();
  if (!layout.ok()) return {};
  EXPECT_TRUE(layout->has_value()) << what << ": not taken for an open or a close";
  if (!layout->has_value()) return {};
  Drawing out{std::move(now), std::move(**layout)};
  expect_sound_layout(out.graph, out.layout, what);
  return out;
}

TEST(IncrementalLayout, OpeningAndClosingALayerMovesTheRestRigidly) {
  const testing::CorpusGraph c = testing::compile_synthetic(2000);
  const GraphHierarchy h = build_hierarchy(*c.model->graph, *c.rdp, &c.fusion);
  DisplayState closed;
  closed.expanded_scopes = h.default_expanded;
  Drawing before;
  before.graph = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, closed);
  auto full = layout_graph(before.graph);
  ASSERT_TRUE(full.ok()) << full.status().to_string();
  before.layout = std::move(*full);

  int opened = 0;
  for (const DisplayNode& box : before.graph.nodes) {
    if (box.kind != DisplayNodeKind::kScope || opened == 4) continue;
    ++opened;
    const std::string what = "opening " + h.scopes[static_cast<size_t>(box.scope)].path;
    DisplayState open = closed;
    open.expanded_scopes.insert(box.scope);
    const Drawing after =
        changed(before, build_display_graph(*c.model, *c.rdp, &c.fusion, &h, open), what);
    ASSERT_GT(after.graph.nodes.size(), before.graph.nodes.size()) << what;
    // Left, in its column, right; above or level, below: at most six moves.
    EXPECT_LE(expect_kept_in_place(before, after, what).size(), 6u) << what;

    // Closing it again: the box takes the top of the place its contents took.
    const Drawing back = changed(
        after, build_display_graph(*c.model, *c.rdp, &c.fusion, &h, closed), "closing: " + what);
    ASSERT_EQ(back.graph.nodes.size(), before.graph.nodes.size()) << what;
    // Closing closes up the room it had; the input above it stays (up to the drawing's origin).
    expect_kept_in_place(after, back, "closing: " + what, /*closing_up=*/true);
    EXPECT_LT(back.layout.height, after.layout.height - 100) << what;
    double dx = 0, dy = 0;
    const std::vector<int> same = same_nodes(after.graph, back.graph);
    for (size_t i = 0; i < back.graph.nodes.size(); ++i)
      if (back.graph.nodes[i].kind == DisplayNodeKind::kGraphInput && same[i] >= 0) {
        const NodeBox& b = back.layout.nodes[i];
        const NodeBox& a = after.layout.nodes[static_cast<size_t>(same[i])];
        dx = b.x - a.x;
        dy = b.y - a.y;
        break;
      }
    double top = 1e300, left = 1e300, right = -1e300;
    for (const DisplayNode& n : after.graph.nodes) {
      if (n.members.empty() ||
          std::find(box.members.begin(), box.members.end(), n.members.front()) == box.members.end())
        continue;
      const NodeBox& b = after.layout.nodes[static_cast<size_t>(n.id)];
      top = std::min(top, b.y - b.h / 2);
      left = std::min(left, b.x - b.w / 2);
      right = std::max(right, b.x + b.w / 2);
    }
    const NodeBox& shut =
        back.layout.nodes[static_cast<size_t>(back.graph.display_node_of(box.members.front()))];
    EXPECT_NEAR(shut.x, (left + right) / 2 + dx, 1.0) << what;
    EXPECT_NEAR(shut.y - shut.h / 2, top - 18 + dy, 1.0) << what;
  }
  EXPECT_EQ(opened, 4);
}

TEST(IncrementalLayout, OpeningAFusedGroupOrBodiesOnEveryCorpusModelKeepsTheRest) {
  int groups = 0, bodies = 0;
  for (const auto& c : corpus_graphs()) {
    Drawing before;
    before.graph = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
    auto full = layout_graph(before.graph);
    ASSERT_TRUE(full.ok()) << c.name << ": " << full.status().to_string();
    before.layout = std::move(*full);
    for (const DisplayNode& n : before.graph.nodes) {
      if (n.kind != DisplayNodeKind::kGroup) continue;
      const std::string what = c.name + ": opening group " + std::to_string(n.group);
      const Drawing after =
          changed(before, build_display_graph(*c.model, *c.rdp, &c.fusion, {n.group}), what);
      EXPECT_EQ(after.graph.nodes.size(), before.graph.nodes.size() + n.members.size() - 1) << what;
      if (!after.graph.nodes.empty()) {
        expect_kept_in_place(before, after, what);
        changed(after, before.graph, "closing: " + what);
      }
      ++groups;
      break;  // the first group of each model
    }
    for (const DisplayNode& n : before.graph.nodes) {
      if (!n.has_subgraphs || n.is_group_box || !n.node) continue;
      const std::string what = c.name + ": opening the bodies of " + n.label;
      const Drawing after =
          changed(before, build_display_graph(*c.model, *c.rdp, &c.fusion, {}, {n.node}), what);
      EXPECT_GT(after.graph.nodes.size(), before.graph.nodes.size()) << what;
      if (!after.graph.nodes.empty()) {
        expect_kept_in_place(before, after, what);
        // And closing them: the If/Loop/Scan goes back where it was, relative to the rest.
        changed(after, before.graph, "closing: " + what);
      }
      ++bodies;
      break;
    }
  }
  EXPECT_GE(groups, 5);
  EXPECT_GE(bodies, 2);  // skipnet, lstm_greedy...
}

// A compiled package's drawing has no core Node behind its nodes, only their ids (members).
TEST(IncrementalLayout, APackagesDrawingOpensAScopeInPlaceToo) {
  const testing::CorpusGraph c = testing::compile_synthetic(600);
  const GraphHierarchy h = build_hierarchy(*c.model->graph, *c.rdp, &c.fusion);
  auto as_package = [](DisplayGraph g) {
    for (DisplayNode& n : g.nodes)
      if (n.kind == DisplayNodeKind::kOp) {
        n.node = nullptr;
        n.graph = nullptr;
      }
    return g;
  };
  // A package draws its compiled nodes one by one: no fused-group or shape boxes.
  DisplayState closed;
  closed.expanded_scopes = h.default_expanded;
  closed.expanded_groups = testing::all_multi_node_groups(c.fusion);
  for (size_t k = 0; k < h.shape_clusters.size(); ++k)
    closed.expanded_shapes.insert(static_cast<int>(k));
  Drawing before;
  before.graph = as_package(build_display_graph(*c.model, *c.rdp, &c.fusion, &h, closed));
  auto full = layout_graph(before.graph);
  ASSERT_TRUE(full.ok());
  before.layout = std::move(*full);
  int scope = -1;  // the largest
  size_t largest = 0;
  for (const DisplayNode& n : before.graph.nodes)
    if (n.kind == DisplayNodeKind::kScope && n.members.size() > largest) {
      scope = n.scope;
      largest = n.members.size();
    }
  ASSERT_GT(scope, 0);
  // The scope and every scope inside it open: its nodes drawn one by one.
  DisplayState open = closed;
  std::vector<int> to_open{scope};
  while (!to_open.empty()) {
    const int s = to_open.back();
    to_open.pop_back();
    open.expanded_scopes.insert(s);
    for (int child : h.scopes[static_cast<size_t>(s)].children) to_open.push_back(child);
  }
  Drawing after = changed(
      before, as_package(build_display_graph(*c.model, *c.rdp, &c.fusion, &h, open)), "package");
  size_t ops = 0;
  for (const DisplayNode& n : after.graph.nodes) ops += n.kind == DisplayNodeKind::kOp ? 1 : 0;
  EXPECT_GT(ops, 10u);
  EXPECT_LE(expect_kept_in_place(before, after, "package").size(), 6u);
}

// A 600-node scoped transformer drawn at its default depth, laid out afresh.
struct DefaultDrawing {
  DefaultDrawing() {
    state.expanded_scopes = h.default_expanded;
    graph = build_display_graph(*c.model, *c.rdp, &c.fusion, &h, state);
    auto laid_out = layout_graph(graph);
    EXPECT_TRUE(laid_out.ok()) << laid_out.status().to_string();
    if (laid_out.ok()) layout = std::move(*laid_out);
  }
  testing::CorpusGraph c = testing::compile_synthetic(600);
  GraphHierarchy h = build_hierarchy(*c.model->graph, *c.rdp, &c.fusion);
  DisplayState state;
  DisplayGraph graph;
  GraphLayout layout;
};

TEST(IncrementalLayout, WhatIsNotAnOpenOrACloseIsLeftToAFreshLayout) {
  const DefaultDrawing d;
  const DisplayGraph& graph = d.graph;
  const GraphLayout* layout = &d.layout;
  ASSERT_EQ(layout->nodes.size(), graph.nodes.size());

  // Nothing changed: the same drawing.
  auto same = incremental_layout(graph, *layout, graph);
  ASSERT_TRUE(same.ok() && same->has_value());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    EXPECT_DOUBLE_EQ((*same)->nodes[i].x, layout->nodes[i].x);
    EXPECT_DOUBLE_EQ((*same)->nodes[i].y, layout->nodes[i].y);
  }
  // A layout that is not the graph's.
  GraphLayout short_layout = *layout;
  short_layout.nodes.pop_back();
  auto wrong = incremental_layout(graph, short_layout, graph);
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->has_value());
  // A graph drawing the same thing twice is no open or close.
  DisplayGraph twice = graph;
  twice.nodes.push_back(twice.nodes.front());
  twice.nodes.back().id = static_cast<int>(twice.nodes.size()) - 1;
  auto doubled = incremental_layout(graph, *layout, twice);
  ASSERT_TRUE(doubled.ok());
  EXPECT_FALSE(doubled->has_value());
  // Edges naming nodes that do not exist.
  DisplayGraph broken = graph;
  broken.edges.push_back({0, static_cast<int>(graph.nodes.size()) + 5, "", kNoValue});
  auto bad = incremental_layout(graph, *layout, broken);
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->has_value());
}

TEST(IncrementalLayout, CancelledSaysSo) {
  const DefaultDrawing d;
  int scope = -1;
  for (const DisplayNode& n : d.graph.nodes)
    if (n.kind == DisplayNodeKind::kScope) scope = n.scope;
  ASSERT_GT(scope, 0);
  DisplayState state = d.state;
  state.expanded_scopes.insert(scope);
  const std::atomic<bool> cancel{true};
  auto r = incremental_layout(d.graph, d.layout,
                              build_display_graph(*d.c.model, *d.c.rdp, &d.c.fusion, &d.h, state),
                              {}, &cancel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace sod2::studio
