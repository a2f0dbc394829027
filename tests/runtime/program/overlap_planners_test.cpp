// The planners that read only lifetime-overlapping tensors (greedy by size with segments or
// another order, greedy under known steps, layerings) against the straightforward quadratic
// definitions they replaced, kept here as the reference: plans and packages store their output,
// so on every input they must give exactly the same offsets, arenas, orders and below sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "runtime/program/binding_layout.h"
#include "runtime/program/greedy_placement.h"
#include "runtime/program/layering.h"
#include "runtime/program/lifetime_overlaps.h"
#include "runtime/program/memory_stats.h"

namespace sod2::plan {
namespace {

// Greedy by size scanning every placed tensor, for any order and segments.
GreedyPlan reference_greedy(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                            std::span<const int32_t> segments, PlacementOrder rule) {
  GreedyPlan plan;
  plan.offsets.assign(sizes.size(), 0);
  std::vector<int32_t> placed;  // sorted by offset, then by placement
  for (int32_t t : placement_order(sizes, lives, segments, rule)) {
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
      const int64_t gap = plan.offsets[p] - prev_end;
      if (gap >= sizes[t] && gap < best_gap) {
        best_gap = gap;
        best_offset = prev_end;
      }
      prev_end = std::max(prev_end, saturating_add(plan.offsets[p], sizes[p]));
    }
    plan.offsets[t] = best_offset >= 0 ? best_offset : prev_end;
    plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(plan.offsets[t], sizes[t]));
    placed.insert(std::upper_bound(placed.begin(), placed.end(), plan.offsets[t],
                                   [&](int64_t off, int32_t p) { return off < plan.offsets[p]; }),
                  t);
  }
  return plan;
}

// The known-steps greedy scanning every placed tensor, for placement and for propagation.
std::optional<GreedyPlan> reference_known_steps(std::span<const int64_t> sizes,
                                                std::span<const Lifetime> lives,
                                                std::span<const int32_t> segments,
                                                PlacementOrder rule) {
  const size_t n = sizes.size();
  int32_t max_known = 0;
  for (size_t t = 0; t < segments.size() && t < n; ++t) {
    if (segments[t] > lives[t].first_step) return std::nullopt;
    max_known = std::max(max_known, segments[t]);
  }
  if (max_known == 0) return reference_greedy(sizes, lives, {}, rule);
  if (segments.size() != n) return std::nullopt;
  GreedyPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<int32_t> anc(n, 0), desc(n, max_known);
  auto key_less = [&](int32_t a, int32_t b) {
    if (plan.offsets[a] != plan.offsets[b]) return plan.offsets[a] < plan.offsets[b];
    if (sizes[a] != sizes[b]) return sizes[a] < sizes[b];
    return a < b;
  };
  std::vector<int32_t> placed, overlapping, stack, below_max, above_min;
  for (int32_t t : placement_order(sizes, lives, segments, rule)) {
    overlapping.clear();
    for (int32_t p : placed)
      if (lives[p].overlaps(lives[t])) overlapping.push_back(p);
    const size_t m = overlapping.size();
    below_max.assign(m + 1, 0);
    above_min.assign(m + 1, max_known);
    for (size_t k = 0; k < m; ++k) below_max[k + 1] = std::max(below_max[k], anc[overlapping[k]]);
    for (size_t k = m; k-- > 0;) above_min[k] = std::min(above_min[k + 1], desc[overlapping[k]]);
    const int32_t own_anc = segments[t];
    const int32_t own_desc = std::min(lives[t].first_step, max_known);
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
      if (gap >= sizes[t] && gap < best_gap && allowed(split_at(prev_end))) {
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
    plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(plan.offsets[t], sizes[t]));
    placed.insert(std::lower_bound(placed.begin(), placed.end(), t, key_less), t);
    if (anc[t] > 0) {
      stack.assign(1, t);
      while (!stack.empty()) {
        const int32_t x = stack.back();
        stack.pop_back();
        for (int32_t y : placed) {
          if (anc[y] >= anc[x] || !lives[y].overlaps(lives[x]) || !key_less(x, y)) continue;
          anc[y] = anc[x];
          stack.push_back(y);
        }
      }
    }
    stack.assign(1, t);
    while (!stack.empty()) {
      const int32_t x = stack.back();
      stack.pop_back();
      for (int32_t y : placed) {
        if (desc[y] <= desc[x] || !lives[y].overlaps(lives[x]) || !key_less(y, x)) continue;
        desc[y] = desc[x];
        stack.push_back(y);
      }
    }
  }
  return plan;
}

