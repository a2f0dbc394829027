// Layerings: which tensor of a memory plan sits on which (symbolic_planner.h in core explains why
// offsets made this way are sound at every binding). A layering is chosen with concrete sizes only,
// so the compiler (for its symbolic plans) and a session (for one binding of a plan with execution
// symbols, binding_layout.h) choose them with the same code.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/program/plan_layout.h"

namespace sod2::plan {

// Which tensor sits on which: a bottom-up order and, per tensor, the reduced below set.
struct Layering {
  std::vector<int32_t> order;
  std::vector<std::vector<int32_t>> below;
};

// The layering of a concrete plan: tensors by offset (segment first), each below every later
// lifetime-overlapping one. The below sets are reduced: u is left out of below(t) when another
// member of below(t) already sits on u (transitively), since that member's end bounds u's end.
// Reads only lifetime-overlapping pairs: O(n log n) where few tensors are live at a time.
Layering make_layering(std::span<const int64_t> offsets, std::span<const int64_t> sizes,
                       std::span<const Lifetime> lives, std::span<const int32_t> segments);

// Whether no offset of the layering waits for a size known only later: every tensor below t
// (transitively) has its size known (`segments`) by t's first step. Segment-first layerings
// (make_layering with segments) keep it by construction; the others are checked with it.
bool layering_respects_segments(const Layering& layering, std::span<const Lifetime> lives,
                                std::span<const int32_t> segments);

// The arena a layering needs at concrete sizes (longest path through the below-DAG).
int64_t layering_arena(const Layering& layering, std::span<const int64_t> sizes);
// The same, writing each tensor's offset: max(0, max over below(t) of offset(u) + size(u)).
int64_t layering_offsets(const Layering& layering, std::span<const int64_t> sizes,
                         std::span<int64_t> offsets);

// Candidates are built at each of `references` (at least one) and judged at `judges` (empty: the
// first reference).
struct LayeringRequest {
  std::span<const Lifetime> lives;
  std::span<const std::vector<int64_t>> references;
  std::span<const std::vector<int64_t>> judges;
  std::span<const int32_t> segments;  // empty: one segment
  // Fewer candidates, for a session choosing at run time: by crossing and by size under the
  // known-steps rule only (with segments; none without). Without a candidate the choice's score
  // is infinite.
  bool quick = false;
};

// The winning candidate, judged with concrete sizes only.
struct LayeringChoice {
  Layering layering;
  double score = 0;  // worst arena / lower bound over the judged sizes
  std::string placement;
  size_t reference = 0;
};
LayeringChoice choose_layering(const LayeringRequest& request);

}  // namespace sod2::plan
