// Every model of ../shared/models: the plan is verified at its three bindings and at 50 random
// bindings inside its ranges (multiples respected, execution symbols drawn inside their bounds):
// no two live tensors share a byte, every tensor lies inside the arena and is live from its
// producer to its last reader, the arena is never below the lower bound, instantiation agrees
// with evaluating the expressions, and no offset waits for a symbol known only later.
#include <gtest/gtest.h>

#include "candidate_plan.h"
#include "core/onnx/onnx_import.h"
#include "core/ops/constant_nodes.h"
#include "core/ops/op_registry.h"
#include "core/opt/fusion.h"
#include "core/opt/fusion_rules.h"
#include "core/opt/memory_plan.h"
#include "core/opt/plan_verifier.h"
#include "core/opt/report_binding.h"
#include "core/rdp/binding.h"
#include "core/sym/transform.h"
#include "corpus.h"
#include "test_rng.h"

namespace sod2::opt {
namespace {

constexpr int kRandomBindings = 50;

using testing::Rng;

// A binding inside the ranges: input symbols on their multiple, execution symbols inside their
// bounds; redrawn until RDP's assumptions hold.
std::optional<sym::Binding> random_binding(const RdpResult& rdp, Rng* rng) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::map<std::string, int64_t> values;
    sym::Binding drawn;  // so far: an execution symbol's bound needs only older symbols
    for (const SymbolInfo& info : rdp.symbols()) {
      const sym::SymbolRange r = rdp.ranges().get(info.symbol);
      int64_t hi =
          has_no_useful_bound(rdp, info.symbol) ? report_upper_bound(rdp, info.symbol) : r.hi;
      if (const auto limit = execution_limit(rdp, info.symbol, drawn))
        hi = std::clamp(*limit, r.lo, hi);
      values[info.symbol.name()] = drawn[info.symbol] =
          r.lo + r.multiple * rng->in(0, (hi - r.lo) / r.multiple);
    }
    auto b = make_binding(rdp, values);
    if (b.ok()) return *b;
  }
  return std::nullopt;
}

// The step from which each execution symbol is known, worked out here from the facts.
std::map<std::string, int32_t> known_steps(const Graph& graph, const RdpResult& rdp,
                                           const MemoryPlan& plan) {
  std::map<std::string, int32_t> known;
  std::vector<std::pair<NodeId, size_t>> runs;  // (node, its step)
  for (size_t i = 0; i < plan.order.steps.size(); ++i)
    for (NodeId n : plan.units.nodes[static_cast<size_t>(plan.order.steps[i])])
      runs.push_back({n, i});
  for (const auto& [node, i] : runs) {
    for (ValueId v : graph.node(node).outputs) {
      if (v == kNoValue || !rdp.fact(graph, v).dims) continue;
      for (const Dim& d : *rdp.fact(graph, v).dims) {
        if (!d) continue;
        for (const sym::Symbol& s : sym::free_symbols(*d))
          if (rdp.is_execution_symbol(s)) known.emplace(s.name(), static_cast<int32_t>(i));
      }
    }
  }
  return known;
}

class CorpusPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusPlan, VerifiedAtBenchmarkAndRandomBindings) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  const testing::CorpusModel* m = &*found;
  auto model = import_onnx_file(m->file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto rdp = run_rdp(*model, m->options);
  ASSERT_TRUE(rdp.ok()) << rdp.status().to_string();
  const Graph& graph = *model->graph;

  std::vector<sym::Binding> bench;
  for (const auto& b : m->bindings) {
    auto binding = make_binding(*rdp, b);
    ASSERT_TRUE(binding.ok()) << binding.status().to_string();
    bench.push_back(*binding);
  }
  MemoryPlanOptions options;
  options.check_bindings = bench;
  auto plan = testing::plan_over_candidates(graph, *rdp, options);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_TRUE(plan->tensors.off_arena.empty()) << plan->tensors.off_arena[0].name;
  std::vector<int32_t> step_of(graph.num_nodes(), -1);
  for (size_t i = 0; i < plan->order.steps.size(); ++i)
    for (NodeId n : plan->units.nodes[static_cast<size_t>(plan->order.steps[i])])
      step_of[static_cast<size_t>(n)] = static_cast<int32_t>(i);
  ASSERT_TRUE(std::find(step_of.begin(), step_of.end(), -1) == step_of.end());
  Status lives_ok = verify_lifetimes(graph, step_of, static_cast<int32_t>(plan->order.steps.size()),
                                     plan->tensors, plan->lives);
  ASSERT_TRUE(lives_ok.ok()) << lives_ok.to_string();
  // With fusion only a group's outputs are materialised.
  for (const ArenaTensor& t : plan->tensors.tensors) {
    const int32_t g = plan->fusion.group_of[static_cast<size_t>(t.producer)];
    if (g < 0) continue;
    const auto& outs = plan->fusion.groups[static_cast<size_t>(g)].outputs;
    EXPECT_NE(std::find(outs.begin(), outs.end(), t.value), outs.end()) << t.name;
  }

  // Offsets only mention execution symbols known by the tensor's first step.
  const auto known = known_steps(graph, *rdp, *plan);
  const int32_t num_versions = static_cast<int32_t>(plan->versions.versions.size());
  for (int32_t v = -1; v < num_versions; ++v) {
    for (size_t t = 0; t < plan->tensors.tensors.size(); ++t) {
      for (const sym::Symbol& s : sym::free_symbols(plan->symbolic_of(v).offsets[t])) {
        if (!rdp->is_execution_symbol(s)) continue;
        ASSERT_TRUE(known.count(s.name())) << s.name();
        EXPECT_LE(known.at(s.name()), plan->lives[t].first_step)
            << "offset of '" << plan->tensors.tensors[t].name << "' needs " << s.name();
      }
    }
  }

  std::vector<sym::Binding> bindings = bench;
  Rng rng{std::hash<std::string>()(m->name)};
  for (int i = 0; i < kRandomBindings; ++i) {
    auto b = random_binding(*rdp, &rng);
    ASSERT_TRUE(b.has_value()) << "no random binding satisfies the assumptions";
    bindings.push_back(*b);
  }
  std::vector<std::string> names;
  for (const ArenaTensor& t : plan->tensors.tensors) names.push_back(t.name);
  for (size_t i = 0; i < bindings.size(); ++i) {
    auto at = evaluate_plan(*plan, *rdp, bindings[i]);
    ASSERT_TRUE(at.ok()) << at.status().to_string();
    const std::string where = "binding #" + std::to_string(i);
    Status st = verify_layout(at->tensors, at->arena_bytes, names);
    ASSERT_TRUE(st.ok()) << where << ": " << st.to_string();
    EXPECT_GE(at->arena_bytes, at->lower_bound_bytes) << where;
    EXPECT_GE(at->greedy_bytes, at->lower_bound_bytes) << where;
    EXPECT_GE(at->naive_bytes, at->arena_bytes) << where;
    if (i < bench.size()) {
      // The order was checked at these bindings: never worse than the file's.
      EXPECT_LE(at->lower_bound_bytes, at->source_order_peak_bytes) << where;
    }
    // Every version is valid everywhere, not only in its own cell.
    for (int32_t v = -1; v < num_versions && i < 10; ++v) {
      auto forced = evaluate_plan(*plan, *rdp, bindings[i], v);
      ASSERT_TRUE(forced.ok()) << forced.status().to_string();
      Status fst = verify_layout(forced->tensors, forced->arena_bytes, names);
      ASSERT_TRUE(fst.ok()) << where << ", version " << v << ": " << fst.to_string();
    }
    if (i < 5) {
      // The cell's version lays out as its expressions say; the binding runs it, or greedy by
      // size at its sizes where that needs less.
      const int32_t own = plan->version_for(at->binding);
      auto planned = evaluate_plan(*plan, *rdp, bindings[i], own);
      ASSERT_TRUE(planned.ok()) << planned.status().to_string();
      const SymbolicPlan& symbolic = plan->symbolic_of(own);
      for (size_t t = 0; t < at->tensors.size(); ++t) {
        ASSERT_EQ(planned->tensors[t].offset, *sym::evaluate(symbolic.offsets[t], at->binding));
        ASSERT_EQ(at->tensors[t].size, *sym::evaluate(symbolic.sizes[t], at->binding));
      }
      EXPECT_EQ(planned->arena_bytes, *sym::evaluate(symbolic.arena_bytes, at->binding));
      EXPECT_EQ(at->version_arena_bytes, planned->arena_bytes);
      if (at->version == plan::kBindingGreedyVersion) {
        EXPECT_LT(at->arena_bytes, planned->arena_bytes) << where;
        EXPECT_LE(at->arena_bytes, at->greedy_bytes) << where;
      } else {
        EXPECT_EQ(at->version, own) << where;
        EXPECT_EQ(at->arena_bytes, planned->arena_bytes) << where;
      }
    }
  }
}

