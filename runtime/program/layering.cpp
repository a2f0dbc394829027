#include "runtime/program/layering.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "runtime/program/greedy_placement.h"
#include "runtime/program/lifetime_overlaps.h"
#include "runtime/program/memory_stats.h"

namespace sod2::plan {
namespace {

// The latest last step among the lifetimes added so far whose first step is among the first k
// of a sorted list of first steps (a Fenwick tree over max): whether an added lifetime overlaps
// a given one, in O(log) for each.
class LatestEnds {
 public:
  void reset(size_t firsts) { tree_.assign(firsts + 1, std::numeric_limits<int32_t>::min()); }
  // Adds a last step at index `k` of the first steps.
  void add(size_t k, int32_t last) {
    for (size_t i = k + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] = std::max(tree_[i], last);
  }
  // The latest last step among those added at indices below `k`.
  int32_t latest_before(size_t k) const {
    int32_t latest = std::numeric_limits<int32_t>::min();
    for (size_t i = k; i > 0; i -= i & (~i + 1)) latest = std::max(latest, tree_[i]);
    return latest;
  }

 private:
  std::vector<int32_t> tree_;
};

const char* placement_name(PlacementOrder rule) {
  switch (rule) {
    case PlacementOrder::kBySize: return "by-size";
    case PlacementOrder::kByBreadth: return "by-breadth";
    case PlacementOrder::kByLifetime: return "by-lifetime";
    case PlacementOrder::kByCrossing: return "by-crossing";
  }
  return "by-size";
}

}  // namespace

Layering make_layering(std::span<const int64_t> offsets, std::span<const int64_t> sizes,
                       std::span<const Lifetime> lives, std::span<const int32_t> segments) {
  const size_t n = sizes.size();
  Layering layering;
  layering.order.resize(n);
  std::iota(layering.order.begin(), layering.order.end(), 0);
  auto segment = [&](int32_t t) { return segments.empty() ? 0 : segments[t]; };
  std::stable_sort(layering.order.begin(), layering.order.end(), [&](int32_t a, int32_t b) {
    if (segment(a) != segment(b)) return segment(a) < segment(b);
    if (offsets[a] != offsets[b]) return offsets[a] < offsets[b];
    return sizes[a] < sizes[b];  // an empty tensor at the same offset goes first
  });
  layering.below.assign(n, {});
  // Unreduced, t sits on every earlier tensor in order that overlaps it (a candidate); reduced,
  // a candidate u is left out when some later candidate sits on u transitively. That holds
  // exactly when some later candidate y overlaps u directly: a chain from u up to a candidate
  // runs through earlier positions only, and any run of it outside t's lifetime lies on one side
  // of it, so the tensors before and after the run both overlap t's edge step and each other and
  // the run can be skipped; the chain's first link is then a later candidate overlapping u. So
  // each tensor needs only its own candidates, not every tensor's ancestors.
  std::vector<int32_t> position(n);
  for (size_t pos = 0; pos < n; ++pos)
    position[static_cast<size_t>(layering.order[pos])] = static_cast<int32_t>(pos);
  OverlapLists overlaps;
  const bool listed = find_overlap_lists(lives, overlap_pairs_limit(n), &overlaps);
  std::vector<int32_t> candidates, firsts;
  LatestEnds seen;  // the candidates looked at so far
  for (size_t pos = 0; pos < n; ++pos) {
    const int32_t t = layering.order[pos];
    candidates.clear();
    if (listed) {
      for (int32_t u : overlaps.of(t))
        if (position[static_cast<size_t>(u)] < static_cast<int32_t>(pos)) candidates.push_back(u);
      std::sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
        return position[static_cast<size_t>(a)] > position[static_cast<size_t>(b)];
      });
    } else {
      for (size_t q = pos; q-- > 0;)
        if (lives[layering.order[q]].overlaps(lives[t])) candidates.push_back(layering.order[q]);
    }
    // Latest first, each kept unless one looked at before it starts by its last step and ends
    // at or after its first.
    firsts.clear();
    for (int32_t u : candidates) firsts.push_back(lives[u].first_step);
    std::sort(firsts.begin(), firsts.end());
    firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
    seen.reset(firsts.size());
    auto index_of = [&](int32_t step, bool after) {
      const auto it = after ? std::upper_bound(firsts.begin(), firsts.end(), step)
                            : std::lower_bound(firsts.begin(), firsts.end(), step);
      return static_cast<size_t>(it - firsts.begin());
    };
    for (int32_t u : candidates) {
      const Lifetime& life = lives[u];
      if (seen.latest_before(index_of(life.last_step, true)) < life.first_step)
        layering.below[t].push_back(u);
      seen.add(index_of(life.first_step, false), life.last_step);
    }
    std::sort(layering.below[t].begin(), layering.below[t].end());
  }
  return layering;
}

