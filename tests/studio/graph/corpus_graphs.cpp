#include "corpus_graphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../../opt/corpus.h"
#include "core/onnx/onnx_import.h"
#include "tests/bench/synthetic_models.h"

namespace sod2::studio::testing {
namespace {

std::vector<CorpusGraph> load_all() {
  std::vector<CorpusGraph> out;
  auto corpus = sod2::testing::read_corpus(SOD2_SHARED_DIR "/models");
  if (!corpus.ok()) {
    ADD_FAILURE() << corpus.status().to_string();
    return out;
  }
  for (const sod2::testing::CorpusModel& m : *corpus) {
    auto model = import_onnx_file(m.file.string());
    if (!model.ok()) {
      ADD_FAILURE() << m.name << ": " << model.status().to_string();
      continue;
    }
    CorpusGraph g;
    g.name = m.name;
    g.model = std::make_unique<Model>(std::move(*model));
    auto rdp = run_rdp(*g.model, m.options);
    if (!rdp.ok()) {
      ADD_FAILURE() << m.name << ": " << rdp.status().to_string();
      continue;
    }
    g.rdp = std::make_unique<RdpResult>(std::move(*rdp));
    auto fusion = opt::fuse(*g.model->graph, *g.rdp);
    if (!fusion.ok()) {
      ADD_FAILURE() << m.name << ": " << fusion.status().to_string();
      continue;
    }
    g.fusion = std::move(*fusion);
    out.push_back(std::move(g));
  }
  return out;
}

bool finite(double v) { return std::isfinite(v); }

}  // namespace

const std::vector<CorpusGraph>& corpus_graphs() {
  static const std::vector<CorpusGraph> graphs = load_all();
  return graphs;
}

CorpusGraph compile_synthetic(int64_t nodes) {
  const std::string bytes = bench::transformer_like(nodes).SerializeAsString();
  auto model = import_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "",
                                 "synthetic");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  CorpusGraph c;
  c.name = "transformer_like(" + std::to_string(nodes) + ")";
  c.model = std::make_unique<Model>(std::move(*model));
  auto rdp = run_rdp(*c.model);
  EXPECT_TRUE(rdp.ok()) << rdp.status().to_string();
  c.rdp = std::make_unique<RdpResult>(std::move(*rdp));
  auto fusion = opt::fuse(*c.model->graph, *c.rdp);
  EXPECT_TRUE(fusion.ok()) << fusion.status().to_string();
  c.fusion = std::move(*fusion);
  return c;
}

std::set<int> all_multi_node_groups(const opt::FusionPlan& plan) {
  std::set<int> out;
  for (size_t g = 0; g < plan.groups.size(); ++g)
    if (plan.groups[g].nodes.size() >= 2) out.insert(static_cast<int>(g));
  return out;
}

void expect_sound_layout(const DisplayGraph& graph, const GraphLayout& layout,
                         const std::string& what) {
  ASSERT_EQ(layout.nodes.size(), graph.nodes.size()) << what;
  ASSERT_EQ(layout.edges.size(), graph.edges.size()) << what;
  EXPECT_TRUE(finite(layout.width) && finite(layout.height)) << what;
  constexpr double kSlack = 0.5;  // Graphviz rounds to hundredths of a point
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    const NodeBox& b = layout.nodes[i];
    ASSERT_TRUE(finite(b.x) && finite(b.y) && finite(b.w) && finite(b.h)) << what << " node " << i;
    EXPECT_GT(b.w, 0) << what;
    EXPECT_GT(b.h, 0) << what;
    EXPECT_GE(b.x - b.w / 2, -kSlack) << what << " node " << i;
    EXPECT_GE(b.y - b.h / 2, -kSlack) << what << " node " << i;
    EXPECT_LE(b.x + b.w / 2, layout.width + kSlack) << what << " node " << i;
    EXPECT_LE(b.y + b.h / 2, layout.height + kSlack) << what << " node " << i;
  }
  // Sweep by top edge: only boxes whose vertical extents meet can overlap.
  std::vector<size_t> by_top(layout.nodes.size());
  for (size_t i = 0; i < by_top.size(); ++i) by_top[i] = i;
  auto top = [&](size_t i) { return layout.nodes[i].y - layout.nodes[i].h / 2; };
  std::sort(by_top.begin(), by_top.end(), [&](size_t a, size_t b) { return top(a) < top(b); });
  int overlaps = 0;
  for (size_t k = 0; k < by_top.size(); ++k) {
    const NodeBox& a = layout.nodes[by_top[k]];
    for (size_t m = k + 1; m < by_top.size() && top(by_top[m]) < a.y + a.h / 2 - kSlack; ++m) {
      const NodeBox& b = layout.nodes[by_top[m]];
      const double dx = std::abs(a.x - b.x) - (a.w + b.w) / 2;
      if (dx < -kSlack && overlaps++ < 5)
        ADD_FAILURE() << what << ": nodes " << by_top[k] << " and " << by_top[m] << " overlap";
    }
  }
  EXPECT_EQ(overlaps, 0) << what;
  for (size_t i = 0; i < layout.edges.size(); ++i) {
    const EdgePath& e = layout.edges[i];
    EXPECT_GE(e.points.size(), 2u) << what << " edge " << i;
    for (const LayoutPoint& p : e.points)
      ASSERT_TRUE(finite(p.x) && finite(p.y)) << what << " edge " << i;
    EXPECT_TRUE(finite(e.label_x) && finite(e.label_y)) << what << " edge " << i;
    if (e.bezier) {
      EXPECT_EQ((e.points.size() - 1) % 3, 0u) << what << " edge " << i;
    }
  }
}

