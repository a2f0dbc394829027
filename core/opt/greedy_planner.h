// The per-binding reference planner: "greedy by size" offset calculation (Pisarchyk & Lee 2020,
// "Efficient Memory Management for Deep Neural Net Inference"; TFLite's ArenaPlanner strategy).
// It needs concrete sizes, so it runs once per binding; the symbolic planner uses it once, at the
// upper bounds, to decide which tensor goes below which.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/opt/plan_types.h"

namespace sod2::opt {

struct GreedyPlan {
  std::vector<int64_t> offsets;  // per tensor, in input order
  int64_t arena_bytes = 0;
};

// The order tensors are placed in. Every rule puts lower segments first (when given) and breaks
// ties by earlier first step, then index, so plans are deterministic.
enum class PlacementOrder {
  kBySize,     // size descending: greedy by size, the reference
  kByBreadth,  // steps by live bytes descending, each step's tensors by size descending
               // (Pisarchyk & Lee's "greedy by breadth")
  kByLifetime  // lifetime length descending, then size: long-lived tensors settle low
};
std::vector<int32_t> placement_order(std::span<const int64_t> sizes,
                                     std::span<const Lifetime> lives,
                                     std::span<const int32_t> segments = {},
                                     PlacementOrder rule = PlacementOrder::kBySize);

// Each tensor, largest first, goes into the smallest gap between already placed tensors whose
// lifetimes overlap its own (best fit), or on top of the highest of them when no gap fits.
// Sizes must be multiples of kTensorAlignment for the offsets to be aligned. O(n^2) in tensors.
//
// `segments` (empty, or one number per tensor) layers the plan: a tensor is placed above every
// lifetime-overlapping tensor of a lower segment. The symbolic planner uses it for EDO segments,
// so that no offset depends on a size that is only known later (see symbolic_planner.h).
GreedyPlan plan_greedy_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                               std::span<const int32_t> segments = {},
                               PlacementOrder rule = PlacementOrder::kBySize);

}  // namespace sod2::opt