bool layering_respects_segments(const Layering& layering, std::span<const Lifetime> lives,
                                std::span<const int32_t> segments) {
  if (segments.empty()) return true;
  // known[t]: the step by which t's size and the sizes of everything below it are known.
  std::vector<int32_t> known(segments.size(), 0);
  for (int32_t t : layering.order) {
    known[t] = segments[t];
    for (int32_t u : layering.below[t]) known[t] = std::max(known[t], known[u]);
    if (known[t] > lives[t].first_step) return false;
  }
  return true;
}

int64_t layering_offsets(const Layering& layering, std::span<const int64_t> sizes,
                         std::span<int64_t> offsets) {
  int64_t arena = 0;
  for (int32_t t : layering.order) {
    int64_t offset = 0;
    for (int32_t u : layering.below[t])
      offset = std::max(offset, saturating_add(offsets[u], sizes[u]));
    offsets[t] = offset;
    arena = std::max(arena, saturating_add(offset, sizes[t]));
  }
  return arena;
}

int64_t layering_arena(const Layering& layering, std::span<const int64_t> sizes) {
  std::vector<int64_t> offsets(sizes.size(), 0);
  return layering_offsets(layering, sizes, offsets);
}

LayeringChoice choose_layering(const LayeringRequest& request) {
  // Every reference times every placement order, judged by the worst arena / lower bound over
  // the judged sizes.
  std::span<const std::vector<int64_t>> judges =
      request.judges.empty() ? request.references.first(1) : request.judges;
  std::vector<int64_t> lower_bounds;
  for (const auto& sizes : judges)
    lower_bounds.push_back(std::max<int64_t>(peak_live_bytes(sizes, request.lives), 1));
  LayeringChoice best;
  // Quick choices have no segment-first candidate to fall back on.
  if (request.quick) best.score = std::numeric_limits<double>::infinity();
  using Rules = std::vector<PlacementOrder>;
  const Rules first_rules =
      request.quick
          ? Rules{}
          : Rules{PlacementOrder::kBySize, PlacementOrder::kByBreadth, PlacementOrder::kByLifetime};
  const Rules known_rules = request.quick
                                ? Rules{PlacementOrder::kByCrossing, PlacementOrder::kBySize}
                                : Rules{PlacementOrder::kBySize, PlacementOrder::kByBreadth,
                                        PlacementOrder::kByLifetime, PlacementOrder::kByCrossing};
  for (size_t r = 0; r < request.references.size(); ++r) {
    for (PlacementOrder rule : first_rules) {
      const std::vector<int64_t>& ref = request.references[r];
      const GreedyPlan greedy = plan_greedy_by_size(ref, request.lives, request.segments, rule);
      Layering layering = make_layering(greedy.offsets, ref, request.lives, request.segments);
      double score = 0;
      for (size_t j = 0; j < judges.size(); ++j) {
        score = std::max(score, static_cast<double>(layering_arena(layering, judges[j])) /
                                    static_cast<double>(lower_bounds[j]));
      }
      if (best.placement.empty() || score < best.score)
        best = {std::move(layering), score, placement_name(rule), r};
    }
  }
  // With segments, the candidates that let late tensors sit low where the rule allows; they
  // win only when strictly better.
  // Above kKnownStepsMaxTensors their propagation (greedy_placement.h) could cost more than the
  // rest of planning; such graphs keep the segment-first candidates.
  constexpr size_t kKnownStepsMaxTensors = 4000;
  const bool segmented = request.lives.size() <= kKnownStepsMaxTensors &&
                         std::any_of(request.segments.begin(), request.segments.end(),
                                     [](int32_t s) { return s > 0; });
  for (size_t r = 0; segmented && r < request.references.size(); ++r) {
    for (PlacementOrder rule : known_rules) {
      const std::vector<int64_t>& ref = request.references[r];
      const std::optional<GreedyPlan> greedy =
          plan_greedy_known_steps(ref, request.lives, request.segments, rule);
      if (!greedy) continue;
      Layering layering = make_layering(greedy->offsets, ref, request.lives, {});
      if (!layering_respects_segments(layering, request.lives, request.segments)) continue;
      double score = 0;
      for (size_t j = 0; j < judges.size(); ++j) {
        score = std::max(score, static_cast<double>(layering_arena(layering, judges[j])) /
                                    static_cast<double>(lower_bounds[j]));
      }
      if (score < best.score)
        best = {std::move(layering), score, std::string(placement_name(rule)) + "/known-steps", r};
    }
  }
  return best;
}

}  // namespace sod2::plan