// The layering with every tensor's ancestors as a set of all n tensors, candidates found by
// scanning every earlier position.
Layering reference_layering(std::span<const int64_t> offsets, std::span<const int64_t> sizes,
                            std::span<const Lifetime> lives, std::span<const int32_t> segments) {
  const size_t n = sizes.size();
  Layering layering;
  layering.order.resize(n);
  std::iota(layering.order.begin(), layering.order.end(), 0);
  auto segment = [&](int32_t t) { return segments.empty() ? 0 : segments[t]; };
  std::stable_sort(layering.order.begin(), layering.order.end(), [&](int32_t a, int32_t b) {
    if (segment(a) != segment(b)) return segment(a) < segment(b);
    if (offsets[a] != offsets[b]) return offsets[a] < offsets[b];
    return sizes[a] < sizes[b];
  });
  layering.below.assign(n, {});
  std::vector<std::vector<char>> ancestors(n);
  for (size_t pos = 0; pos < n; ++pos) {
    const int32_t t = layering.order[pos];
    std::vector<char> covered(n, 0);
    for (size_t q = pos; q-- > 0;) {
      const int32_t u = layering.order[q];
      if (!lives[u].overlaps(lives[t]) || covered[u]) continue;
      covered[u] = 1;
      for (size_t i = 0; i < n; ++i) covered[i] |= ancestors[u][i];
      layering.below[t].push_back(u);
    }
    ancestors[t] = std::move(covered);
    std::sort(layering.below[t].begin(), layering.below[t].end());
  }
  return layering;
}

struct Random {
  uint64_t state;
  uint64_t next(uint64_t m) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % m;
  }
};

struct Case {
  std::vector<int64_t> sizes;
  std::vector<Lifetime> lives;
  std::vector<int32_t> segments;  // empty in about a third of the cases
};

// Mostly short lifetimes with some spanning the graph; `dense` makes most of them long, past
// the overlap lists' limit, so the scanning paths are compared too.
Case random_case(Random& rng, size_t n, bool dense) {
  Case c;
  const auto steps = static_cast<int32_t>(std::max<size_t>(n / 2, 4));
  for (size_t i = 0; i < n; ++i) {
    // Repeated sizes and empty tensors: the ties every order and key must break the same way.
    c.sizes.push_back(64 * static_cast<int64_t>(rng.next(6)));
    const auto first = static_cast<int32_t>(rng.next(static_cast<uint64_t>(steps)));
    const bool long_lived = dense ? rng.next(10) < 9 : rng.next(20) == 0;
    const auto length =
        static_cast<int32_t>(long_lived ? rng.next(static_cast<uint64_t>(steps)) : rng.next(4));
    c.lives.push_back({first, first + length});
  }
  if (rng.next(3) > 0) {
    // As EDO segments: a few steps at which sizes become known, each tensor's size known at one
    // of those up to its first step (mostly the latest); `loose` also allows later ones.
    std::vector<int32_t> known{0};
    for (uint64_t k = 1 + rng.next(3); k > 0; --k)
      known.push_back(static_cast<int32_t>(rng.next(static_cast<uint64_t>(steps))));
    std::sort(known.begin(), known.end());
    const bool loose = rng.next(10) == 0;
    for (size_t i = 0; i < n; ++i) {
      const int32_t last = loose ? steps : c.lives[i].first_step;
      const auto allowed =
          static_cast<uint64_t>(std::upper_bound(known.begin(), known.end(), last) - known.begin());
      const uint64_t pick = rng.next(3) == 0 ? rng.next(allowed) : allowed - 1;
      c.segments.push_back(known[pick]);
    }
  }
  return c;
}

constexpr PlacementOrder kRules[] = {PlacementOrder::kBySize, PlacementOrder::kByBreadth,
                                     PlacementOrder::kByLifetime, PlacementOrder::kByCrossing};

TEST(OverlapPlanners, OverlapListsHoldExactlyTheOverlappingPairs) {
  Random rng{7};
  for (int round = 0; round < 50; ++round) {
    const Case c = random_case(rng, 1 + rng.next(80), round % 5 == 0);
    OverlapLists lists;
    ASSERT_TRUE(find_overlap_lists(c.lives, SIZE_MAX, &lists));
    for (size_t t = 0; t < c.lives.size(); ++t) {
      std::vector<int32_t> got(lists.of(static_cast<int32_t>(t)).begin(),
                               lists.of(static_cast<int32_t>(t)).end());
      std::sort(got.begin(), got.end());
      std::vector<int32_t> want;
      for (size_t u = 0; u < c.lives.size(); ++u)
        if (u != t && c.lives[u].overlaps(c.lives[t])) want.push_back(static_cast<int32_t>(u));
      EXPECT_EQ(got, want) << "round " << round << " tensor " << t;
    }
  }
  const std::vector<Lifetime> all_live(10, Lifetime{0, 5});
  OverlapLists lists;
  EXPECT_FALSE(find_overlap_lists(all_live, 44, &lists));  // 45 pairs
  EXPECT_TRUE(lists.begin.empty());
}