// The fused groups, checked from the graph: a partition of the kernels, in topological order,
// no EDO or opaque op inside a multi-node group, and no value kept inside a group that a graph
// output or a data reader outside needs.
TEST_P(CorpusPlan, FusionGroupsAreSound) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  const testing::CorpusModel* m = &*found;
  auto model = import_onnx_file(m->file.string());
  ASSERT_TRUE(model.ok());
  auto rdp = run_rdp(*model, m->options);
  ASSERT_TRUE(rdp.ok());
  const Graph& graph = *model->graph;
  auto fusion = fuse(graph, *rdp);
  ASSERT_TRUE(fusion.ok()) << fusion.status().to_string();
  std::vector<int> seen(graph.num_nodes(), 0);
  for (size_t i = 0; i < fusion->groups.size(); ++i) {
    const FusionGroup& grp = fusion->groups[i];
    ASSERT_FALSE(grp.nodes.empty());
    for (NodeId n : grp.nodes) {
      ++seen[static_cast<size_t>(n)];
      EXPECT_EQ(fusion->group_of[static_cast<size_t>(n)], static_cast<int32_t>(i));
      const Node& node = graph.node(n);
      if (grp.nodes.size() > 1) {
        EXPECT_NE(op_class_of(node), OpClass::kEDO) << node.name;
        // The one opaque op a group holds: a Transpose its MatMul reads in place.
        const bool matmul_operand =
            node.op_type == "Transpose" && node.outputs.size() == 1 &&
            graph.value(node.outputs[0]).consumers.size() == 1 &&
            graph.node(graph.value(node.outputs[0]).consumers[0]).op_type == "MatMul" &&
            fusion->group_of[static_cast<size_t>(graph.value(node.outputs[0]).consumers[0])] ==
                static_cast<int32_t>(i);
        if (!matmul_operand) EXPECT_NE(fusion_role(node), FusionRole::kOpaque) << node.name;
      }
      for (ValueId v : node.inputs) {
        if (v == kNoValue || graph.value(v).producer == kNoNode) continue;
        const int32_t pg = fusion->group_of[static_cast<size_t>(graph.value(v).producer)];
        EXPECT_LE(pg, static_cast<int32_t>(i)) << "group " << i << " reads a later group";
      }
      for (ValueId v : node.outputs) {
        if (v == kNoValue) continue;
        const bool listed =
            std::find(grp.outputs.begin(), grp.outputs.end(), v) != grp.outputs.end();
        if (listed) continue;
        EXPECT_EQ(std::find(graph.outputs().begin(), graph.outputs().end(), v),
                  graph.outputs().end())
            << graph.value(v).name << " is a graph output kept inside a group";
        for (NodeId r : graph.value(v).consumers) {
          if (op_class_of(graph.node(r)) == OpClass::kISDO) continue;
          EXPECT_EQ(fusion->group_of[static_cast<size_t>(r)], static_cast<int32_t>(i))
              << graph.value(v).name << " is kept inside group " << i << " but read by "
              << graph.node(r).name;
        }
      }
    }
  }
  int32_t kernels = 0;
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    const bool constant = is_constant_node(graph, graph.node(static_cast<NodeId>(n)));
    kernels += !constant;
    EXPECT_EQ(seen[n], constant ? 0 : 1) << graph.node(static_cast<NodeId>(n)).name;
  }
  EXPECT_EQ(fusion->kernels_unfused, kernels);
  EXPECT_LE(fusion->groups.size(), static_cast<size_t>(kernels));
}

std::vector<std::string> corpus_names() { return testing::corpus_names(SOD2_SHARED_DIR "/models"); }

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return testing::gtest_safe_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, CorpusPlan, ::testing::ValuesIn(corpus_names()), test_name);

TEST(CorpusPlanSetup, FindsTheCorpus) { EXPECT_GE(corpus_names().size(), 10u); }

}  // namespace
}  // namespace sod2::opt
