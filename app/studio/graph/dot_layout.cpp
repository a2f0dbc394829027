// Graphviz dot through libgvc/cgraph, in memory. Graphviz keeps global state (error handlers,
// default attribute dictionaries, the layout's own statics), so one mutex serialises every call
// in the process, whatever thread the app's layout worker runs on.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "app/studio/graph/graph_layout.h"

namespace sod2::studio {
namespace {

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

bool is_cancelled(const std::atomic<bool>* cancel) { return cancel && cancel->load(); }

char* cstr(const char* s) { return const_cast<char*>(s); }  // the 2.42 C API takes char*

std::string inches(double points) { return std::to_string(points / 72.0); }

// Owns one layout's Graphviz objects, released in the order Graphviz needs.
class DotSession {
 public:
  DotSession() : gvc_(gvContext()), graph_(agopen(cstr("G"), Agdirected, nullptr)) {}
  ~DotSession() {
    if (laid_out_) gvFreeLayout(gvc_, graph_);
    if (graph_) agclose(graph_);
    if (gvc_) gvFreeContext(gvc_);
  }
  DotSession(const DotSession&) = delete;
  DotSession& operator=(const DotSession&) = delete;

  Agraph_t* graph() const { return graph_; }
  bool ok() const { return gvc_ && graph_; }
  bool layout() {
    laid_out_ = gvLayout(gvc_, graph_, cstr("dot")) == 0;
    return laid_out_;
  }

