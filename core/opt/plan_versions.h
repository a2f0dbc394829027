// Size-bucketed plan versions ("multi-version", DESIGN §5). One symbolic plan is valid for every
// binding, but its layering was chosen at a few reference sizes: far from them a different
// layering can sit closer to the lower bound. The input symbols' ranges are cut into buckets;
// each cell of the grid gets a layering chosen at its own sizes when that layering beats the
// whole-range plan inside the cell, else it shares the whole-range plan.
//
// Every version is a complete symbolic plan, valid at every binding in the declared ranges (the
// construction in symbolic_planner.h does not depend on the reference), so picking a version is
// a speed and memory choice, never a correctness one: a binding outside its cell still gets a
// non-overlapping layout. Picking is a few comparisons, without allocation.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/opt/plan_program.h"
#include "core/opt/symbolic_planner.h"
#include "core/sym/evaluate.h"
#include "core/sym/ranges.h"

namespace sod2::opt {

// Buckets per symbol: bucket b holds the values in (upper[b-1], upper[b]]; the first starts at
// the range's low end and the last ends at its high end.
struct BucketGrid {
  std::vector<sym::Symbol> symbols;
  std::vector<std::vector<int64_t>> uppers;  // per symbol
  std::vector<int64_t> lows;                 // per symbol, the range's low end
  std::vector<int64_t> multiples;            // per symbol, the range's multiple

  size_t num_cells() const;
  // The cell of these values (parallel to `symbols`); a value past the last bucket counts in it.
  size_t cell_of(std::span<const int64_t> values) const;
  // The cell of a binding; a symbol it lacks takes its range's high end.
  size_t cell_of(const sym::Binding& binding) const;
  // The low and high corners of a cell, as bindings of the bucketed symbols.
  sym::Binding low_corner(size_t cell) const;
  sym::Binding high_corner(size_t cell) const;
  std::string cell_text(size_t cell) const;  // "seq=1..16, batch=5..8"
};

// Geometric buckets (at most `per_symbol` each, every bucket spanning a factor >= 2) for the
// given input symbols with a useful range; the symbols whose ranges span the largest factors
// come first, and at most `max_cells` cells in all.
BucketGrid make_bucket_grid(const sym::RangeMap& ranges, std::span<const sym::Symbol> symbols,
                            int per_symbol = 3, size_t max_cells = 27);

struct PlanVersion {
  SymbolicPlan symbolic;
  PlanProgram program;
};

struct PlanVersions {
  BucketGrid grid;
  // Per cell: -1 for the whole-range plan, else an index into `versions`.
  std::vector<int32_t> version_of_cell;
  std::vector<PlanVersion> versions;
};

// What the versions are built and judged from: the plan request every version shares (sizes as
// expressions, lives, segments, ranges), the plan each cell falls back to, and concrete sizes at
// a binding of the bucketed symbols (the others at their upper bound).
struct VersionRequest {
  std::span<const sym::SymExpr> sizes;
  std::span<const Lifetime> lives;
  std::span<const int32_t> segments;
  const sym::RangeMap* ranges = nullptr;
  const SymbolicPlan* whole_range = nullptr;
  std::function<std::vector<int64_t>(const sym::Binding&)> sizes_at;
  // Optional: more sizes to judge a cell at, for a binding of the bucketed symbols (the
  // execution symbols lower than sizes_at puts them, say).
  std::function<std::vector<std::vector<int64_t>>(const sym::Binding&)> more_judges_at;
};

// A cell gets its own version when it lowers the worst arena / lower bound over the cell's
// corners (all of them: sizes that grow with different symbols change order off the diagonal)
// and middle (and more_judges_at's points) by more than `min_gain` (relative), and at each of
// them needs no more than the whole-range plan or greedy by size + 1%, whichever is larger. Its
// layering is built at the high corner, and also at the low corner and the middle where the high
// corner's is not within 1% of the bound.
Expected<PlanVersions> plan_versions(const BucketGrid& grid, const VersionRequest& request,
                                     double min_gain = 0.005);

}  // namespace sod2::opt
