#include "runtime/program/binding_layout.h"

#include <algorithm>
#include <numeric>

#include "runtime/program/program.h"

namespace sod2::plan {
namespace {

int64_t add_saturating(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

}  // namespace

int64_t GreedyLayout::place(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                            std::span<int64_t> offsets) {
  sort_by_size(sizes, lives);
  order_ = by_size_;
  return place_in_order(sizes, lives, offsets);
}

void GreedyLayout::sort_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives) {
  by_size_.resize(sizes.size());
  std::iota(by_size_.begin(), by_size_.end(), 0);
  std::sort(by_size_.begin(), by_size_.end(), [&](int32_t a, int32_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    if (lives[a].first_step != lives[b].first_step)
      return lives[a].first_step < lives[b].first_step;
    return a < b;
  });
}

int64_t GreedyLayout::place_in_order(std::span<const int64_t> sizes,
                                     std::span<const Lifetime> lives, std::span<int64_t> offsets) {
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

int64_t GreedyLayout::place_best(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                                 std::span<int64_t> offsets, int64_t peak) {
  int64_t best = place(sizes, lives, offsets);
  const size_t n = sizes.size();
  round_best_.assign(offsets.begin(), offsets.end());
  trial_.resize(n);
  int64_t arena = best;
  promoted_.assign(n, 0);
  prefix_.clear();
  // Within 1% of the peak is as good as a search here can do cheaply: stop there.
  const int64_t good_enough = peak + peak / 100;
  for (int round = 0; round < kPromotionRounds && best > good_enough; ++round) {
    // Greedy by size stacks a long-lived tensor over big short-lived ones (a residual stream
    // over a block's wide activations) where placing it first would let them share the bytes
    // below. So try placing first the tensor that sets the top, or one of the largest live
    // with it; keep the best, and repeat from there.
    int32_t top = -1;
    for (size_t t = 0; t < n; ++t)
      if (sizes[t] > 0 && add_saturating(round_best_[t], sizes[t]) == arena)
        top = static_cast<int32_t>(t);
    if (top < 0) break;
    candidates_.clear();
    if (!promoted_[static_cast<size_t>(top)]) candidates_.push_back(top);
    for (int32_t t : by_size_) {
      if (t == top || promoted_[static_cast<size_t>(t)] || !lives[t].overlaps(lives[top])) continue;
      candidates_.push_back(t);
      if (candidates_.size() == kPromotionCandidates) break;
    }
    int32_t chosen = -1;
    int64_t chosen_arena = INT64_MAX;
    for (int32_t c : candidates_) {
      order_ = prefix_;
      order_.push_back(c);
      for (int32_t t : by_size_)
        if (t != c && !promoted_[static_cast<size_t>(t)]) order_.push_back(t);
      const int64_t a = place_in_order(sizes, lives, trial_);
      if (a < chosen_arena) {
        chosen_arena = a;
        chosen = c;
        round_best_.swap(trial_);
      }
    }
    if (chosen < 0) break;
    promoted_[static_cast<size_t>(chosen)] = 1;
    prefix_.push_back(chosen);
    arena = chosen_arena;
    if (arena < best) {
      best = arena;
      std::copy(round_best_.begin(), round_best_.end(), offsets.begin());
    }
  }
  return best;
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

bool binding_layout_applies(const rt::ProgramDesc& program) {
  return std::none_of(program.symbols.begin(), program.symbols.end(),
                      [](const rt::SymbolDesc& s) { return s.execution; });
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
  // Cheap first: a layout within 1% of the peak of live bytes is not worth a search per binding.
  const int64_t arena = values[2 * n];
  const int64_t peak = greedy->peak_live(sizes, lives);
  if (arena <= peak + peak / 100) return false;
  scratch->resize(n);
  const int64_t greedy_arena = greedy->place_best(sizes, lives, *scratch, peak);
  if (greedy_arena >= arena) return false;
  std::copy(scratch->begin(), scratch->end(), values.begin() + static_cast<ptrdiff_t>(n));
  values[2 * n] = greedy_arena;
  return true;
}

}  // namespace sod2::plan
