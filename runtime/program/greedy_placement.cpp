#include "runtime/program/greedy_placement.h"

#include <algorithm>
#include <numeric>

#include "runtime/program/binding_layout.h"
#include "runtime/program/lifetime_overlaps.h"
#include "runtime/program/memory_stats.h"

namespace sod2::plan {

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
  // kByCrossing: whether t is live, already written, when a segment becomes known.
  std::vector<char> crossing;
  if (rule == PlacementOrder::kByCrossing && !segments.empty()) {
    std::vector<int32_t> starts(segments.begin(), segments.end());
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    crossing.assign(sizes.size(), 0);
    for (size_t t = 0; t < sizes.size(); ++t) {
      auto k = std::upper_bound(starts.begin(), starts.end(), lives[t].first_step);
      crossing[t] = k != starts.end() && *k <= lives[t].last_step;
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (!segments.empty() && segments[a] != segments[b]) return segments[a] < segments[b];
    if (rule == PlacementOrder::kByBreadth && rank[a] != rank[b]) return rank[a] < rank[b];
    if (rule == PlacementOrder::kByLifetime && length(a) != length(b)) return length(a) > length(b);
    if (!crossing.empty() && crossing[a] != crossing[b]) return crossing[a] > crossing[b];
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return lives[a].first_step < lives[b].first_step;
  });
  return order;
}

