// The corpus models of ../shared/models as the graph tests need them: imported, RDP run and
// fused once per process (the tests read them many times).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_layout.h"
#include "core/ir/model.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"

namespace sod2::studio::testing {

struct CorpusGraph {
  std::string name;
  std::unique_ptr<Model> model;
  std::unique_ptr<RdpResult> rdp;
  opt::FusionPlan fusion;
};

// Every model of the corpus; failures are gtest failures (ADD_FAILURE) and leave the model out.
const std::vector<CorpusGraph>& corpus_graphs();

// bench::transformer_like(nodes) (exporter-style scoped names) imported, RDP run and fused.
CorpusGraph compile_synthetic(int64_t nodes);

// Every fused group of >= 2 nodes: expanding all of them shows every node on its own.
std::set<int> all_multi_node_groups(const opt::FusionPlan& plan);

// Checks what every layout must give: finite coordinates inside the drawing, no two node boxes
// overlapping, >= 2 finite points per edge. Failures name `what`.
void expect_sound_layout(const DisplayGraph& graph, const GraphLayout& layout,
                         const std::string& what);

// A chain of transformer-like blocks (LayerNorm, Q/K/V MatMuls, attention, residual Adds, MLP),
// built directly as a DisplayGraph with at least `min_nodes` nodes.
DisplayGraph synthetic_transformer(int min_nodes);

}  // namespace sod2::studio::testing