DisplayGraph synthetic_transformer(int min_nodes) {
  DisplayGraph g;
  auto node = [&g](const std::string& op, OpClass c, DisplayNodeKind kind = DisplayNodeKind::kOp) {
    DisplayNode n;
    n.id = static_cast<int>(g.nodes.size());
    n.kind = kind;
    n.op = op;
    n.op_class = c;
    n.label = "/blocks." + std::to_string(n.id / 17) + "/" + op + "_" + std::to_string(n.id);
    g.nodes.push_back(n);
    return n.id;
  };
  auto edge = [&g](int from, int to) {
    g.edges.push_back({from, to, "[batch,seq,128]", kNoValue});
  };
  int x = node("input", OpClass::kUnknown, DisplayNodeKind::kGraphInput);
  // The mask is read by every block: a long edge per block, which the layout must budget.
  const int mask = node("input", OpClass::kUnknown, DisplayNodeKind::kGraphInput);
  while (static_cast<int>(g.nodes.size()) < min_nodes) {
    const int ln = node("LayerNormalization", OpClass::kISDOS);
    edge(x, ln);
    const int q = node("MatMul", OpClass::kISDOS), k = node("MatMul", OpClass::kISDOS),
              v = node("MatMul", OpClass::kISDOS);
    edge(ln, q), edge(ln, k), edge(ln, v);
    const int kt = node("Transpose", OpClass::kISDOS);
    edge(k, kt);
    const int qk = node("MatMul", OpClass::kISDOS);
    edge(q, qk), edge(kt, qk);
    const int scale = node("Div", OpClass::kISDOS);
    edge(qk, scale);
    const int masked = node("Add", OpClass::kISDOS);
    edge(scale, masked), edge(mask, masked);
    const int sm = node("Softmax", OpClass::kISDOS);
    edge(masked, sm);
    const int av = node("MatMul", OpClass::kISDOS);
    edge(sm, av), edge(v, av);
    const int proj = node("MatMul", OpClass::kISDOS);
    edge(av, proj);
    const int res = node("Add", OpClass::kISDOS);
    edge(x, res), edge(proj, res);
    const int ln2 = node("LayerNormalization", OpClass::kISDOS);
    edge(res, ln2);
    const int fc1 = node("MatMul", OpClass::kISDOS);
    edge(ln2, fc1);
    const int act = node("Gelu", OpClass::kISDOS);
    edge(fc1, act);
    const int fc2 = node("MatMul", OpClass::kISDOS);
    edge(act, fc2);
    const int res2 = node("Add", OpClass::kISDOS);
    edge(res, res2), edge(fc2, res2);
    x = res2;
  }
  const int out = node("output", OpClass::kUnknown, DisplayNodeKind::kGraphOutput);
  edge(x, out);
  return g;
}

}  // namespace sod2::studio::testing