 private:
  GVC_t* gvc_;
  Agraph_t* graph_;
  bool laid_out_ = false;
};

// Bezier control points in our frame (y down), with the arrow tip appended as a straight
// segment so the path reaches the target's border.
EdgePath read_edge(Agedge_t* e, double bb_x, double bb_top) {
  EdgePath path;
  path.bezier = true;
  const splines* spl = ED_spl(e);
  if (!spl || spl->size < 1 || spl->list[0].size < 1) return path;
  const bezier& bz = spl->list[0];
  auto conv = [&](pointf p) { return LayoutPoint{p.x - bb_x, bb_top - p.y}; };
  if (bz.sflag) {
    const LayoutPoint s = conv(bz.sp);
    path.points.insert(path.points.end(), {s, s, conv(bz.list[0])});
  }
  for (int i = 0; i < bz.size; ++i) path.points.push_back(conv(bz.list[i]));
  if (bz.eflag) {
    const LayoutPoint tip = conv(bz.ep);
    path.points.insert(path.points.end(), {path.points.back(), tip, tip});
  }
  return path;
}

}  // namespace

Expected<GraphLayout> dot_layout(const DisplayGraph& graph, const std::atomic<bool>* cancel) {
  if (is_cancelled(cancel)) return cancelled("graph layout cancelled");
  std::lock_guard<std::mutex> lock(graphviz_mutex());
  agseterr(AGERR);  // no warnings on stderr; errors still reach gvLayout's result
  DotSession session;
  if (!session.ok()) return internal_error("Graphviz: cannot create a dot context");
  Agraph_t* g = session.graph();
  agattr(g, AGRAPH, cstr("rankdir"), cstr("TB"));
  agattr(g, AGRAPH, cstr("nodesep"), cstr("0.3"));
  agattr(g, AGRAPH, cstr("ranksep"), cstr("0.5"));
  agattr(g, AGNODE, cstr("shape"), cstr("box"));
  agattr(g, AGNODE, cstr("fixedsize"), cstr("true"));  // our sizes, so the view's text fits
  Agsym_t* width = agattr(g, AGNODE, cstr("width"), cstr("1"));
  Agsym_t* height = agattr(g, AGNODE, cstr("height"), cstr("0.5"));
  agattr(g, AGNODE, cstr("label"), cstr(""));

  // Members of an expanded group (>= 2 of them shown) go in a cluster: dot keeps them together.
  std::map<int, int> shown_per_group;
  for (const DisplayNode& n : graph.nodes)
    if (n.group >= 0 && !n.is_group_box) ++shown_per_group[n.group];
  std::map<int, Agraph_t*> clusters, shape_clusters;
  // Open name scopes are nested clusters, so that dot keeps each one a rectangle of its own
  // (the view frames them); fused groups and shape computations go inside their scope's.
  std::vector<Agraph_t*> scope_clusters(graph.open_scopes.size(), nullptr);
  std::function<Agraph_t*(int)> scope_graph = [&](int f) -> Agraph_t* {
    if (f < 0 || static_cast<size_t>(f) >= scope_clusters.size()) return g;
    Agraph_t*& c = scope_clusters[static_cast<size_t>(f)];
    if (!c) {
      // Parents come first in open_scopes: a parent index below f ends the recursion.
      const int parent = graph.open_scopes[static_cast<size_t>(f)].parent;
      c = agsubg(parent < f ? scope_graph(parent) : g,
                 cstr(("cluster_s" + std::to_string(f)).c_str()), 1);
    }
    return c;
  };

  GraphLayout out;
  out.used_dot = true;
  out.nodes.resize(graph.nodes.size());
  std::vector<Agnode_t*> nodes(graph.nodes.size());
  for (const DisplayNode& n : graph.nodes) {
    Agraph_t* parent = n.body_of ? g : scope_graph(n.in_scope);
    if (n.group >= 0 && !n.is_group_box && shown_per_group[n.group] >= 2) {
      Agraph_t*& c = clusters[n.group];
      if (!c) c = agsubg(parent, cstr(("cluster_" + std::to_string(n.group)).c_str()), 1);
      parent = c;
    } else if (n.kind == DisplayNodeKind::kOp && n.shape_cluster >= 0 && !n.body_of) {
      Agraph_t*& c = shape_clusters[n.shape_cluster];
      if (!c) c = agsubg(parent, cstr(("cluster_c" + std::to_string(n.shape_cluster)).c_str()), 1);
      parent = c;
    }
    const NodeBox size = node_size(n);
    out.nodes[static_cast<size_t>(n.id)] = size;
    Agnode_t* an = agnode(parent, cstr(("n" + std::to_string(n.id)).c_str()), 1);
    agxset(an, width, cstr(inches(size.w).c_str()));
    agxset(an, height, cstr(inches(size.h).c_str()));
    nodes[static_cast<size_t>(n.id)] = an;
  }
  std::vector<Agedge_t*> edges(graph.edges.size());
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const DisplayEdge& e = graph.edges[i];
    edges[i] =
        agedge(g, nodes[static_cast<size_t>(e.from)], nodes[static_cast<size_t>(e.to)], nullptr, 1);
  }
  if (is_cancelled(cancel)) return cancelled("graph layout cancelled");
  if (!session.layout()) return internal_error("Graphviz dot failed to lay out the graph");
  if (is_cancelled(cancel)) return cancelled("graph layout cancelled");

  const boxf bb = GD_bb(g);
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const pointf c = ND_coord(nodes[i]);
    out.nodes[i].x = c.x - bb.LL.x;
    out.nodes[i].y = bb.UR.y - c.y;
  }
  out.edges.reserve(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    EdgePath path = read_edge(edges[i], bb.LL.x, bb.UR.y);
    if (path.points.size() < 2) {  // no spline came back: a straight line between the borders
      const NodeBox& a = out.nodes[static_cast<size_t>(graph.edges[i].from)];
      const NodeBox& b = out.nodes[static_cast<size_t>(graph.edges[i].to)];
      path.bezier = false;
      path.points = {{a.x, a.y + a.h / 2}, {b.x, b.y - b.h / 2}};
    }
    const LayoutPoint mid = path_midpoint(path);
    path.label_x = mid.x;
    path.label_y = mid.y;
    out.edges.push_back(std::move(path));
  }
  return out;
}

}  // namespace sod2::studio
