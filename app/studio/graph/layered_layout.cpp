// A cheap layered (Sugiyama-style) layout for graphs too big for dot: longest-path ranks with
// sources pulled down next to their first reader, virtual nodes along edges that span ranks
// (within a budget, so a value read in every layer cannot make it quadratic), barycentre sweeps
// to order each rank, and x positions that follow the neighbours' mean under the minimum
// spacing (an isotonic regression per rank, solved exactly by pool-adjacent-violators). Every
// step is linear or n log n: 10,000 nodes take a few tens of milliseconds.
#include <algorithm>
#include <deque>
#include <numeric>

#include "app/studio/graph/graph_layout.h"

namespace sod2::studio {
namespace {

constexpr int kOrderSweeps = 4;  // down + up barycentre passes
constexpr int kPlaceSweeps = 3;  // down + up coordinate passes
constexpr double kMargin = 20;
constexpr double kVirtualWeight = 0.05;  // long edges give way to nodes when they compete

bool is_cancelled(const std::atomic<bool>* cancel) { return cancel && cancel->load(); }

struct Vertex {
  int node = -1;  // display node id; -1 for a virtual vertex on a long edge
  int rank = 0;
  double w = 0, h = 0;
  double x = 0;
  int order = 0;              // index within its rank
  std::vector<int> up, down;  // neighbours in rank - 1 and rank + 1
};

class LayeredLayout {
 public:
  LayeredLayout(const DisplayGraph& graph, const LayoutOptions& options,
                const std::atomic<bool>* cancel)
      : graph_(graph), options_(options), cancel_(cancel) {}

  Expected<GraphLayout> run() {
    order_topologically();
    assign_ranks();
    build_vertices();
    if (is_cancelled(cancel_)) return cancelled("graph layout cancelled");
    for (int i = 0; i < kOrderSweeps; ++i) {
      sweep_order(/*downwards=*/true);
      sweep_order(/*downwards=*/false);
      if (is_cancelled(cancel_)) return cancelled("graph layout cancelled");
    }
    pack_ranks();
    for (int i = 0; i < kPlaceSweeps; ++i) {
      sweep_place(/*downwards=*/true);
      sweep_place(/*downwards=*/false);
      if (is_cancelled(cancel_)) return cancelled("graph layout cancelled");
    }
    return emit();
  }

 private:
  // Kahn's algorithm in id order (ids follow the file's order, already near-topological); nodes
  // on a cycle, which a DisplayGraph should not have, go last and their back edges are reversed.
  void order_topologically() {
    const size_t n = graph_.nodes.size();
    std::vector<std::vector<int>> out(n);
    std::vector<int> indegree(n, 0);
    for (const DisplayEdge& e : graph_.edges) {
      if (e.from == e.to) continue;
      out[static_cast<size_t>(e.from)].push_back(e.to);
      ++indegree[static_cast<size_t>(e.to)];
    }
    pos_.assign(n, -1);
    std::deque<int> ready;
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.push_back(static_cast<int>(i));
    int next = 0;
    while (!ready.empty()) {
      const int v = ready.front();
      ready.pop_front();
      pos_[static_cast<size_t>(v)] = next++;
      for (int w : out[static_cast<size_t>(v)])
        if (--indegree[static_cast<size_t>(w)] == 0) ready.push_back(w);
    }
    for (size_t i = 0; i < n; ++i)
      if (pos_[i] < 0) pos_[i] = next++;
  }

  // An edge oriented along the order: (tail, head) with pos[tail] < pos[head].
  std::pair<int, int> oriented(const DisplayEdge& e) const {
    return pos_[static_cast<size_t>(e.from)] < pos_[static_cast<size_t>(e.to)]
               ? std::pair{e.from, e.to}
               : std::pair{e.to, e.from};
  }

