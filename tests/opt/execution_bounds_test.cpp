// Execution symbols' bound expressions (RdpResult::execution_bound) on small hand-built graphs:
// each data-dependent op's bound from its spec, the value a report gives the symbol at a binding
// (complete_binding), make_binding's check of a bound execution symbol, and an SSD-like chain
// (NonZero -> TopK -> NonMaxSuppression) whose arena at a binding shrinks once the chain's
// symbols are sized at that binding instead of at the top of the ranges.
#include <iostream>

#include <gtest/gtest.h>

#include "candidate_plan.h"
#include "core/opt/memory_plan.h"
#include "core/opt/report_binding.h"
#include "core/rdp/binding.h"
#include "plan_test_util.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

onnx::TensorProto* add_i64(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v,
                           bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return t;
}

RdpOptions ranges(std::initializer_list<std::pair<const char*, sym::SymbolRange>> list) {
  RdpOptions o;
  for (const auto& [name, r] : list) o.ranges[name] = r;
  return o;
}

// The bound of execution symbol `name` evaluated at `values` (input symbols only).
int64_t bound_at(const RdpResult& rdp, const std::string& name,
                 const std::map<std::string, int64_t>& values) {
  const auto bound = rdp.execution_bound(sym::symbol(name));
  EXPECT_TRUE(bound.has_value()) << name << " has no bound";
  if (!bound) return -1;
  EXPECT_FALSE(rdp.involves_execution(*bound)) << name << ": " << bound->to_string();
  sym::Binding b;
  for (const auto& [n, v] : values) b[sym::symbol(n)] = v;
  auto v = sym::evaluate(*bound, b);
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return v.ok() ? *v : -1;
}

// The value a report gives `name` when only the input symbols `values` are bound.
int64_t reported_at(const RdpResult& rdp, const std::string& name,
                    const std::map<std::string, int64_t>& values) {
  auto b = make_binding(rdp, values);
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  const sym::Symbol s = sym::symbol(name);
  const sym::Binding full =
      complete_binding(rdp, std::vector<sym::Symbol>{s}, b.ok() ? *b : sym::Binding{});
  return full.at(s);
}

TEST(ExecutionBounds, NonZeroIsAtMostTheInputsElementCount) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("h"), std::string("w")});
  add_node(g, "NonZero", {"x"}, {"idx"}, "nz");
  add_output(g, "idx", {}, onnx::TensorProto::INT64);
  Analysed a = analyse(m, ranges({{"h", {1, 64, 1}}, {"w", {1, 32, 1}}}));
  const sym::Symbol s = sym::symbol("nz.out0.d1");
  ASSERT_TRUE(a.rdp.is_execution_symbol(s));
  EXPECT_EQ(a.rdp.execution_bound(s)->to_string(), "h*w");
  EXPECT_EQ(a.rdp.ranges().get(s).hi, 64 * 32);  // the constant bound: the top of the ranges
  EXPECT_EQ(report_upper_bound(a.rdp, s), 64 * 32);
  EXPECT_EQ(reported_at(a.rdp, "nz.out0.d1", {{"h", 4}, {"w", 5}}), 20);
  EXPECT_EQ(reported_at(a.rdp, "nz.out0.d1", {{"h", 64}, {"w", 32}}), 2048);

  // Bound above its bound at the binding: an error naming the symbol and the limit.
  EXPECT_TRUE(make_binding(a.rdp, {{"h", 4}, {"w", 5}, {"nz.out0.d1", 20}}).ok());
  auto over = make_binding(a.rdp, {{"h", 4}, {"w", 5}, {"nz.out0.d1", 21}});
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("nz.out0.d1=21"), std::string::npos)
      << over.status().message();
  EXPECT_NE(over.status().message().find("bound 20"), std::string::npos) << over.status().message();
  // An input symbol outside its range: named with the range.
  auto outside = make_binding(a.rdp, {{"h", 65}, {"w", 5}});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("h=65"), std::string::npos);
  EXPECT_NE(outside.status().message().find("1:64"), std::string::npos);
}

