// Both layouts on every corpus model (collapsed and expanded) and on a synthetic 10,000-node
// transformer: sound geometry, the dot/layered switch, and cancellation.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "corpus_graphs.h"

namespace sod2::studio {
namespace {

using Clock = std::chrono::steady_clock;
using testing::corpus_graphs;
using testing::expect_sound_layout;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(GraphLayout, DotAndLayeredAreSoundOnEveryCorpusModel) {
  double slowest_dot = 0;
  std::string slowest;
  size_t largest_nodes = 0;
  for (const auto& c : corpus_graphs()) {
    for (const bool expanded : {false, true}) {
      const DisplayGraph d = build_display_graph(
          *c.model, *c.rdp, &c.fusion,
          expanded ? testing::all_multi_node_groups(c.fusion) : std::set<int>{});
      const std::string what = c.name + (expanded ? " expanded" : " collapsed");
      const auto t = Clock::now();
      auto dot = dot_layout(d, nullptr);
      const double dot_s = seconds_since(t);
      ASSERT_TRUE(dot.ok()) << what << ": " << dot.status().to_string();
      EXPECT_TRUE(dot->used_dot);
      expect_sound_layout(d, *dot, what + " (dot)");
      if (expanded && d.nodes.size() > largest_nodes) {
        largest_nodes = d.nodes.size();
        slowest = c.name;
        slowest_dot = dot_s;
      }
      LayoutOptions layered_options;
      layered_options.force_layered = true;
      auto layered = layout_graph(d, layered_options);
      ASSERT_TRUE(layered.ok()) << what << ": " << layered.status().to_string();
      EXPECT_FALSE(layered->used_dot);
      expect_sound_layout(d, *layered, what + " (layered)");
    }
  }
  std::printf("dot on the largest corpus model (%s, %zu display nodes expanded): %.3f s\n",
              slowest.c_str(), largest_nodes, slowest_dot);
}

TEST(GraphLayout, LayoutGraphUsesDotForSmallGraphs) {
  ASSERT_FALSE(corpus_graphs().empty());
  const auto& c = corpus_graphs().front();
  const DisplayGraph d = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
  auto layout = layout_graph(d);
  ASSERT_TRUE(layout.ok()) << layout.status().to_string();
  EXPECT_TRUE(layout->used_dot);
  EXPECT_TRUE(layout->note.empty());
}

TEST(GraphLayout, TenThousandNodesTakeTheLayeredLayout) {
  const DisplayGraph d = testing::synthetic_transformer(10000);
  ASSERT_GE(d.nodes.size(), 10000u);
  const auto t = Clock::now();
  auto layout = layout_graph(d);  // above dot_max_nodes: layered, without being forced
  const double s = seconds_since(t);
  ASSERT_TRUE(layout.ok()) << layout.status().to_string();
  std::printf("layered layout of %zu nodes, %zu edges: %.3f s (%.0f x %.0f points)\n",
              d.nodes.size(), d.edges.size(), s, layout->width, layout->height);
  EXPECT_FALSE(layout->used_dot);
  EXPECT_NE(layout->note.find("dot"), std::string::npos) << layout->note;
  // Its time is printed, not asserted (studio_open_bench measures the user-visible numbers).
  expect_sound_layout(d, *layout, "synthetic transformer");
  // Ranks follow the edges: every edge goes down the drawing.
  for (size_t i = 0; i < d.edges.size(); ++i)
    EXPECT_LT(layout->nodes[static_cast<size_t>(d.edges[i].from)].y,
              layout->nodes[static_cast<size_t>(d.edges[i].to)].y)
        << "edge " << i;
}

TEST(GraphLayout, LayeredToleratesCycles) {
  DisplayGraph d;
  for (int i = 0; i < 4; ++i) {
    DisplayNode n;
    n.id = i;
    n.label = "n" + std::to_string(i);
    d.nodes.push_back(n);
  }
  d.edges = {{0, 1, "", kNoValue},
             {1, 2, "", kNoValue},
             {2, 1, "", kNoValue},
             {2, 3, "", kNoValue},
             {3, 0, "", kNoValue}};
  LayoutOptions o;
  o.force_layered = true;
  auto layout = layout_graph(d, o);
  ASSERT_TRUE(layout.ok()) << layout.status().to_string();
  expect_sound_layout(d, *layout, "cycle");
}

TEST(GraphLayout, EmptyGraph) {
  for (const bool layered : {false, true}) {
    LayoutOptions o;
    o.force_layered = layered;
    auto layout = layout_graph(DisplayGraph{}, o);
    ASSERT_TRUE(layout.ok()) << layout.status().to_string();
    EXPECT_TRUE(layout->nodes.empty());
  }
}

TEST(GraphLayout, CancelledLayoutsSaySo) {
  ASSERT_FALSE(corpus_graphs().empty());
  const auto& c = corpus_graphs().front();
  const DisplayGraph small = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
  const DisplayGraph big = testing::synthetic_transformer(10000);
  const std::atomic<bool> cancel{true};
  for (const DisplayGraph* d : {&small, &big}) {
    auto layout = layout_graph(*d, {}, &cancel);
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.status().code(), StatusCode::kCancelled);
    EXPECT_NE(layout.status().message().find("cancelled"), std::string::npos);
  }
  EXPECT_EQ(dot_layout(small, &cancel).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(layered_layout(big, {}, &cancel).status().code(), StatusCode::kCancelled);
}

TEST(GraphLayout, CancelFromAnotherThreadStopsTheLayeredLayout) {
  // The worker polls between sweeps; a cancel raised while it runs is seen before it returns.
  const DisplayGraph big = testing::synthetic_transformer(40000);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] { cancel = true; });
  auto layout = layered_layout(big, {}, &cancel);
  canceller.join();
  // Either it finished before the flag was raised or it stopped with kCancelled; never garbage.
  if (!layout.ok())
    EXPECT_EQ(layout.status().code(), StatusCode::kCancelled);
  else
    expect_sound_layout(big, *layout, "raced cancel");
}

TEST(GraphLayout, PathMidpoint) {
  EdgePath line;
  line.points = {{0, 0}, {10, 0}, {10, 20}};
  const LayoutPoint m = path_midpoint(line);
  EXPECT_DOUBLE_EQ(m.x, 5);
  EXPECT_DOUBLE_EQ(m.y, 0);
  EdgePath curve;
  curve.bezier = true;
  curve.points = {{0, 0}, {0, 10}, {10, 10}, {10, 20}};
  const LayoutPoint c = path_midpoint(curve);
  EXPECT_DOUBLE_EQ(c.x, 5);
  EXPECT_DOUBLE_EQ(c.y, 10);
}

}  // namespace
}  // namespace sod2::studio