  void assign_ranks() {
    const size_t n = graph_.nodes.size();
    std::vector<std::vector<int>> succ(n);
    std::vector<int> preds(n, 0);
    for (const DisplayEdge& e : graph_.edges) {
      if (e.from == e.to) continue;
      const auto [t, h] = oriented(e);
      succ[static_cast<size_t>(t)].push_back(h);
      ++preds[static_cast<size_t>(h)];
    }
    std::vector<int> by_pos(n);
    for (size_t i = 0; i < n; ++i) by_pos[static_cast<size_t>(pos_[i])] = static_cast<int>(i);
    rank_.assign(n, 0);
    for (int v : by_pos)
      for (int w : succ[static_cast<size_t>(v)])
        rank_[static_cast<size_t>(w)] =
            std::max(rank_[static_cast<size_t>(w)], rank_[static_cast<size_t>(v)] + 1);
    // A graph input or a Constant read deep down sits just above its first reader, not at the
    // top with an edge across the whole drawing.
    for (size_t v = 0; v < n; ++v) {
      if (preds[v] != 0 || succ[v].empty()) continue;
      int lowest = rank_[static_cast<size_t>(succ[v].front())];
      for (int w : succ[v]) lowest = std::min(lowest, rank_[static_cast<size_t>(w)]);
      rank_[v] = lowest - 1;
    }
    if (n) {  // the pull can empty the top rank; start at rank 0 all the same
      const int top = *std::min_element(rank_.begin(), rank_.end());
      for (int& r : rank_) r -= top;
    }
    num_ranks_ = n ? *std::max_element(rank_.begin(), rank_.end()) + 1 : 0;
  }

  void build_vertices() {
    const size_t n = graph_.nodes.size();
    vertices_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const NodeBox size = node_size(graph_.nodes[i]);
      vertices_[i].node = static_cast<int>(i);
      vertices_[i].rank = rank_[i];
      vertices_[i].w = size.w;
      vertices_[i].h = size.h;
    }
    // Virtual vertices for the shortest long edges first, within a budget.
    std::vector<size_t> long_edges;
    for (size_t i = 0; i < graph_.edges.size(); ++i) {
      const auto [t, h] = oriented(graph_.edges[i]);
      if (rank_[static_cast<size_t>(h)] - rank_[static_cast<size_t>(t)] > 1)
        long_edges.push_back(i);
    }
    auto span = [&](size_t i) {
      const auto [t, h] = oriented(graph_.edges[i]);
      return rank_[static_cast<size_t>(h)] - rank_[static_cast<size_t>(t)];
    };
    std::stable_sort(long_edges.begin(), long_edges.end(),
                     [&](size_t a, size_t b) { return span(a) < span(b); });
    size_t budget = std::max<size_t>(2000, 4 * n);
    chain_.assign(graph_.edges.size(), {});
    for (size_t i : long_edges) {
      const size_t needed = static_cast<size_t>(span(i) - 1);
      if (needed > budget) break;
      budget -= needed;
      const int t = oriented(graph_.edges[i]).first;
      for (size_t k = 1; k <= needed; ++k) {
        Vertex v;
        v.rank = rank_[static_cast<size_t>(t)] + static_cast<int>(k);
        chain_[i].push_back(static_cast<int>(vertices_.size()));
        vertices_.push_back(v);
      }
    }
    for (size_t i = 0; i < graph_.edges.size(); ++i) {
      const DisplayEdge& e = graph_.edges[i];
      if (e.from == e.to) continue;
      const auto [t, h] = oriented(e);
      const bool adjacent = rank_[static_cast<size_t>(h)] - rank_[static_cast<size_t>(t)] == 1;
      if (!adjacent && chain_[i].empty()) continue;  // drawn straight; does not steer ordering
      std::vector<int> path{t};
      path.insert(path.end(), chain_[i].begin(), chain_[i].end());
      path.push_back(h);
      for (size_t k = 0; k + 1 < path.size(); ++k) {
        vertices_[static_cast<size_t>(path[k])].down.push_back(path[k + 1]);
        vertices_[static_cast<size_t>(path[k + 1])].up.push_back(path[k]);
      }
    }
    // Initial order: the topological order; a virtual vertex right after its edge's tail.
    ranks_.assign(static_cast<size_t>(num_ranks_), {});
    std::vector<double> key(vertices_.size());
    for (size_t i = 0; i < n; ++i) key[i] = pos_[i];
    for (size_t i = 0; i < chain_.size(); ++i)
      for (int v : chain_[i])
        key[static_cast<size_t>(v)] =
            pos_[static_cast<size_t>(oriented(graph_.edges[i]).first)] + 0.5;
    for (size_t v = 0; v < vertices_.size(); ++v)
      ranks_[static_cast<size_t>(vertices_[v].rank)].push_back(static_cast<int>(v));
    for (auto& r : ranks_) sort_rank(r, key);
  }