TEST(ExecutionBounds, TopKIsKWhenKnownElseAtMostTheAxis) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{2}, std::string("n")});
  add_input(g, "k", {int64_t{1}}, onnx::TensorProto::INT64);
  add_i64(g, "three", {3});
  add_node(g, "TopK", {"x", "k"}, {"v", "i"}, "topk");
  add_node(g, "TopK", {"x", "three"}, {"v3", "i3"}, "top3");
  add_output(g, "v");
  add_output(g, "v3");
  Analysed a = analyse(m, ranges({{"n", {1, 1000, 1}}}));
  EXPECT_EQ(a.rdp.fact(a.graph(), a.graph().find("v3")).to_string(), "[2, 3]");
  EXPECT_EQ(a.rdp.fact(a.graph(), a.graph().find("v")).to_string(), "[2, topk.out0.d1]");
  EXPECT_EQ(a.rdp.execution_bound(sym::symbol("topk.out0.d1"))->to_string(), "n");
  EXPECT_EQ(reported_at(a.rdp, "topk.out0.d1", {{"n", 7}}), 7);
  EXPECT_FALSE(make_binding(a.rdp, {{"n", 7}, {"topk.out0.d1", 8}}).ok());
}

TEST(ExecutionBounds, NonMaxSuppressionIsBatchTimesClassesTimesTheBoxesKeptPerClass) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "boxes", {std::string("b"), std::string("n"), int64_t{4}});
  add_input(g, "scores", {std::string("b"), int64_t{3}, std::string("n")});
  add_input(g, "unknown_max", {int64_t{1}}, onnx::TensorProto::INT64);
  add_i64(g, "max10", {10});
  add_node(g, "NonMaxSuppression", {"boxes", "scores", "max10"}, {"sel"}, "nms");
  add_node(g, "NonMaxSuppression", {"boxes", "scores", "unknown_max"}, {"sel_u"}, "nms_u");
  add_node(g, "NonMaxSuppression", {"boxes", "scores"}, {"sel_0"}, "nms_0");
  add_output(g, "sel", {}, onnx::TensorProto::INT64);
  add_output(g, "sel_u", {}, onnx::TensorProto::INT64);
  add_output(g, "sel_0", {}, onnx::TensorProto::INT64);
  Analysed a = analyse(m, ranges({{"b", {1, 4, 1}}, {"n", {1, 500, 1}}}));
  // min(max_output_boxes_per_class, boxes) per (batch, class).
  EXPECT_EQ(bound_at(a.rdp, "nms.out0.d0", {{"b", 2}, {"n", 4}}), 2 * 3 * 4);
  EXPECT_EQ(bound_at(a.rdp, "nms.out0.d0", {{"b", 2}, {"n", 50}}), 2 * 3 * 10);
  EXPECT_EQ(a.rdp.ranges().get(sym::symbol("nms.out0.d0")).hi, 4 * 3 * 10);
  EXPECT_EQ(reported_at(a.rdp, "nms.out0.d0", {{"b", 1}, {"n", 50}}), 30);
  // max_output_boxes_per_class unknown: every score can be selected.
  EXPECT_EQ(bound_at(a.rdp, "nms_u.out0.d0", {{"b", 2}, {"n", 50}}), 2 * 3 * 50);
  // Omitted: the spec's default 0 selects nothing.
  EXPECT_EQ(a.rdp.ranges().get(sym::symbol("nms_0.out0.d0")).hi, 0);
  EXPECT_EQ(reported_at(a.rdp, "nms_0.out0.d0", {{"b", 1}, {"n", 50}}), 0);
}

TEST(ExecutionBounds, UniqueIsAtMostTheElementsOrTheSlicesAlongItsAxis) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("a"), int64_t{4}});
  add_node(g, "Unique", {"x"}, {"u"}, "flat");
  add_int_attr(add_node(g, "Unique", {"x"}, {"ua"}, "rows"), "axis", 0);
  add_output(g, "u");
  add_output(g, "ua");
  Analysed a = analyse(m, ranges({{"a", {1, 100, 1}}}));
  EXPECT_EQ(bound_at(a.rdp, "flat.unique", {{"a", 5}}), 20);
  EXPECT_EQ(a.rdp.execution_bound(sym::symbol("rows.unique"))->to_string(), "a");
  EXPECT_EQ(reported_at(a.rdp, "rows.unique", {{"a", 5}}), 5);
}