TEST(OverlapPlanners, SameAsTheQuadraticDefinitionsOnRandomLifetimes) {
  Random rng{2024};
  // What the cases must reach: the scanning paths of dense graphs, and known-steps plans that
  // place late-known tensors (not just greedy by size).
  int beyond_lists = 0, known_steps_plans = 0;
  for (int round = 0; round < 300; ++round) {
    const bool dense = round % 6 == 5;
    // Dense cases need enough tensors for their pairs to pass the lists' limit (48 per tensor).
    const size_t n = dense ? 200 + rng.next(100) : 1 + rng.next(round % 3 == 0 ? 400 : 40);
    const Case c = random_case(rng, n, dense);
    SCOPED_TRACE(::testing::Message()
                 << "round " << round << ", " << n << " tensors" << (dense ? ", dense" : "")
                 << (c.segments.empty() ? "" : ", segments"));
    OverlapLists lists;
    beyond_lists += !find_overlap_lists(c.lives, overlap_pairs_limit(n), &lists);
    for (PlacementOrder rule : kRules) {
      SCOPED_TRACE(::testing::Message() << "rule " << static_cast<int>(rule));
      const GreedyPlan got = plan_greedy_by_size(c.sizes, c.lives, c.segments, rule);
      const GreedyPlan want = reference_greedy(c.sizes, c.lives, c.segments, rule);
      ASSERT_EQ(got.offsets, want.offsets);
      ASSERT_EQ(got.arena_bytes, want.arena_bytes);

      const Layering layering = make_layering(got.offsets, c.sizes, c.lives, c.segments);
      const Layering reference = reference_layering(got.offsets, c.sizes, c.lives, c.segments);
      ASSERT_EQ(layering.order, reference.order);
      ASSERT_EQ(layering.below, reference.below);

      const std::optional<GreedyPlan> known =
          plan_greedy_known_steps(c.sizes, c.lives, c.segments, rule);
      const std::optional<GreedyPlan> known_reference =
          reference_known_steps(c.sizes, c.lives, c.segments, rule);
      ASSERT_EQ(known.has_value(), known_reference.has_value());
      if (known) {
        known_steps_plans +=
            std::any_of(c.segments.begin(), c.segments.end(), [](int32_t s) { return s > 0; });
        ASSERT_EQ(known->offsets, known_reference->offsets);
        ASSERT_EQ(known->arena_bytes, known_reference->arena_bytes);
      }
    }
    // The runtime's own greedy (plan_greedy_by_size without segments, by size) is the same
    // definition.
    std::vector<int64_t> offsets(c.sizes.size());
    GreedyLayout greedy;
    const int64_t arena = greedy.place(c.sizes, c.lives, offsets);
    const GreedyPlan want = reference_greedy(c.sizes, c.lives, {}, PlacementOrder::kBySize);
    ASSERT_EQ(offsets, want.offsets);
    ASSERT_EQ(arena, want.arena_bytes);
  }
  EXPECT_GT(beyond_lists, 10);
  EXPECT_GT(known_steps_plans, 50);
}

TEST(OverlapPlanners, LayeringOfArbitraryOffsetsIsTheQuadraticDefinitions) {
  // Offsets that are no plan at all (overlapping tensors may share bytes): the below sets depend
  // only on the order and the lifetimes.
  Random rng{99};
  for (int round = 0; round < 200; ++round) {
    const bool dense = round % 5 == 4;
    const size_t n = dense ? 200 + rng.next(60) : 1 + rng.next(120);
    const Case c = random_case(rng, n, dense);
    std::vector<int64_t> offsets;
    for (size_t i = 0; i < n; ++i) offsets.push_back(64 * static_cast<int64_t>(rng.next(8)));
    const Layering got = make_layering(offsets, c.sizes, c.lives, c.segments);
    const Layering want = reference_layering(offsets, c.sizes, c.lives, c.segments);
    ASSERT_EQ(got.order, want.order) << "round " << round;
    ASSERT_EQ(got.below, want.below) << "round " << round;
  }
}

}  // namespace
}  // namespace sod2::plan
