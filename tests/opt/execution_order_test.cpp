// The execution order: the list scheduler finds better orders where the file's order is
// wasteful, always returns a topological order, and the choice is never worse than the source
// order at the sizes it was judged and checked at.
#include <gtest/gtest.h>

#include "core/opt/execution_order.h"
#include "core/opt/lifetimes.h"
#include "core/opt/plan_types.h"
#include "core/sym/evaluate.h"
#include "golden_models.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

// x[n,16] feeds two wide branches b1, b2 ([n,256]) that each shrink back to [n,16] before an
// Add. The file computes both wide tensors first; finishing one branch first halves the peak.
onnx::ModelProto two_branch_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_initializer(g, "Wa", {16, 256});
  add_initializer(g, "Wb", {16, 256});
  add_initializer(g, "Wc", {256, 16});
  add_initializer(g, "Wd", {256, 16});
  add_node(g, "MatMul", {"x", "Wa"}, {"b1"}, "wide1");
  add_node(g, "MatMul", {"x", "Wb"}, {"b2"}, "wide2");
  add_node(g, "MatMul", {"b1", "Wc"}, {"s1"}, "narrow1");
  add_node(g, "MatMul", {"b2", "Wd"}, {"s2"}, "narrow2");
  add_node(g, "Add", {"s1", "s2"}, {"y"}, "join");
  add_output(g, "y");
  return m;
}

std::vector<int64_t> sizes_at(const TensorSet& set, int64_t n) {
  std::vector<int64_t> out;
  for (const ArenaTensor& t : set.tensors)
    out.push_back(*sym::evaluate(t.bytes, {{sym::symbol("n"), n}}));
  return out;
}

TEST(ExecutionOrder, FinishesOneBranchBeforeStartingTheOther) {
  Analysed a = analyse(two_branch_model(), range_of("n", 1, 32));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  const std::vector<int64_t> ref = sizes_at(set, 32);
  auto chosen = choose_execution_order(a.graph(), set, ref, {});
  ASSERT_TRUE(chosen.ok()) << chosen.status().to_string();
  EXPECT_EQ(chosen->strategy, "min-delta");
  std::vector<std::string> names;
  for (NodeId n : chosen->order) names.push_back(a.graph().node(n).name);
  EXPECT_EQ(names, (std::vector<std::string>{"wide1", "narrow1", "wide2", "narrow2", "join"}));
  // Source: step 2 holds b1 + b2 + s1 = 2112n bytes; chosen: step 3 holds s1 + b2 + s2 = 1152n.
  EXPECT_EQ(chosen->source_peak_bytes, 2112 * 32);
  EXPECT_EQ(chosen->peak_bytes, 1152 * 32);
}

TEST(ExecutionOrder, KeepsTheSourceOrderWhenNothingIsBetter) {
  Analysed a = analyse(chain_model(), range_of("n", 1, 32));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  auto chosen = choose_execution_order(a.graph(), set, sizes_at(set, 32), {});
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->strategy, "source");
  EXPECT_EQ(chosen->order, (std::vector<NodeId>{0, 1, 2}));
}

// A random DAG built directly in the IR: node i reads 1-3 earlier values and writes one; sizes
// are drawn per tensor for three "bindings" that need not scale together.
struct RandomDag {
  Graph graph{"random"};
  TensorSet set;
  std::vector<std::vector<int64_t>> sizes;  // [binding][tensor]
};

void build_random_dag(uint64_t seed, RandomDag* dag) {
  uint64_t state = seed;
  auto next = [&](uint64_t m) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % m;
  };
  Graph& g = dag->graph;
  Value in;
  in.name = "x";
  in.kind = ValueKind::kGraphInput;
  std::vector<ValueId> values{*g.add_value(in)};
  g.set_inputs({values[0]});
  const size_t n = 2 + next(30);
  for (size_t i = 0; i < n; ++i) {
    Value out;
    out.name = "v" + std::to_string(i);
    const ValueId id = *g.add_value(out);
    Node node;
    node.name = "n" + std::to_string(i);
    node.op_type = "Op";
    const size_t reads = 1 + next(3);
    for (size_t r = 0; r < reads; ++r) node.inputs.push_back(values[next(values.size())]);
    node.outputs = {id};
    g.add_node(std::move(node));
    values.push_back(id);
  }
  std::vector<ValueId> outputs{values.back()};
  if (next(2)) outputs.push_back(values[1 + next(n)]);
  g.set_outputs(outputs);
  g.link();
  dag->set.index_of_value.assign(g.num_values(), -1);
  dag->sizes.assign(3, {});
  for (size_t i = 0; i < n; ++i) {
    const ValueId v = values[i + 1];
    dag->set.index_of_value[static_cast<size_t>(v)] = static_cast<int32_t>(i);
    const bool is_out = std::find(outputs.begin(), outputs.end(), v) != outputs.end();
    dag->set.tensors.push_back(
        {v, g.value(v).name, static_cast<NodeId>(i), sym::SymExpr(0), is_out, {}});
    for (auto& s : dag->sizes) s.push_back(64 * static_cast<int64_t>(next(100)));
  }
}

TEST(ExecutionOrder, NeverWorseThanTheSourceOrderWhereJudgedOrChecked) {
  int improved = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    RandomDag dag;
    build_random_dag(seed, &dag);
    const std::vector<std::vector<int64_t>> checks{dag.sizes[1], dag.sizes[2]};
    auto chosen = choose_execution_order(dag.graph, dag.set, dag.sizes[0], checks);
    ASSERT_TRUE(chosen.ok()) << chosen.status().to_string();
    auto lives = tensor_lifetimes(dag.graph, chosen->order, dag.set);
    ASSERT_TRUE(lives.ok()) << "seed " << seed << ": " << lives.status().to_string();
    const std::vector<NodeId> source = *dag.graph.topological_order();
    auto source_lives = *tensor_lifetimes(dag.graph, source, dag.set);
    for (const auto& sizes : dag.sizes) {
      EXPECT_LE(peak_live_bytes(sizes, *lives), peak_live_bytes(sizes, source_lives))
          << "seed " << seed;
    }
    improved += chosen->peak_bytes < chosen->source_peak_bytes;
    // Every list schedule is a topological order, whatever it is judged to be worth.
    for (ScheduleRule rule : {ScheduleRule::kMinDelta, ScheduleRule::kMinAlloc}) {
      auto order = list_schedule(dag.graph, dag.set, dag.sizes[0], rule);
      EXPECT_TRUE(tensor_lifetimes(dag.graph, order, dag.set).ok()) << "seed " << seed;
    }
  }
  EXPECT_GT(improved, 0);  // the scheduler does find better orders on random graphs
}

}  // namespace
}  // namespace sod2::opt
