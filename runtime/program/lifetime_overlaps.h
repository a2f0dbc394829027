// Which tensors' lifetimes overlap which: the only pairs a layout's decisions read (two tensors
// live at no common step may share bytes), so planners that look only at these scale with the
// tensors live at a time rather than with all tensors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/program/plan_layout.h"

namespace sod2::plan {

// Per tensor, the other tensors whose lifetimes overlap its own, in no particular order (CSR:
// neighbours[begin[t]..begin[t + 1]]).
struct OverlapLists {
  std::vector<int32_t> begin, neighbours;

  std::span<const int32_t> of(int32_t t) const {
    const auto i = static_cast<size_t>(t);
    return std::span(neighbours)
        .subspan(static_cast<size_t>(begin[i]), static_cast<size_t>(begin[i + 1] - begin[i]));
  }
};

// Fills `out` and returns true, or returns false (leaving `out` empty) when there are more than
// `max_pairs` overlapping pairs: a dense graph, for which a caller's scan of all tensors costs
// no more than the lists would. O(n log n + pairs).
bool find_overlap_lists(std::span<const Lifetime> lives, size_t max_pairs, OverlapLists* out);

// The bound callers use: beyond this many overlaps per tensor on average, sorting each tensor's
// overlapping set costs about what reading every tensor does.
inline size_t overlap_pairs_limit(size_t tensors) { return 48 * tensors; }

}  // namespace sod2::plan
