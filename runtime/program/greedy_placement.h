// The per-binding reference planner: "greedy by size" offset calculation (Pisarchyk & Lee 2020,
// "Efficient Memory Management for Deep Neural Net Inference"; TFLite's ArenaPlanner strategy).
// It needs concrete sizes, so it runs once per binding: the symbolic planner uses it at reference
// sizes to decide which tensor goes below which, and a session or a report at one binding of a
// plan with execution symbols to lay that binding out (binding_layout.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "runtime/program/plan_layout.h"

namespace sod2::plan {

struct GreedyPlan {
  std::vector<int64_t> offsets;  // per tensor, in input order
  int64_t arena_bytes = 0;
};

// The order tensors are placed in. Every rule puts lower segments first (when given) and breaks
// ties by earlier first step, then index, so plans are deterministic.
enum class PlacementOrder {
  kBySize,      // size descending: greedy by size, the reference
  kByBreadth,   // steps by live bytes descending, each step's tensors by size descending
                // (Pisarchyk & Lee's "greedy by breadth")
  kByLifetime,  // lifetime length descending, then size: long-lived tensors settle low
  kByCrossing   // with segments: the tensors live across the step a later segment becomes
                // known first (a later tensor must sit on them), each group by size descending
};
std::vector<int32_t> placement_order(std::span<const int64_t> sizes,
                                     std::span<const Lifetime> lives,
                                     std::span<const int32_t> segments = {},
                                     PlacementOrder rule = PlacementOrder::kBySize);

// Each tensor, largest first, goes into the smallest gap between already placed tensors whose
// lifetimes overlap its own (best fit), or on top of the highest of them when no gap fits.
// Sizes must be multiples of kTensorAlignment for the offsets to be aligned. Each tensor reads
// only the placed tensors its lifetime overlaps: O(n log n) where few are live at a time, O(n^2)
// in tensors at worst.
//
// `segments` (empty, or one number per tensor) layers the plan: a tensor is placed above every
// lifetime-overlapping tensor of a lower segment. The symbolic planner uses it for EDO segments,
// so that no offset depends on a size that is only known later (see symbolic_planner.h).
GreedyPlan plan_greedy_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                               std::span<const int32_t> segments = {},
                               PlacementOrder rule = PlacementOrder::kBySize);

// Greedy by size under the weaker rule the runtime needs of EDO segments: a tensor's offset may
// depend on a size only once that size is known, so a tensor may sit on any tensor whose size,
// and the sizes of everything below it, are known by the tensor's first step (`segments[t]` is
// the step from which t's size is known). A late-known tensor may then sit low, under tensors
// that start after it is known, instead of above every earlier segment's tensor.
// "Below" is the layering's (symbolic_planner.h): lifetime-overlapping and earlier by (offset,
// size, index). Tensors are placed in `rule`'s order, earlier segments first, so the top of the
// placed tensors always keeps the rule; each takes the smallest gap that keeps it, else the top.
// nullopt when the rule cannot hold (a segment after its tensor's first step).
// O(n^2) in tensors at worst, more when known steps must be propagated; like greedy by size, it
// reads only lifetime-overlapping tensors, so graphs with few live at a time cost far less.
std::optional<GreedyPlan> plan_greedy_known_steps(std::span<const int64_t> sizes,
                                                  std::span<const Lifetime> lives,
                                                  std::span<const int32_t> segments,
                                                  PlacementOrder rule = PlacementOrder::kBySize);

}  // namespace sod2::plan
