// The symbolic planner on random instances where every tensor's size is its own symbol: the
// plan is valid at every binding (non-overlap by construction), never worse than greedy at the
// reference, and the candidate it picks is the best of those it judged.
#include <gtest/gtest.h>

#include "core/opt/plan_program.h"
#include "core/opt/plan_types.h"
#include "core/opt/plan_verifier.h"
#include "core/opt/symbolic_planner.h"
#include "test_rng.h"

namespace sod2::opt {
namespace {

using testing::Rng;

struct Instance {
  std::vector<sym::SymExpr> sizes;  // 64 * s_i
  std::vector<sym::Symbol> symbols;
  std::vector<Lifetime> lives;
  std::vector<int32_t> segments;
};

Instance random_instance(Rng* rng, bool segmented) {
  Instance in;
  const int64_t n = rng->in(1, 30);
  for (int64_t i = 0; i < n; ++i) {
    in.symbols.push_back(sym::symbol("s" + std::to_string(i)));
    in.sizes.push_back(64 * sym::SymExpr(in.symbols.back()));
    const auto first = static_cast<int32_t>(rng->in(0, 20));
    in.lives.push_back({first, first + static_cast<int32_t>(rng->in(0, 8))});
    if (segmented) in.segments.push_back(static_cast<int32_t>(rng->in(0, 2)));
  }
  return in;
}

std::vector<int64_t> random_sizes(const Instance& in, Rng* rng) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.sizes.size(); ++i) out.push_back(64 * rng->in(0, 50));
  return out;
}

TEST(SymbolicPlanner, ValidAtEveryBindingByConstruction) {
  Rng rng{42};
  for (int round = 0; round < 200; ++round) {
    const Instance in = random_instance(&rng, round % 2 == 1);
    const std::vector<std::vector<int64_t>> refs{random_sizes(in, &rng), random_sizes(in, &rng)};
    SymbolicPlanRequest req;
    req.sizes = in.sizes;
    req.lives = in.lives;
    req.references = refs;
    req.segments = in.segments;
    const SymbolicPlan plan = plan_symbolic(req);
    auto program = PlanProgram::compile(plan);
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    PlanInstance inst = program->make_instance();
    for (int b = 0; b < 20; ++b) {
      // Any non-negative sizes, far outside what the references suggested.
      sym::Binding binding;
      for (const sym::Symbol& s : in.symbols) binding[s] = rng.in(0, 1000);
      auto inputs = program->inputs_from(binding);
      ASSERT_TRUE(inputs.ok());
      ASSERT_TRUE(program->instantiate(*inputs, &inst).ok());
      std::vector<PlacedTensor> placed;
      for (size_t t = 0; t < in.sizes.size(); ++t)
        placed.push_back({inst.size(t), inst.offset(t), in.lives[t]});
      Status st = verify_layout(placed, inst.arena_bytes());
      ASSERT_TRUE(st.ok()) << "round " << round << ": " << st.to_string();
    }
  }
}

TEST(SymbolicPlanner, AtItsReferenceNeverWorseThanGreedyAndPicksTheBestJudgedCandidate) {
  Rng rng{7};
  for (int round = 0; round < 200; ++round) {
    const Instance in = random_instance(&rng, false);
    const std::vector<std::vector<int64_t>> points{random_sizes(in, &rng), random_sizes(in, &rng),
                                                   random_sizes(in, &rng)};
    SymbolicPlanRequest req;
    req.sizes = in.sizes;
    req.lives = in.lives;
    req.references = std::span(points).first(1);
    const SymbolicPlan single = plan_symbolic(req);
    req.references = points;
    req.judges = points;
    const SymbolicPlan judged = plan_symbolic(req);
    auto arena_at = [&](const SymbolicPlan& p, const std::vector<int64_t>& sizes) {
      sym::Binding b;
      for (size_t i = 0; i < sizes.size(); ++i) b[in.symbols[i]] = sizes[i] / 64;
      return *sym::evaluate(p.arena_bytes, b);
    };
    // One reference, judged there: no worse than greedy by size at that reference.
    EXPECT_LE(arena_at(single, points[0]), plan_greedy_by_size(points[0], in.lives).arena_bytes)
        << "round " << round;
    // Judged at three points: its worst ratio is no worse than the single-reference plan's.
    auto worst = [&](const SymbolicPlan& p) {
      double w = 0;
      for (const auto& s : points)
        w = std::max(w,
                     static_cast<double>(arena_at(p, s)) /
                         static_cast<double>(std::max<int64_t>(peak_live_bytes(s, in.lives), 1)));
      return w;
    };
    EXPECT_LE(worst(judged), worst(single) + 1e-12) << "round " << round;
  }
}

TEST(PlacementOrder, BreadthVisitsTheFullestStepFirst) {
  // Step 1 holds the most bytes (tensors 1 and 2), so they go first, largest first; then step 0's
  // remaining tensor 0; then step 2's tensor 3.
  const std::vector<int64_t> sizes{512, 128, 448, 64};
  const std::vector<Lifetime> lives{{0, 0}, {1, 1}, {1, 2}, {2, 2}};
  EXPECT_EQ(placement_order(sizes, lives, {}, PlacementOrder::kByBreadth),
            (std::vector<int32_t>{2, 1, 0, 3}));
  EXPECT_EQ(placement_order(sizes, lives, {}, PlacementOrder::kBySize),
            (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(placement_order(sizes, lives, {}, PlacementOrder::kByLifetime),
            (std::vector<int32_t>{2, 0, 1, 3}));
  EXPECT_EQ(
      placement_order(sizes, lives, std::vector<int32_t>{1, 0, 0, 0}, PlacementOrder::kBySize),
      (std::vector<int32_t>{2, 1, 3, 0}));
}

}  // namespace
}  // namespace sod2::opt
