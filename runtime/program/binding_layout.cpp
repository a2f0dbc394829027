#include "runtime/program/binding_layout.h"

#include <algorithm>
#include <numeric>

namespace sod2::plan {
namespace {

int64_t add_saturating(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

}  // namespace

int64_t GreedyLayout::place(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                            std::span<int64_t> offsets) {
  const size_t n = sizes.size();
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    if (lives[a].first_step != lives[b].first_step)
      return lives[a].first_step < lives[b].first_step;
    return a < b;
  });
  placed_.clear();
  int64_t arena = 0;
  for (int32_t t : order_) {
    const int64_t size = sizes[t];
    int64_t prev_end = 0;
    int64_t best_offset = -1;
    int64_t best_gap = INT64_MAX;
    for (int32_t p : placed_) {
      if (!lives[p].overlaps(lives[t])) continue;
      const int64_t gap = offsets[p] - prev_end;
      if (gap >= size && gap < best_gap) {
        best_gap = gap;
        best_offset = prev_end;
      }
      prev_end = std::max(prev_end, add_saturating(offsets[p], sizes[p]));
    }
    offsets[t] = best_offset >= 0 ? best_offset : prev_end;
    arena = std::max(arena, add_saturating(offsets[t], size));
    auto at = std::upper_bound(placed_.begin(), placed_.end(), offsets[t],
                               [&](int64_t off, int32_t p) { return off < offsets[p]; });
    placed_.insert(at, t);
  }
  return arena;
}

std::string version_text(int32_t version, size_t num_versions) {
  if (version == kBindingGreedyVersion) return "greedy by size at this binding";
  if (version < 0) return "whole-range plan";
  return "version " + std::to_string(version) +
         (num_versions > 0 ? " of " + std::to_string(num_versions) : std::string());
}

int64_t GreedyLayout::peak_live(std::span<const int64_t> sizes, std::span<const Lifetime> lives) {
  // A tensor's bytes come at its first step and go after its last: at one step, ends first.
  events_.clear();
  for (size_t t = 0; t < sizes.size(); ++t) {
    events_.push_back({static_cast<int64_t>(lives[t].first_step), sizes[t]});
    events_.push_back({static_cast<int64_t>(lives[t].last_step) + 1, -sizes[t]});
  }
  std::sort(events_.begin(), events_.end());
  int64_t live = 0, peak = 0;
  for (const auto& [step, delta] : events_)
    peak = std::max(peak, live = add_saturating(live, delta));
  return peak;
}

bool use_greedy_if_smaller(std::span<int64_t> values, std::span<const Lifetime> lives,
                           GreedyLayout* greedy, std::vector<int64_t>* scratch) {
  const size_t n = lives.size();
  if (values.size() != 2 * n + 1 || n == 0) return false;
  const std::span<const int64_t> sizes = values.first(n);
  // Sums of sizes below must not overflow; a plan this large has no bytes to win anyway.
  for (int64_t size : sizes)
    if (size < 0 || size > INT64_MAX / static_cast<int64_t>(n + 1)) return false;
  for (const Lifetime& l : lives)
    if (l.first_step < 0 || l.last_step < l.first_step) return false;
  // Cheap first: a layout at the peak of live bytes cannot be beaten.
  const int64_t arena = values[2 * n];
  if (arena <= greedy->peak_live(sizes, lives)) return false;
  scratch->resize(n);
  const int64_t greedy_arena = greedy->place(sizes, lives, *scratch);
  if (greedy_arena >= arena) return false;
  std::copy(scratch->begin(), scratch->end(), values.begin() + static_cast<ptrdiff_t>(n));
  values[2 * n] = greedy_arena;
  return true;
}

}  // namespace sod2::plan