TEST(ExecutionBounds, CompressIsAtMostTheConditionAndTheAxis) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{8}});
  add_input(g, "cond", {std::string("m")}, onnx::TensorProto::BOOL);
  add_int_attr(add_node(g, "Compress", {"x", "cond"}, {"rows"}, "by_row"), "axis", 0);
  add_node(g, "Compress", {"x", "cond"}, {"flat"}, "flat");
  add_output(g, "rows");
  add_output(g, "flat");
  Analysed a = analyse(m, ranges({{"n", {1, 100, 1}}, {"m", {1, 1000, 1}}}));
  EXPECT_EQ(bound_at(a.rdp, "by_row.out0.d0", {{"n", 5}, {"m", 3}}), 3);
  EXPECT_EQ(bound_at(a.rdp, "by_row.out0.d0", {{"n", 5}, {"m", 30}}), 5);
  EXPECT_EQ(bound_at(a.rdp, "flat.out0.d0", {{"n", 5}, {"m", 30}}), 30);
  EXPECT_EQ(bound_at(a.rdp, "flat.out0.d0", {{"n", 2}, {"m", 30}}), 16);
  EXPECT_EQ(a.rdp.ranges().get(sym::symbol("by_row.out0.d0")).hi, 100);
}

TEST(ExecutionBounds, LoopThatMayStopEarlyRunsAtMostMTimes) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n")});
  add_input(g, "cond", {}, onnx::TensorProto::BOOL);
  add_node(g, "Shape", {"x"}, {"trips"});
  onnx::GraphProto body;
  body.set_name("body");
  add_input(&body, "i", {}, onnx::TensorProto::INT64);
  add_input(&body, "c", {}, onnx::TensorProto::BOOL);
  add_node(&body, "Identity", {"c"}, {"c_out"});
  add_node(&body, "Relu", {"x"}, {"scan"});
  add_output(&body, "c_out", {}, onnx::TensorProto::BOOL);
  add_output(&body, "scan");
  auto* loop = add_node(g, "Loop", {"trips", "cond"}, {"stacked"}, "loop");
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = body;
  add_output(g, "stacked");
  Analysed a = analyse(m, ranges({{"n", {1, 64, 1}}}));
  EXPECT_EQ(a.rdp.fact(a.graph(), a.graph().find("stacked")).to_string(), "[loop.trips, n]");
  EXPECT_EQ(a.rdp.execution_bound(sym::symbol("loop.trips"))->to_string(), "n");
  EXPECT_EQ(reported_at(a.rdp, "loop.trips", {{"n", 9}}), 9);
}

// x [n] -> NonZero -> the selected scores -> TopK (k unknown) -> NonMaxSuppression (at most 50
// per class) -> the selected boxes.
onnx::ModelProto ssd_like() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "scores", {std::string("n")});
  add_input(g, "boxes", {std::string("n"), int64_t{4}});
  add_input(g, "k", {int64_t{1}}, onnx::TensorProto::INT64);
  add_i64(g, "zero", {0});
  add_i64(g, "zero_one", {0, 1});
  add_i64(g, "max50", {50});
  add_node(g, "NonZero", {"scores"}, {"nz"}, "nonzero");
  add_node(g, "Squeeze", {"nz", "zero"}, {"kept"});
  add_node(g, "Gather", {"scores", "kept"}, {"kept_scores"});
  add_node(g, "TopK", {"kept_scores", "k"}, {"top_scores", "top_pos"}, "topk");
  add_node(g, "Gather", {"kept", "top_pos"}, {"top_idx"});
  add_node(g, "Gather", {"boxes", "top_idx"}, {"top_boxes"});
  add_node(g, "Unsqueeze", {"top_boxes", "zero"}, {"nms_boxes"});
  add_node(g, "Unsqueeze", {"top_scores", "zero_one"}, {"nms_scores"});
  add_node(g, "NonMaxSuppression", {"nms_boxes", "nms_scores", "max50"}, {"sel"}, "nms");
  add_i64(g, "two", {2}, true);
  add_int_attr(add_node(g, "Gather", {"sel", "two"}, {"box_ids"}, "pick"), "axis", 1);
  add_node(g, "Gather", {"top_boxes", "box_ids"}, {"picked"});
  add_output(g, "picked");
  return m;
}