  void sort_rank(std::vector<int>& rank, const std::vector<double>& key) {
    std::stable_sort(rank.begin(), rank.end(), [&](int a, int b) {
      return key[static_cast<size_t>(a)] < key[static_cast<size_t>(b)];
    });
    for (size_t i = 0; i < rank.size(); ++i)
      vertices_[static_cast<size_t>(rank[i])].order = static_cast<int>(i);
  }

  void sweep_order(bool downwards) {
    std::vector<double> key(vertices_.size());
    const int first = downwards ? 1 : num_ranks_ - 2;
    const int step = downwards ? 1 : -1;
    for (int r = first; r >= 0 && r < num_ranks_; r += step) {
      for (int v : ranks_[static_cast<size_t>(r)]) {
        const Vertex& vx = vertices_[static_cast<size_t>(v)];
        const auto& nb = downwards ? vx.up : vx.down;
        if (nb.empty()) {
          key[static_cast<size_t>(v)] = vx.order;
          continue;
        }
        double sum = 0;
        for (int u : nb) sum += vertices_[static_cast<size_t>(u)].order;
        key[static_cast<size_t>(v)] = sum / static_cast<double>(nb.size());
      }
      sort_rank(ranks_[static_cast<size_t>(r)], key);
    }
  }

  double separation(const Vertex& a, const Vertex& b) const {
    const int real = (a.node >= 0) + (b.node >= 0);
    const double gap = real == 2 ? options_.node_gap : real == 1 ? 12.0 : 8.0;
    return (a.w + b.w) / 2 + gap;
  }

  // Every rank packed at its minimum spacing, centred on x = 0.
  void pack_ranks() {
    for (const auto& rank : ranks_) {
      double x = 0;
      for (size_t i = 0; i < rank.size(); ++i) {
        Vertex& v = vertices_[static_cast<size_t>(rank[i])];
        if (i) x += separation(vertices_[static_cast<size_t>(rank[i - 1])], v);
        v.x = x;
      }
      for (int v : rank) vertices_[static_cast<size_t>(v)].x -= x / 2;
    }
  }

  // Where a vertex would like to be: the median x of its neighbours in the pass's direction, and
  // for a node, of its node neighbours when it has any. A mean, or counting long edges, would
  // pull each residual Add halfway to its skip edge, and that drift adds up block after block
  // into a diagonal drawing.
  double desired_x(const Vertex& v, const std::vector<int>& neighbours) const {
    std::vector<double> xs;
    for (int u : neighbours) {
      const Vertex& n = vertices_[static_cast<size_t>(u)];
      if (v.node < 0 || n.node >= 0) xs.push_back(n.x);
    }
    if (xs.empty())
      for (int u : neighbours) xs.push_back(vertices_[static_cast<size_t>(u)].x);
    if (xs.empty()) return v.x;
    std::sort(xs.begin(), xs.end());
    const size_t m = xs.size() / 2;
    return xs.size() % 2 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
  }

  // Moves each vertex of a rank towards its neighbours' mean x, keeping the order and the
  // minimum spacing: minimise sum w_i (x_i - d_i)^2 subject to x_i >= x_{i-1} + sep_i. With
  // x_i = y_i + o_i (o the cumulative spacing) that is isotonic regression of d_i - o_i.
  void place_rank(const std::vector<int>& rank, bool use_up) {
    struct Block {
      double weight, weighted_sum;
      size_t begin, end;
      double mean() const { return weighted_sum / weight; }
    };
    std::vector<Block> blocks;
    std::vector<double> offset(rank.size(), 0);
    for (size_t i = 0; i < rank.size(); ++i) {
      const Vertex& v = vertices_[static_cast<size_t>(rank[i])];
      if (i) offset[i] = offset[i - 1] + separation(vertices_[static_cast<size_t>(rank[i - 1])], v);
      const double desired = desired_x(v, use_up ? v.up : v.down);
      const double w = v.node >= 0 ? 1.0 : kVirtualWeight;
      blocks.push_back({w, w * (desired - offset[i]), i, i + 1});
      while (blocks.size() >= 2 && blocks[blocks.size() - 2].mean() > blocks.back().mean()) {
        Block top = blocks.back();
        blocks.pop_back();
        blocks.back().weight += top.weight;
        blocks.back().weighted_sum += top.weighted_sum;
        blocks.back().end = top.end;
      }
    }
    for (const Block& b : blocks)
      for (size_t i = b.begin; i < b.end; ++i)
        vertices_[static_cast<size_t>(rank[i])].x = b.mean() + offset[i];
  }

