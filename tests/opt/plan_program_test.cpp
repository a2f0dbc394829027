// Instantiation: the compiled program agrees with evaluating each expression, and running it
// allocates nothing.
#include <gtest/gtest.h>

#include "../common/allocation_counter.h"
#include "candidate_plan.h"
#include "core/opt/memory_plan.h"
#include "golden_models.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

TEST(PlanProgram, InstantiationMatchesEvaluatingEachExpression) {
  Analysed a = analyse(nonzero_model(), range_of("n", 1, 100));
  auto plan = plan_over_candidates(a.graph(), a.rdp);
  ASSERT_TRUE(plan.ok());
  const PlanProgram& program = plan->program;
  ASSERT_EQ(program.symbols().size(), 2u);
  EXPECT_EQ(program.symbols()[0].name(), "n");
  EXPECT_EQ(program.symbols()[1].name(), "nonzero.out0.d1");
  PlanInstance inst = program.make_instance();
  for (int64_t n : {1, 2, 7, 64, 100}) {
    for (int64_t k : {int64_t{0}, n, 4 * n}) {
      const sym::Binding b{{sym::symbol("n"), n}, {sym::symbol("nonzero.out0.d1"), k}};
      auto inputs = program.inputs_from(b);
      ASSERT_TRUE(inputs.ok());
      ASSERT_TRUE(program.instantiate(*inputs, &inst).ok());
      for (size_t t = 0; t < inst.num_tensors(); ++t) {
        EXPECT_EQ(inst.size(t), *sym::evaluate(plan->symbolic.sizes[t], b));
        EXPECT_EQ(inst.offset(t), *sym::evaluate(plan->symbolic.offsets[t], b));
      }
      EXPECT_EQ(inst.arena_bytes(), *sym::evaluate(plan->symbolic.arena_bytes, b));
    }
  }
  auto missing = program.inputs_from({{sym::symbol("n"), 3}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nonzero.out0.d1"), std::string::npos);
}

TEST(PlanProgram, InstantiateAllocatesNothing) {
  Analysed a = analyse(residual_mlp_model(), range_of("n", 1, 64));
  MemoryPlanOptions unfused;
  auto plan = plan_memory(a.graph(), a.rdp, unfused);
  ASSERT_TRUE(plan.ok());
  PlanInstance inst = plan->program.make_instance();
  std::vector<int64_t> inputs{5};
  const int64_t before = g_allocations.load();
  for (int64_t n = 1; n <= 64; ++n) {
    inputs[0] = n;
    ASSERT_TRUE(plan->program.instantiate(inputs, &inst).ok());
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(inst.arena_bytes(), 576 * 64);
}

}  // namespace
}  // namespace sod2::opt
