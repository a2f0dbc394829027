#include "core/opt/symbolic_planner.h"

#include <algorithm>
#include <numeric>

#include "core/opt/greedy_planner.h"
#include "core/sym/prover.h"

namespace sod2::opt {
namespace {

// A set of tensor indices as bits: the ancestors of each tensor in the below-DAG.
class BitSet {
 public:
  explicit BitSet(size_t n = 0) : words_((n + 63) / 64, 0) {}
  void set(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  bool test(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void merge(const BitSet& o) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= o.words_[w];
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace

SymbolicPlan plan_symbolic(const SymbolicPlanRequest& request) {
  const size_t n = request.sizes.size();
  SymbolicPlan plan;
  plan.sizes.assign(request.sizes.begin(), request.sizes.end());
  plan.offsets.assign(n, sym::SymExpr(0));
  plan.below.assign(n, {});

  // The layering: tensors by their greedy offset at the reference binding (segments first).
  const GreedyPlan reference =
      plan_greedy_by_size(request.reference_sizes, request.lives, request.segments);
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto segment = [&](int32_t t) { return request.segments.empty() ? 0 : request.segments[t]; };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (segment(a) != segment(b)) return segment(a) < segment(b);
    if (reference.offsets[a] != reference.offsets[b])
      return reference.offsets[a] < reference.offsets[b];
    return request.reference_sizes[a] < request.reference_sizes[b];
  });

  std::vector<BitSet> ancestors(n, BitSet(n));
  std::vector<bool> has_successor(n, false);
  std::vector<int32_t> candidates;
  for (size_t pos = 0; pos < n; ++pos) {
    const int32_t t = order[pos];
    // Earlier tensors live at the same time, latest first: a candidate already under a kept one
    // is implied by it.
    candidates.clear();
    for (size_t q = pos; q-- > 0;) {
      if (request.lives[order[q]].overlaps(request.lives[t])) candidates.push_back(order[q]);
    }
    BitSet covered(n);
    std::vector<sym::SymExpr> ends;
    for (int32_t u : candidates) {
      if (covered.test(static_cast<size_t>(u))) continue;
      covered.set(static_cast<size_t>(u));
      covered.merge(ancestors[static_cast<size_t>(u)]);
      plan.below[t].push_back(u);
      has_successor[static_cast<size_t>(u)] = true;
      ends.push_back(plan.offsets[u] + plan.sizes[u]);
    }
    ancestors[static_cast<size_t>(t)] = std::move(covered);
    std::sort(plan.below[t].begin(), plan.below[t].end());
    if (!ends.empty()) {
      sym::SymExpr off = sym::max(ends);
      if (request.ranges) off = sym::simplify(off, *request.ranges);
      plan.offsets[t] = off;
    }
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