  void sweep_place(bool downwards) {
    const int first = downwards ? 1 : num_ranks_ - 2;
    const int step = downwards ? 1 : -1;
    for (int r = first; r >= 0 && r < num_ranks_; r += step)
      place_rank(ranks_[static_cast<size_t>(r)], /*use_up=*/downwards);
  }

  GraphLayout emit() const {
    GraphLayout out;
    out.used_dot = false;
    // Rank bands: each as tall as its tallest node.
    std::vector<double> centre(static_cast<size_t>(num_ranks_), 0);
    double y = kMargin;
    for (int r = 0; r < num_ranks_; ++r) {
      double h = 0;
      for (int v : ranks_[static_cast<size_t>(r)])
        h = std::max(h, vertices_[static_cast<size_t>(v)].h);
      centre[static_cast<size_t>(r)] = y + h / 2;
      y += h + options_.rank_gap;
    }
    double min_x = 0, max_x = 0;
    bool any = false;
    for (const Vertex& v : vertices_) {
      min_x = any ? std::min(min_x, v.x - v.w / 2) : v.x - v.w / 2;
      max_x = any ? std::max(max_x, v.x + v.w / 2) : v.x + v.w / 2;
      any = true;
    }
    const double shift = kMargin - min_x;
    out.width = (max_x - min_x) + 2 * kMargin;
    out.height = num_ranks_ ? y - options_.rank_gap + kMargin : 2 * kMargin;
    out.nodes.resize(graph_.nodes.size());
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Vertex& v = vertices_[i];
      out.nodes[i] = {v.x + shift, centre[static_cast<size_t>(v.rank)], v.w, v.h};
    }
    out.edges.reserve(graph_.edges.size());
    for (size_t i = 0; i < graph_.edges.size(); ++i) {
      const DisplayEdge& e = graph_.edges[i];
      const NodeBox& a = out.nodes[static_cast<size_t>(e.from)];
      const NodeBox& b = out.nodes[static_cast<size_t>(e.to)];
      // Downwards edges leave a node's bottom and enter the next one's top; an edge against
      // the order (only on a cycle) goes the other way.
      const bool down = a.y <= b.y;
      EdgePath path;
      path.points.push_back({a.x, down ? a.y + a.h / 2 : a.y - a.h / 2});
      std::vector<int> chain = chain_[i];
      if (oriented(e).first != e.from) std::reverse(chain.begin(), chain.end());
      for (int v : chain) {
        const Vertex& vx = vertices_[static_cast<size_t>(v)];
        path.points.push_back({vx.x + shift, centre[static_cast<size_t>(vx.rank)]});
      }
      path.points.push_back({b.x, down ? b.y - b.h / 2 : b.y + b.h / 2});
      const LayoutPoint mid = path_midpoint(path);
      path.label_x = mid.x;
      path.label_y = mid.y;
      out.edges.push_back(std::move(path));
    }
    return out;
  }

  const DisplayGraph& graph_;
  const LayoutOptions& options_;
  const std::atomic<bool>* cancel_;
  std::vector<int> pos_;   // per display node: its place in the topological order
  std::vector<int> rank_;  // per display node
  int num_ranks_ = 0;
  std::vector<Vertex> vertices_;         // display nodes first (same index), then virtual vertices
  std::vector<std::vector<int>> chain_;  // per edge: its virtual vertices, tail to head
  std::vector<std::vector<int>> ranks_;  // per rank: vertices left to right
};

}  // namespace

Expected<GraphLayout> layered_layout(const DisplayGraph& graph, const LayoutOptions& options,
                                     const std::atomic<bool>* cancel) {
  if (is_cancelled(cancel)) return cancelled("graph layout cancelled");
  for (const DisplayEdge& e : graph.edges)
    if (e.from < 0 || e.to < 0 || static_cast<size_t>(e.from) >= graph.nodes.size() ||
        static_cast<size_t>(e.to) >= graph.nodes.size())
      return invalid_argument("graph layout: an edge names a node that does not exist");
  return LayeredLayout(graph, options, cancel).run();
}

}  // namespace sod2::studio
