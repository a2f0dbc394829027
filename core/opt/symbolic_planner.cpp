#include "core/opt/symbolic_planner.h"

#include <algorithm>
#include <numeric>

#include "core/sym/prover.h"

namespace sod2::opt {
LayeringChoice choose_layering(const SymbolicPlanRequest& request) {
  return plan::choose_layering(
      {request.lives, request.references, request.judges, request.segments});
}

SymbolicPlan plan_symbolic(const SymbolicPlanRequest& request) {
  return symbolic_from_layering(request, choose_layering(request));
}

SymbolicPlan symbolic_from_layering(const SymbolicPlanRequest& request, LayeringChoice choice) {
  const size_t n = request.sizes.size();
  Layering& best = choice.layering;
  SymbolicPlan plan;
  plan.sizes.assign(request.sizes.begin(), request.sizes.end());
  plan.offsets.assign(n, sym::SymExpr(0));
  plan.below = std::move(best.below);
  plan.layer_order = best.order;
  plan.placement = choice.placement;
  plan.reference = choice.reference;
  std::vector<bool> has_successor(n, false);
  std::vector<sym::SymExpr> ends;
  for (int32_t t : best.order) {
    if (plan.below[t].empty()) continue;
    ends.clear();
    for (int32_t u : plan.below[t]) {
      ends.push_back(plan.offsets[u] + plan.sizes[u]);
      has_successor[static_cast<size_t>(u)] = true;
    }
    sym::SymExpr off = sym::max(ends);
    if (request.ranges) off = sym::simplify(off, *request.ranges);
    plan.offsets[t] = off;
  }
  std::vector<sym::SymExpr> tops;
  for (size_t t = 0; t < n; ++t) {
    if (!has_successor[t]) tops.push_back(plan.offsets[t] + plan.sizes[t]);
  }
  if (!tops.empty()) {
    plan.arena_bytes = sym::max(tops);
    if (request.ranges) plan.arena_bytes = sym::simplify(plan.arena_bytes, *request.ranges);
  }
  return plan;
}

}  // namespace sod2::opt
