// The symbolic memory plan: one offset per tensor as a SymExpr, valid at every binding inside
// the ranges, so that a new input size needs an evaluation, never a new plan (DESIGN §5).
//
// Construction. The tensors are put in a total order; a tensor's `below` set is every earlier
// tensor whose lifetime overlaps its own, and
//     offset(t) = max(0, max over u in below(t) of offset(u) + size(u)).
// Non-overlap then holds by construction at every binding: of two tensors live at the same step
// one is below the other, and the max puts the upper one at or above the lower one's end (sizes
// are never negative). No proof search is needed; the prover only simplifies. Offsets are sums
// of aligned sizes, so they are aligned too. The arena is the max of offset + size over the
// tensors nothing is placed on.
//
// Quality comes from the order. It is the order of the offsets that a greedy planner gives at a
// reference binding, so at that binding every offset is at most greedy's (offset(t) is a longest
// path in the below-DAG, and greedy's offsets satisfy the same inequalities) and the arena is at
// most greedy's arena; at other bindings the same layering shrinks with the sizes. Several
// candidates are tried, cheaply, with concrete sizes only: each reference (the upper bounds
// first, then the bindings a caller checks) times each placement order of greedy_placement.h.
// The candidate with the lowest worst arena / lower bound over the judged bindings wins (ties go
// to the earlier one); only the winner is turned into expressions.
//
// Expressions stay small: u is dropped from below(t) when another member of below(t) is already
// on top of u (transitively), since that member's end bounds u's end; the simplifier then drops
// max operands the ranges prove never win.
//
// EDO segments: `segments[t]` is the first step at which every symbol of t's size is known (0
// without execution symbols). A tensor's offset only involves symbols known when it is written:
// every tensor below it (transitively) has its size known by its first step. The runtime
// evaluates the plan again once an execution symbol is known, and the tensors already written
// keep their offsets, with no search. An EDO node's own outputs open their segment, so their
// offsets may involve the symbol the node mints: the runtime places them once the node has
// counted its output (the usual two-phase EDO kernel), still before writing them.
// Two kinds of candidates keep this: segment-first ones (the tensors of a later segment above
// every overlapping tensor of an earlier one: safe by construction, but a late tensor can never
// fill a gap under tensors that start after it is known), and, when there are segments, ones
// from plan_greedy_known_steps (greedy_placement.h), which place by the rule itself and are
// checked with layering_respects_segments before they compete.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/opt/plan_types.h"
#include "core/sym/ranges.h"
#include "core/sym/sym_expr.h"
#include "runtime/program/layering.h"

namespace sod2::opt {

using plan::Layering;
using plan::layering_arena;
using plan::layering_respects_segments;
using plan::LayeringChoice;
using plan::make_layering;

struct SymbolicPlan {
  std::vector<sym::SymExpr> sizes;
  std::vector<sym::SymExpr> offsets;
  // The tensors whose end bounds each offset from below (after the reduction above), and an
  // order in which every tensor comes after those below it.
  std::vector<std::vector<int32_t>> below;
  std::vector<int32_t> layer_order;
  sym::SymExpr arena_bytes;
  std::string placement;  // the winning candidate's placement order: "by-size"...
  size_t reference = 0;   // and the index of its reference sizes
};

struct SymbolicPlanRequest {
  std::span<const sym::SymExpr> sizes;  // aligned, never negative inside the ranges
  std::span<const Lifetime> lives;
  // Concrete sizes to build candidate layerings at; the first is the upper bounds. At least one.
  std::span<const std::vector<int64_t>> references;
  // Concrete sizes to judge candidates at; empty: the first reference.
  std::span<const std::vector<int64_t>> judges;
  std::span<const int32_t> segments;      // empty: one segment
  const sym::RangeMap* ranges = nullptr;  // for simplification; nullptr: canonical forms only
};

// The two halves of plan_symbolic, for callers that compare layerings before paying for
// expressions (plan_versions.h): the winning candidate, judged with concrete sizes only...
LayeringChoice choose_layering(const SymbolicPlanRequest& request);
// ...and its offsets as expressions.
SymbolicPlan symbolic_from_layering(const SymbolicPlanRequest& request, LayeringChoice choice);

SymbolicPlan plan_symbolic(const SymbolicPlanRequest& request);

}  // namespace sod2::opt