TEST(ExecutionBounds, SsdLikeChainIsSizedAtTheBinding) {
  Analysed a = analyse(ssd_like(), ranges({{"n", {1, 100000, 1}}}));
  EXPECT_EQ(a.rdp.fact(a.graph(), a.graph().find("picked")).to_string(), "[nms.out0.d0, 4]");
  // Older execution symbols are replaced by their bounds: every bound is over n alone.
  EXPECT_EQ(a.rdp.execution_bound(sym::symbol("nonzero.out0.d1"))->to_string(), "n");
  EXPECT_EQ(a.rdp.execution_bound(sym::symbol("topk.out0.d0"))->to_string(), "n");
  EXPECT_EQ(bound_at(a.rdp, "nms.out0.d0", {{"n", 20}}), 20);
  EXPECT_EQ(bound_at(a.rdp, "nms.out0.d0", {{"n", 2000}}), 50);
  // The rule's own bound of TopK's k is NonZero's count.
  EXPECT_EQ(a.rdp.direct_execution_bound(sym::symbol("topk.out0.d0"))->to_string(),
            "nonzero.out0.d1");
  // Bound explicitly, NonZero's count limits what the later symbols are reported at.
  auto b = make_binding(a.rdp, {{"n", 2000}, {"nonzero.out0.d1", 10}});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  const std::vector<sym::Symbol> syms{sym::symbol("topk.out0.d0"), sym::symbol("nms.out0.d0")};
  const sym::Binding full = complete_binding(a.rdp, syms, *b);
  EXPECT_EQ(full.at(syms[0]), 10);
  EXPECT_EQ(full.at(syms[1]), 10);
  EXPECT_FALSE(
      make_binding(a.rdp, {{"n", 2000}, {"nonzero.out0.d1", 10}, {"topk.out0.d0", 11}}).ok());

  auto plan = plan_over_candidates(a.graph(), a.rdp);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  auto at = make_binding(a.rdp, {{"n", 1000}});
  ASSERT_TRUE(at.ok());
  auto after = evaluate_plan(*plan, a.rdp, *at);
  ASSERT_TRUE(after.ok()) << after.status().to_string();
  // What reports did before: every execution symbol at its constant bound (top of the ranges).
  sym::Binding constant = *at;
  for (const SymbolInfo& info : a.rdp.symbols())
    if (info.kind == SymbolKind::kExecution)
      constant[info.symbol] = report_upper_bound(a.rdp, info.symbol);
  auto before = evaluate_plan(*plan, a.rdp, constant);
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  std::cout << "SSD-like chain at n=1000 (range 1:100000): arena " << before->arena_bytes
            << " bytes with constant bounds, " << after->arena_bytes
            << " bytes with bound expressions\n";
  EXPECT_LT(after->arena_bytes, before->arena_bytes);
  EXPECT_EQ(after->binding.at(sym::symbol("nonzero.out0.d1")), 1000);
  EXPECT_EQ(after->binding.at(sym::symbol("nms.out0.d0")), 50);
}

// Two Reshape dims the prover cannot show positive (requests mod(h, 7) and mod(w, 7)) are
// execution symbols; bound so large that their tensor's size passes int64, the plan's error names
// the tensor and the execution symbols to bind rather than a shape-program instruction.
TEST(ExecutionBounds, ASizePastInt64NamesItsTensorAndTheSymbolsToBind) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("h"), std::string("w")});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_i64(g, "seven", {7});
  add_int_attr(add_node(g, "Mod", {"shape", "seven"}, {"request"}), "fmod", 0);
  add_node(g, "Reshape", {"x", "request"}, {"y"}, "windows");
  add_node(g, "Relu", {"y"}, {"z"});
  add_output(g, "z");
  Analysed a = analyse(m, ranges({{"h", {1, 1024, 1}}, {"w", {1, 1024, 1}}}));
  ASSERT_EQ(a.rdp.fact(a.graph(), a.graph().find("y")).to_string(),
            "[windows.out0.d0, windows.out0.d1]");
  auto plan = plan_over_candidates(a.graph(), a.rdp);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  auto b = make_binding(a.rdp, {{"h", 1024}, {"w", 1024}});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  sym::Binding huge = *b;
  huge[sym::symbol("windows.out0.d0")] = int64_t{1} << 40;
  huge[sym::symbol("windows.out0.d1")] = int64_t{1} << 40;
  auto failed = evaluate_plan(*plan, a.rdp, huge);
  ASSERT_FALSE(failed.ok());
  const std::string message = failed.status().message();
  EXPECT_NE(message.find("tensor 'y'"), std::string::npos) << message;
  EXPECT_NE(message.find("windows.out0.d0 = 1099511627776"), std::string::npos) << message;
  EXPECT_NE(message.find("--bind"), std::string::npos) << message;
  EXPECT_TRUE(evaluate_plan(*plan, a.rdp, *b).ok());
}

}  // namespace
}  // namespace sod2::opt
