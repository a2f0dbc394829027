#include "core/opt/greedy_planner.h"

#include <algorithm>
#include <numeric>

#include "core/opt/memory_stats.h"

namespace sod2::opt {

std::vector<int32_t> greedy_by_size_order(std::span<const int64_t> sizes,
                                          std::span<const Lifetime> lives,
                                          std::span<const int32_t> segments) {
  std::vector<int32_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (!segments.empty() && segments[a] != segments[b]) return segments[a] < segments[b];
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return lives[a].first_step < lives[b].first_step;
  });
  return order;
}

GreedyPlan plan_greedy_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                               std::span<const int32_t> segments) {
  GreedyPlan plan;
  plan.offsets.assign(sizes.size(), 0);
  std::vector<int32_t> placed;  // sorted by offset, then by placement
  placed.reserve(sizes.size());
  for (int32_t t : greedy_by_size_order(sizes, lives, segments)) {
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
