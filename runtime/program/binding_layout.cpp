#include "runtime/program/binding_layout.h"

#include <algorithm>
#include <numeric>

#include "runtime/program/lifetime_overlaps.h"
#include "runtime/program/memory_stats.h"
#include "runtime/program/program.h"

namespace sod2::plan {
namespace {

// The points an ExecutionLayout is judged at: every execution symbol at its bound, at half of
// it and at its low end (on its multiple).
constexpr int kExecutionPoints = 3;
int64_t execution_point(const rt::SymbolDesc& s, int64_t bound, int point) {
  const int64_t m = std::max<int64_t>(s.multiple, 1);
  const int64_t v = s.lo + (bound - s.lo) * (2 - point) / 2;
  return std::max(s.lo, v / m * m);
}

}  // namespace

int64_t GreedyLayout::place(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                            std::span<int64_t> offsets) {
  sort_by_size(sizes, lives);
  find_overlaps(lives);
  order_ = by_size_;
  return place_in_order(sizes, lives, offsets);
}

void GreedyLayout::find_overlaps(std::span<const Lifetime> lives) {
  if (overlaps_known_ &&
      std::equal(lives.begin(), lives.end(), overlaps_of_.begin(), overlaps_of_.end()))
    return;
  overlaps_of_.assign(lives.begin(), lives.end());
  overlaps_known_ = true;
  overlaps_listed_ = find_overlap_lists(lives, overlap_pairs_limit(lives.size()), &overlaps_);
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
  int64_t arena = 0;
  // The smallest gap between overlapping tensors placed before, in offset order (ties: placed
  // first), that holds the tensor; else on top of them.
  const auto search = [](const auto& overlapping, int64_t size) {
    int64_t prev_end = 0, best_offset = -1, best_gap = INT64_MAX;
    for (const auto& p : overlapping) {
      const int64_t gap = p.offset - prev_end;
      if (gap >= size && gap < best_gap) {
        best_gap = gap;
        best_offset = prev_end;
      }
      prev_end = std::max(prev_end, p.end);
    }
    return best_offset >= 0 ? best_offset : prev_end;
  };
  if (overlaps_listed_) {
    placed_at_.assign(sizes.size(), -1);
    int64_t seq = 0;
    for (int32_t t : order_) {
      near_.clear();
      const auto ts = static_cast<size_t>(t);
      for (int32_t p : overlaps_.of(t)) {
        const int64_t at = placed_at_[static_cast<size_t>(p)];
        if (at >= 0) near_.push_back({offsets[p], saturating_add(offsets[p], sizes[p]), at});
      }
      std::sort(near_.begin(), near_.end(), [](const Candidate& a, const Candidate& b) {
        return a.offset != b.offset ? a.offset < b.offset : a.seq < b.seq;
      });
      offsets[t] = search(near_, sizes[t]);
      arena = std::max(arena, saturating_add(offsets[t], sizes[t]));
      placed_at_[ts] = seq++;
    }
    return arena;
  }
  placed_.clear();
  for (int32_t t : order_) {
    const int32_t first = lives[t].first_step, last = lives[t].last_step;
    near_.clear();
    for (const Placed& p : placed_)
      if (p.first_step <= last && first <= p.last_step) near_.push_back({p.offset, p.end, 0});
    const int64_t offset = search(near_, sizes[t]);
    offsets[t] = offset;
    const int64_t end = saturating_add(offset, sizes[t]);
    arena = std::max(arena, end);
    auto at = std::upper_bound(placed_.begin(), placed_.end(), offset,
                               [](int64_t off, const Placed& p) { return off < p.offset; });
    placed_.insert(at, Placed{offset, end, first, last});
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
      if (sizes[t] > 0 && saturating_add(round_best_[t], sizes[t]) == arena)
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
  if (version == kBindingLayeringVersion) return "laid out at this binding";
  if (version < 0) return "whole-range plan";
  return "version " + std::to_string(version) +
         (num_versions > 0 ? " of " + std::to_string(num_versions) : std::string());
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
  const int64_t peak = peak_live_bytes(sizes, lives);
  if (arena <= peak + peak / 100) return false;
  scratch->resize(n);
  const int64_t greedy_arena = greedy->place_best(sizes, lives, *scratch, peak);
  if (greedy_arena >= arena) return false;
  std::copy(scratch->begin(), scratch->end(), values.begin() + static_cast<ptrdiff_t>(n));
  values[2 * n] = greedy_arena;
  return true;
}

bool execution_layout_applies(const rt::ProgramDesc& program) {
  return !binding_layout_applies(program) && program.execution_bounds.num_outputs() != 0 &&
         !program.arena_known_steps.empty() &&
         program.arena_known_steps.size() == program.num_arena_tensors;
}

Expected<bool> ExecutionLayout::choose(const rt::ProgramDesc& program, const rt::ShapeProgram& plan,
                                       std::span<const Lifetime> lives,
                                       std::span<const int64_t> symbol_values) {
  used_ = false;
  const size_t n = program.num_arena_tensors;
  const std::span<const int32_t> known = program.arena_known_steps;
  // Choosing costs two known-steps greedy passes, O(n^2) and more where sizes wait for each
  // other (about 1 ms at 354 tensors): past this a binding keeps its version.
  constexpr size_t kMaxTensors = 1500;
  if (n == 0 || n > kMaxTensors || lives.size() != n || known.size() != n ||
      plan.num_outputs() != 2 * n + 1 || symbol_values.size() != program.symbols.size())
    return false;
  for (size_t t = 0; t < n; ++t)
    if (lives[t].first_step < 0 || lives[t].last_step < lives[t].first_step ||
        known[t] > lives[t].first_step)
      return false;
  std::vector<int64_t> bound(symbol_values.begin(), symbol_values.end());
  SOD2_RETURN_IF_ERROR(bounds_.bound_all(program, bound));
  std::vector<std::vector<int64_t>> sizes(kExecutionPoints);
  std::vector<int64_t> values(plan.num_outputs()), scratch(plan.scratch_size()), at(bound);
  double version_score = 0;
  for (int point = 0; point < kExecutionPoints; ++point) {
    for (size_t k = 0; k < program.symbols.size(); ++k)
      if (program.symbols[k].execution)
        at[k] = execution_point(program.symbols[k], bound[k], point);
    SOD2_RETURN_IF_ERROR(plan.run(at, values, scratch));
    sizes[static_cast<size_t>(point)].assign(values.begin(),
                                             values.begin() + static_cast<ptrdiff_t>(n));
    // Sums of sizes must not overflow in the layering's longest paths.
    for (int64_t size : sizes[static_cast<size_t>(point)])
      if (size < 0 || size > INT64_MAX / static_cast<int64_t>(n + 1)) return false;
    const int64_t lb =
        std::max<int64_t>(peak_live_bytes(sizes[static_cast<size_t>(point)], lives), 1);
    version_score =
        std::max(version_score, static_cast<double>(values[2 * n]) / static_cast<double>(lb));
  }
  // Cheap first, as for greedy: a version within 1% of the lower bound at all three is kept.
  if (version_score <= 1.01) return false;
  // Candidates are built at the bounds only and judged at all three.
  LayeringChoice choice =
      choose_layering({lives, std::span(sizes).first(1), sizes, known, /*quick=*/true});
  // Only a clear win replaces the version the compiler chose (and reports show).
  if (!(choice.score < version_score * (1 - 1e-9))) return false;
  layering_ = std::move(choice.layering);
  used_ = true;
  return true;
}

void ExecutionLayout::apply(std::span<int64_t> values) const {
  const size_t n = layering_.order.size();
  if (!used_ || values.size() != 2 * n + 1) return;
  values[2 * n] = layering_offsets(layering_, values.first(n), values.subspan(n, n));
}

}  // namespace sod2::plan
