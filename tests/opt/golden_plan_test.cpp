// Golden symbolic plans for small hand-built graphs: exact offsets and arena sizes (XNNPACK
// style), and the stable text forms checked in under golden/. The expected layouts are worked
// out by hand in the comments.
#include <gtest/gtest.h>

#include "candidate_plan.h"
#include "core/opt/memory_plan.h"
#include "core/opt/plan_text.h"
#include "core/opt/plan_verifier.h"
#include "core/rdp/binding.h"
#include "golden_models.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

// The hand-worked layouts count one node per step, every value materialised.
MemoryPlan plan_of(const Analysed& a, bool fused = false) {
  auto plan = fused ? plan_over_candidates(a.graph(), a.rdp) : plan_memory(a.graph(), a.rdp);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  return std::move(*plan);
}

std::vector<std::string> offsets(const MemoryPlan& plan) {
  std::vector<std::string> out;
  for (const sym::SymExpr& e : plan.symbolic.offsets) out.push_back(e.to_string());
  return out;
}

PlanAtBinding at(const MemoryPlan& plan, const Analysed& a, std::map<std::string, int64_t> b) {
  auto binding = make_binding(a.rdp, b);
  EXPECT_TRUE(binding.ok()) << binding.status().to_string();
  auto r = evaluate_plan(plan, a.rdp, *binding);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(verify_layout(r->tensors, r->arena_bytes).ok());
  return std::move(*r);
}

TEST(GoldenPlan, ChainReusesTheFirstTensorsBytes) {
  // a (steps 0..1), b (1..2), y (2..2), 64n bytes each: a and y share offset 0, b sits on both.
  Analysed a = analyse(chain_model(), range_of("n", 1, 64));
  MemoryPlan plan = plan_of(a);
  EXPECT_EQ(offsets(plan), (std::vector<std::string>{"0", "64*n", "0"}));
  EXPECT_EQ(plan.symbolic.arena_bytes.to_string(), "128*n");
  PlanAtBinding p = at(plan, a, {{"n", 3}});
  EXPECT_EQ(p.arena_bytes, 384);
  EXPECT_EQ(p.lower_bound_bytes, 384);
  EXPECT_EQ(p.naive_bytes, 576);
  expect_golden("chain.txt", symbolic_plan_text(a.graph(), plan) + plan_at_binding_text(plan, p));
}

TEST(GoldenPlan, ResidualBlockKeepsTheSkipTensorAboveTheHiddenLayer) {
  // Lifetimes r 0..4, h 1..2, g 2..3, c 3..4, y 4..4; h and g are 256n bytes, the rest 64n.
  // Greedy at n=64 puts h at 0, g on h, r on g, c under g (h is dead by then) and y on c. The
  // symbolic plan keeps that layering: g = max(c, h) ends = 256n; r on top of g and of y.
  Analysed a = analyse(residual_mlp_model(), range_of("n", 1, 64));
  MemoryPlan plan = plan_of(a);
  EXPECT_EQ(offsets(plan), (std::vector<std::string>{"512*n", "0", "256*n", "0", "64*n"}));
  EXPECT_EQ(plan.symbolic.arena_bytes.to_string(), "576*n");
  PlanAtBinding p = at(plan, a, {{"n", 3}});
  EXPECT_EQ(p.arena_bytes, 576 * 3);
  EXPECT_EQ(p.lower_bound_bytes, 576 * 3);  // at step 2: r + h + g
  EXPECT_EQ(p.greedy_bytes, 576 * 3);
  expect_golden("residual_mlp.txt",
                symbolic_plan_text(a.graph(), plan) + plan_at_binding_text(plan, p));
}

TEST(GoldenPlan, FusedResidualBlockMaterialisesOnlyGroupOutputs) {
  // Groups: {relu_r}, {fc1, act} (h stays inside), {fc2, residual} (c stays inside). Three
  // steps; r 0..2 (64n), g 1..2 (256n), y 2..2 (64n): all three live at step 2, so the arena is
  // 384n = the lower bound, against 576n unfused.
  Analysed a = analyse(residual_mlp_model(), range_of("n", 1, 64));
  MemoryPlan plan = plan_of(a, /*fuse=*/true);
  ASSERT_EQ(plan.fusion.groups.size(), 3u);
  EXPECT_EQ(plan.order.steps.size(), 3u);
  EXPECT_EQ(plan.tensors.fused_values, 2);
  std::vector<std::string> names;
  for (const ArenaTensor& t : plan.tensors.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"r", "g", "y"}));
  EXPECT_EQ(plan.symbolic.arena_bytes.to_string(), "384*n");
  PlanAtBinding p = at(plan, a, {{"n", 3}});
  EXPECT_EQ(p.arena_bytes, 384 * 3);
  EXPECT_EQ(p.lower_bound_bytes, 384 * 3);
  EXPECT_EQ(p.naive_bytes, 384 * 3);
  expect_golden("residual_mlp_fused.txt",
                symbolic_plan_text(a.graph(), plan) + plan_at_binding_text(plan, p));
}

TEST(GoldenPlan, TensorsAfterAnEdoOpArePlacedAboveEarlierOnes) {
  // NonZero mints k; nz and t (16k bytes, aligned) form segment 1 and sit above s (16n bytes)
  // and y, so no offset of an earlier tensor waits for k.
  Analysed a = analyse(nonzero_model(), range_of("n", 1, 100));
  MemoryPlan plan = plan_of(a);
  const TensorSet& set = plan.tensors;
  ASSERT_EQ(set.tensors.size(), 4u);
  EXPECT_EQ(plan.segments, (std::vector<int32_t>{0, 1, 1, 0}));
  const std::string s = "64*floordiv(n+3,4)";
  const std::string k = "64*floordiv(nonzero.out0.d1+3,4)";
  EXPECT_EQ(plan.symbolic.offsets[0].to_string(), "0");  // s
  EXPECT_EQ(plan.symbolic.offsets[1].to_string(), s);    // nz, on s
  // t overlaps s, nz and y: on top of the higher of nz and y (y sits on s, like nz).
  EXPECT_EQ(plan.symbolic.offsets[2].to_string(), "max(128*floordiv(n+3,4)," + s + "+" + k + ")");
  EXPECT_EQ(plan.symbolic.offsets[3].to_string(), s);  // y, on s
  EXPECT_EQ(plan.symbolic.arena_bytes.to_string(), k + "+" + plan.symbolic.offsets[2].to_string());
  expect_golden("nonzero.txt",
                symbolic_plan_text(a.graph(), plan) +
                    plan_at_binding_text(plan, at(plan, a, {{"n", 5}})) +
                    plan_at_binding_text(plan, at(plan, a, {{"n", 5}, {"nonzero.out0.d1", 7}})));
}

}  // namespace
}  // namespace sod2::opt
