#include "core/opt/greedy_planner.h"

#include <algorithm>
#include <numeric>

#include "core/opt/memory_stats.h"

namespace sod2::opt {

namespace {

// For greedy by breadth: each tensor's rank when steps are visited by live bytes descending
// and each step's tensors by size descending.
std::vector<int64_t> breadth_ranks(std::span<const int64_t> sizes,
                                   std::span<const Lifetime> lives) {
  int32_t steps = 0;
  for (const Lifetime& l : lives) steps = std::max(steps, l.last_step + 1);
  std::vector<int64_t> live(static_cast<size_t>(steps), 0);
  std::vector<std::vector<int32_t>> at(static_cast<size_t>(steps));
  for (size_t t = 0; t < sizes.size(); ++t) {
    for (int32_t s = lives[t].first_step; s <= lives[t].last_step; ++s) {
      live[static_cast<size_t>(s)] = saturating_add(live[static_cast<size_t>(s)], sizes[t]);
      at[static_cast<size_t>(s)].push_back(static_cast<int32_t>(t));
    }
  }
  std::vector<int32_t> step_order(static_cast<size_t>(steps));
  std::iota(step_order.begin(), step_order.end(), 0);
  std::stable_sort(step_order.begin(), step_order.end(),
                   [&](int32_t a, int32_t b) { return live[a] > live[b]; });
  std::vector<int64_t> rank(sizes.size(), -1);
  int64_t next = 0;
  for (int32_t s : step_order) {
    std::vector<int32_t>& ts = at[static_cast<size_t>(s)];
    std::stable_sort(ts.begin(), ts.end(),
                     [&](int32_t a, int32_t b) { return sizes[a] > sizes[b]; });
    for (int32_t t : ts)
      if (rank[t] < 0) rank[t] = next++;
  }
  return rank;
}

}  // namespace

std::vector<int32_t> placement_order(std::span<const int64_t> sizes,
                                     std::span<const Lifetime> lives,
                                     std::span<const int32_t> segments, PlacementOrder rule) {
  std::vector<int32_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<int64_t> rank =
      rule == PlacementOrder::kByBreadth ? breadth_ranks(sizes, lives) : std::vector<int64_t>{};
  auto length = [&](int32_t t) { return lives[t].last_step - lives[t].first_step; };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (!segments.empty() && segments[a] != segments[b]) return segments[a] < segments[b];
    if (rule == PlacementOrder::kByBreadth && rank[a] != rank[b]) return rank[a] < rank[b];
    if (rule == PlacementOrder::kByLifetime && length(a) != length(b)) return length(a) > length(b);
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return lives[a].first_step < lives[b].first_step;
  });
  return order;
}

GreedyPlan plan_greedy_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                               std::span<const int32_t> segments, PlacementOrder rule) {
  GreedyPlan plan;
  plan.offsets.assign(sizes.size(), 0);
  std::vector<int32_t> placed;  // sorted by offset, then by placement
  placed.reserve(sizes.size());
  for (int32_t t : placement_order(sizes, lives, segments, rule)) {
    const int64_t size = sizes[t];
    // The floor: the top of every overlapping tensor of a lower segment (all placed already).
    int64_t prev_end = 0;
    if (!segments.empty()) {
      for (int32_t p : placed) {
        if (segments[p] < segments[t] && lives[p].overlaps(lives[t]))
          prev_end = std::max(prev_end, saturating_add(plan.offsets[p], sizes[p]));
      }
    }
    int64_t best_offset = -1;
    int64_t best_gap = INT64_MAX;
    for (int32_t p : placed) {
      if (!lives[p].overlaps(lives[t])) continue;
      const int64_t gap = plan.offsets[p] - prev_end;  // negative below the floor: never chosen
      if (gap >= size && gap < best_gap) {
        best_gap = gap;
        best_offset = prev_end;
      }
      prev_end = std::max(prev_end, saturating_add(plan.offsets[p], sizes[p]));
    }
    plan.offsets[t] = best_offset >= 0 ? best_offset : prev_end;
    plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(plan.offsets[t], size));
    auto at = std::upper_bound(placed.begin(), placed.end(), plan.offsets[t],
                               [&](int64_t off, int32_t p) { return off < plan.offsets[p]; });
    placed.insert(at, t);
  }
  return plan;
}

}  // namespace sod2::opt