GreedyPlan plan_greedy_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                               std::span<const int32_t> segments, PlacementOrder rule) {
  GreedyPlan plan;
  plan.offsets.assign(sizes.size(), 0);
  if (segments.empty() && rule == PlacementOrder::kBySize) {
    // The runtime's own greedy (what a binding may run with): one definition of the yardstick.
    GreedyLayout greedy;
    plan.arena_bytes = greedy.place(sizes, lives, plan.offsets);
    return plan;
  }
  const std::vector<int32_t> order = placement_order(sizes, lives, segments, rule);
  // A tensor's offset depends only on the placed tensors its lifetime overlaps, taken by offset
  // then by placement (the order `placed` below keeps): with overlap lists, gather those alone.
  OverlapLists overlaps;
  if (find_overlap_lists(lives, overlap_pairs_limit(sizes.size()), &overlaps)) {
    struct Near {
      int64_t offset, end, seq;
      bool lower_segment;
    };
    std::vector<Near> near;
    std::vector<int64_t> placed_at(sizes.size(), -1);  // place in `order`, -1: not yet
    int64_t seq = 0;
    for (int32_t t : order) {
      near.clear();
      for (int32_t p : overlaps.of(t)) {
        const int64_t at = placed_at[static_cast<size_t>(p)];
        if (at < 0) continue;
        near.push_back({plan.offsets[p], saturating_add(plan.offsets[p], sizes[p]), at,
                        !segments.empty() && segments[p] < segments[t]});
      }
      std::sort(near.begin(), near.end(), [](const Near& a, const Near& b) {
        return a.offset != b.offset ? a.offset < b.offset : a.seq < b.seq;
      });
      int64_t prev_end = 0;
      for (const Near& p : near)
        if (p.lower_segment) prev_end = std::max(prev_end, p.end);
      int64_t best_offset = -1;
      int64_t best_gap = INT64_MAX;
      for (const Near& p : near) {
        const int64_t gap = p.offset - prev_end;
        if (gap >= sizes[t] && gap < best_gap) {
          best_gap = gap;
          best_offset = prev_end;
        }
        prev_end = std::max(prev_end, p.end);
      }
      plan.offsets[t] = best_offset >= 0 ? best_offset : prev_end;
      plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(plan.offsets[t], sizes[t]));
      placed_at[static_cast<size_t>(t)] = seq++;
    }
    return plan;
  }
  std::vector<int32_t> placed;  // sorted by offset, then by placement
  placed.reserve(sizes.size());
  for (int32_t t : order) {
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

std::optional<GreedyPlan> plan_greedy_known_steps(std::span<const int64_t> sizes,
                                                  std::span<const Lifetime> lives,
                                                  std::span<const int32_t> segments,
                                                  PlacementOrder rule) {
  const size_t n = sizes.size();
  int32_t max_known = 0;
  for (size_t t = 0; t < segments.size() && t < n; ++t) {
    if (segments[t] > lives[t].first_step) return std::nullopt;
    max_known = std::max(max_known, segments[t]);
  }
  if (max_known == 0) return plan_greedy_by_size(sizes, lives, {}, rule);
  if (segments.size() != n) return std::nullopt;

  GreedyPlan plan;
  plan.offsets.assign(n, 0);
  // anc[t]: the latest step at which t's size or the size of a tensor below it becomes known;
  // desc[t]: the earliest first step of t and the tensors above it, capped at max_known (no
  // known step is later, so a larger value never binds). The rule is anc[t] <= desc[t].
  std::vector<int32_t> anc(n, 0), desc(n, max_known);
  auto key_less = [&](int32_t a, int32_t b) {
    if (plan.offsets[a] != plan.offsets[b]) return plan.offsets[a] < plan.offsets[b];
    if (sizes[a] != sizes[b]) return sizes[a] < sizes[b];
    return a < b;
  };
  std::vector<int32_t> placed, overlapping, stack;
  std::vector<int32_t> below_max, above_min;  // over overlapping[0..k) and overlapping[k..)
  // Only placed tensors overlapping the one at hand matter, to its gap search and to the
  // propagation (whose result does not depend on the order it visits them in): found from
  // overlap lists, else by scanning every placed tensor (kept sorted by key_less).
  OverlapLists overlaps;
  const bool listed = find_overlap_lists(lives, overlap_pairs_limit(n), &overlaps);
  std::vector<char> is_placed(n, 0);
  auto for_each_placed_overlapping = [&](int32_t x, auto&& f) {
    if (listed) {
      for (int32_t y : overlaps.of(x))
        if (is_placed[static_cast<size_t>(y)]) f(y);
    } else {
      for (int32_t y : placed)
        if (y != x && lives[y].overlaps(lives[x])) f(y);
    }
  };
  if (!listed) placed.reserve(n);
  // Earlier segments first: a tensor then only meets placed tensors known no later than itself,
  // so the top of them is always allowed.
  for (int32_t t : placement_order(sizes, lives, segments, rule)) {
    const int64_t size = sizes[t];
    overlapping.clear();
    for_each_placed_overlapping(t, [&](int32_t p) { overlapping.push_back(p); });
    std::sort(overlapping.begin(), overlapping.end(), key_less);
    const size_t m = overlapping.size();
    below_max.assign(m + 1, 0);
    above_min.assign(m + 1, max_known);
    for (size_t k = 0; k < m; ++k) below_max[k + 1] = std::max(below_max[k], anc[overlapping[k]]);
    for (size_t k = m; k-- > 0;) above_min[k] = std::min(above_min[k + 1], desc[overlapping[k]]);
    const int32_t own_anc = segments[t];
    const int32_t own_desc = std::min(lives[t].first_step, max_known);
    // The overlapping tensors below t if it goes at `offset`.
    auto split_at = [&](int64_t offset) {
      plan.offsets[t] = offset;
      return static_cast<size_t>(
          std::lower_bound(overlapping.begin(), overlapping.end(), t, key_less) -
          overlapping.begin());
    };
    auto allowed = [&](size_t split) {
      return std::max(own_anc, below_max[split]) <= std::min(own_desc, above_min[split]);
    };
    int64_t prev_end = 0;
    int64_t best_offset = -1;
    int64_t best_gap = INT64_MAX;
    for (int32_t p : overlapping) {
      const int64_t gap = plan.offsets[p] - prev_end;
      if (gap >= size && gap < best_gap && allowed(split_at(prev_end))) {
        best_gap = gap;
        best_offset = prev_end;
      }
      prev_end = std::max(prev_end, saturating_add(plan.offsets[p], sizes[p]));
    }
    if (best_offset < 0) {
      if (!allowed(split_at(prev_end))) return std::nullopt;
      best_offset = prev_end;
    }
    const size_t split = split_at(best_offset);
    anc[t] = std::max(own_anc, below_max[split]);
    desc[t] = std::min(own_desc, above_min[split]);
    plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(plan.offsets[t], size));
    is_placed[static_cast<size_t>(t)] = 1;
    if (!listed) placed.insert(std::lower_bound(placed.begin(), placed.end(), t, key_less), t);
    // Tensors above t now also wait for what t waits for; tensors below it must be known by
    // the first step of everything above t.
    if (anc[t] > 0) {
      stack.assign(1, t);
      while (!stack.empty()) {
        const int32_t x = stack.back();
        stack.pop_back();
        for_each_placed_overlapping(x, [&](int32_t y) {
          if (anc[y] >= anc[x] || !key_less(x, y)) return;
          anc[y] = anc[x];
          stack.push_back(y);
        });
      }
    }
    stack.assign(1, t);
    while (!stack.empty()) {
      const int32_t x = stack.back();
      stack.pop_back();
      for_each_placed_overlapping(x, [&](int32_t y) {
        if (desc[y] <= desc[x] || !key_less(y, x)) return;
        desc[y] = desc[x];
        stack.push_back(y);
      });
    }
  }
  return plan;
}

}  // namespace sod2::plan
