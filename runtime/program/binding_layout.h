// The layout one binding runs with. A plan version's offsets are expressions chosen ahead of time
// for a whole cell of input sizes; at a binding where every size is known before the first step
// (a plan without execution symbols) greedy by size over those exact sizes can need less. The
// compiler's reports and the runtime both call this, so the plan a person is shown at a binding
// is the plan that runs there.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/execution_bounds.h"
#include "runtime/program/layering.h"
#include "runtime/program/lifetime_overlaps.h"
#include "runtime/program/plan_layout.h"

namespace sod2::rt {
struct ProgramDesc;
}

namespace sod2::plan {

// The version numbers reports and sessions give a layout made at the binding (plan versions
// are -1 for the whole-range plan and 0.. for the bucketed ones): greedy by size (a plan without
// execution symbols), or a layering (ExecutionLayout, a plan with them).
inline constexpr int32_t kBindingGreedyVersion = -2;
inline constexpr int32_t kBindingLayeringVersion = -3;
// Whether a version number is one of those: offsets made for the binding, not the plan's
// expressions.
inline bool laid_out_at_binding(int32_t version) {
  return version == kBindingGreedyVersion || version == kBindingLayeringVersion;
}

// How reports name a version: "whole-range plan", "version 2 of 5" ("version 2" without a
// count), "greedy by size at this binding", "laid out at this binding".
std::string version_text(int32_t version, size_t num_versions = 0);

// Greedy by size: tensors in order of size descending (ties: earlier first step, then index),
// each at the smallest gap between lifetime-overlapping tensors placed before it that holds it,
// else on top of them. Keeps its working buffers between calls.
class GreedyLayout {
 public:
  // Writes each tensor's offset; returns the arena size. Sizes are aligned bytes (so are the
  // offsets then); lives run parallel to sizes.
  int64_t place(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                std::span<int64_t> offsets);
  // Greedy by size, then rounds that each place first, after the tensors earlier rounds chose,
  // the tensor setting the top or one of the largest live with it, whichever gives the smallest
  // arena; returns the smallest arena met (stops within 1% of `peak`). At most kPromotionRounds x
  // kPromotionCandidates + 1 greedy passes.
  int64_t place_best(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                     std::span<int64_t> offsets, int64_t peak);

 private:
  void sort_by_size(std::span<const int64_t> sizes, std::span<const Lifetime> lives);
  // Which tensors' lifetimes overlap each one's (overlaps_), when that is far fewer than all:
  // a tensor's gap search then reads only those placed among them.
  void find_overlaps(std::span<const Lifetime> lives);
  // Places in order_.
  int64_t place_in_order(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                         std::span<int64_t> offsets);

  std::vector<int32_t> by_size_, order_;
  // The tensors placed so far, by offset then by placement, with what the gap search reads of
  // each kept together: one pass over contiguous memory per tensor placed.
  struct Placed {
    int64_t offset, end;
    int32_t first_step, last_step;
  };
  std::vector<Placed> placed_;
  // Per tensor, its lifetime-overlapping tensors; unused (overlaps_listed_ false) when scanning
  // every placed tensor is as cheap.
  OverlapLists overlaps_;
  bool overlaps_listed_ = false;
  // The lifetimes overlaps_ was found for: a session's bindings, and a sweep's points, all
  // share theirs, so it is found once.
  std::vector<Lifetime> overlaps_of_;
  bool overlaps_known_ = false;
  std::vector<int64_t> placed_at_;  // per tensor: its place in order (-1: not yet), this pass
  struct Candidate {
    int64_t offset, end, seq;
  };
  std::vector<Candidate> near_;
  std::vector<int32_t> prefix_, candidates_;  // place_best's chosen tensors; a round's tries
  std::vector<int64_t> trial_, round_best_;
  std::vector<char> promoted_;
};

// place_best's search: paid once per new binding (a session keeps the layout of the last one).
inline constexpr int kPromotionRounds = 6;
inline constexpr size_t kPromotionCandidates = 4;

// `values` is a plan program's output at one binding: n sizes, n offsets, the arena size. When
// that arena is more than 1% above the peak of live bytes, replaces the offsets and the arena by
// GreedyLayout::place_best's if that arena is smaller, and says whether it did. Only for plans
// without execution symbols: a size learnt mid-run must not move a tensor already written, which
// the plan's own offsets guarantee and this does not.
// Whether a program's bindings may run use_greedy_if_smaller's layout: it has no execution
// symbols, so every size is known before the first step.
bool binding_layout_applies(const rt::ProgramDesc& program);

bool use_greedy_if_smaller(std::span<int64_t> values, std::span<const Lifetime> lives,
                           GreedyLayout* greedy, std::vector<int64_t>* scratch);

// A plan with execution symbols cannot be laid out greedily once per binding: a size learnt
// mid-run must not move a tensor already written. What can be chosen per binding is a layering
// (layering.h) that keeps every offset a function of sizes known when its tensor is written
// (ProgramDesc::arena_known_steps), so the session evaluates it again as each execution symbol
// binds. Its version's own layering was chosen for a whole cell of input sizes; this one is
// built at the binding's, with the execution symbols at their bounds (execution_bounds.h), judged
// there and at half of them and their low ends, and used where its worst arena over lower bound
// at those three is below the version's (which is kept, at no cost, when within 1% of it).
// Whether a program's bindings may use one: it has execution symbols, their bounds and the known
// steps.
bool execution_layout_applies(const rt::ProgramDesc& program);

class ExecutionLayout {
 public:
  // Chooses for the input symbols of `symbol_values` (one per symbol; execution symbols ignored)
  // and `plan`, the plan version the binding runs; `lives` are the arena tensors' (over
  // main-graph steps, as arena_known_steps). Returns whether the chosen layering is used.
  // Errors: the bounds or the plan cannot be evaluated at these sizes (an overflow).
  Expected<bool> choose(const rt::ProgramDesc& program, const rt::ShapeProgram& plan,
                        std::span<const Lifetime> lives, std::span<const int64_t> symbol_values);
  bool used() const { return used_; }
  // `values` is a plan program's output at any values of the execution symbols: its offsets and
  // arena become the chosen layering's at its sizes. Only when used().
  void apply(std::span<int64_t> values) const;

 private:
  ExecutionBounds bounds_;
  Layering layering_;
  bool used_ = false;
};

}  // namespace sod2::plan
