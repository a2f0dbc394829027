#include "core/opt/plan_versions.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include "core/opt/plan_types.h"
#include "core/opt/report_binding.h"

namespace sod2::opt {
namespace {

int64_t round_down(int64_t v, const sym::SymbolRange& r) {
  const int64_t m = std::max<int64_t>(r.multiple, 1);
  return std::max(r.lo, v / m * m);
}

size_t bucket_index(const std::vector<int64_t>& uppers, int64_t value) {
  for (size_t b = 0; b < uppers.size(); ++b)
    if (value <= uppers[b]) return b;
  return uppers.size() - 1;
}

// A cell layering this close to the lower bound everywhere it is judged needs no second try.
constexpr double kGoodEnough = 1.01;
// How far above greedy by size a version may go at a point where the whole-range plan was
// better (the plans are held to greedy + 2% at every binding).
constexpr double kGreedySlack = 0.01;

double worst_ratio(const Layering& layering, std::span<const std::vector<int64_t>> judges,
                   std::span<const Lifetime> lives) {
  double worst = 0;
  for (const std::vector<int64_t>& sizes : judges) {
    const int64_t lb = std::max<int64_t>(peak_live_bytes(sizes, lives), 1);
    worst = std::max(
        worst, static_cast<double>(layering_arena(layering, sizes)) / static_cast<double>(lb));
  }
  return worst;
}

}  // namespace

size_t BucketGrid::num_cells() const {
  size_t n = 1;
  for (const auto& u : uppers) n *= u.size();
  return n;
}

size_t BucketGrid::cell_of(std::span<const int64_t> values) const {
  size_t cell = 0;
  for (size_t i = 0; i < symbols.size(); ++i)
    cell = cell * uppers[i].size() + bucket_index(uppers[i], values[i]);
  return cell;
}

size_t BucketGrid::cell_of(const sym::Binding& binding) const {
  size_t cell = 0;
  for (size_t i = 0; i < symbols.size(); ++i) {
    auto it = binding.find(symbols[i]);
    const int64_t v = it != binding.end() ? it->second : uppers[i].back();
    cell = cell * uppers[i].size() + bucket_index(uppers[i], v);
  }
  return cell;
}

namespace {
// The bucket of each symbol in a cell, first symbol most significant.
std::vector<size_t> buckets_of(const BucketGrid& grid, size_t cell) {
  std::vector<size_t> b(grid.symbols.size());
  for (size_t i = grid.symbols.size(); i-- > 0;) {
    b[i] = cell % grid.uppers[i].size();
    cell /= grid.uppers[i].size();
  }
  return b;
}
}  // namespace

sym::Binding BucketGrid::low_corner(size_t cell) const {
  const std::vector<size_t> b = buckets_of(*this, cell);
  sym::Binding out;
  for (size_t i = 0; i < symbols.size(); ++i) {
    // The first value above the previous bucket that the symbol may take.
    const int64_t m = std::max<int64_t>(multiples[i], 1);
    out[symbols[i]] = b[i] == 0 ? lows[i] : (uppers[i][b[i] - 1] / m + 1) * m;
  }
  return out;
}

sym::Binding BucketGrid::high_corner(size_t cell) const {
  const std::vector<size_t> b = buckets_of(*this, cell);
  sym::Binding out;
  for (size_t i = 0; i < symbols.size(); ++i) out[symbols[i]] = uppers[i][b[i]];
  return out;
}

std::string BucketGrid::cell_text(size_t cell) const {
  const sym::Binding lo = low_corner(cell), hi = high_corner(cell);
  std::string out;
  for (const sym::Symbol& s : symbols) {
    out += (out.empty() ? "" : ", ") + s.name() + "=" + std::to_string(lo.at(s)) + ".." +
           std::to_string(hi.at(s));
  }
  return out.empty() ? "(all)" : out;
}

BucketGrid make_bucket_grid(const sym::RangeMap& ranges, std::span<const sym::Symbol> symbols,
                            int per_symbol, size_t max_cells) {
  struct Candidate {
    sym::Symbol symbol;
    double factor;
    int64_t lo;
    int64_t multiple;
    std::vector<int64_t> uppers;
  };
  std::vector<Candidate> candidates;
  for (const sym::Symbol& s : symbols) {
    const sym::SymbolRange r = ranges.get(s);
    const int64_t lo = std::max<int64_t>(r.lo, 1);
    if (r.hi > kUnboundedThreshold || r.hi < 4 * lo) continue;
    const double factor = static_cast<double>(r.hi) / static_cast<double>(lo);
    const int k = std::min(per_symbol, static_cast<int>(std::floor(std::log2(factor))));
    std::vector<int64_t> uppers;
    for (int b = 1; b < k; ++b) {
      const int64_t edge =
          round_down(std::llround(static_cast<double>(lo) * std::pow(factor, double(b) / k)), r);
      if (edge >= r.lo && edge < r.hi && (uppers.empty() || edge > uppers.back()))
        uppers.push_back(edge);
    }
    if (uppers.empty()) continue;
    uppers.push_back(r.hi);
    candidates.push_back({s, factor, r.lo, r.multiple, std::move(uppers)});
  }
  std::stable_sort(
      candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        return a.factor != b.factor ? a.factor > b.factor : a.symbol.name() < b.symbol.name();
      });
  BucketGrid grid;
  size_t cells = 1;
  for (Candidate& c : candidates) {
    if (cells * c.uppers.size() > max_cells) continue;
    cells *= c.uppers.size();
    grid.symbols.push_back(c.symbol);
    grid.lows.push_back(c.lo);
    grid.multiples.push_back(c.multiple);
    grid.uppers.push_back(std::move(c.uppers));
  }
  return grid;
}

namespace {

// The corners of the box [lo, hi] other than lo and hi themselves: 2^k - 2 for k symbols whose
// low and high values differ (at most 62, from six such symbols on; grids have at most 27 cells).
std::vector<sym::Binding> off_diagonal_corners(const sym::Binding& lo, const sym::Binding& hi) {
  std::vector<sym::Symbol> varying;
  for (const auto& [s, v] : hi)
    if (lo.at(s) != v && varying.size() < 6) varying.push_back(s);
  std::vector<sym::Binding> out;
  const uint32_t n = 1u << varying.size();
  for (uint32_t mask = 1; mask + 1 < n; ++mask) {
    sym::Binding b = hi;
    for (size_t i = 0; i < varying.size(); ++i)
      if (mask & (1u << i)) b[varying[i]] = lo.at(varying[i]);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

Expected<PlanVersions> plan_versions(const BucketGrid& grid, const VersionRequest& request,
                                     double min_gain) {
  PlanVersions out;
  out.grid = grid;
  const size_t cells = grid.symbols.empty() ? 0 : grid.num_cells();
  out.version_of_cell.assign(cells, -1);
  const Layering whole{request.whole_range->layer_order, request.whole_range->below};
  std::vector<Layering> chosen;  // per version, to share one between cells
  for (size_t c = 0; c < cells; ++c) {
    const sym::Binding lo = grid.low_corner(c), hi = grid.high_corner(c);
    sym::Binding mid;
    for (const auto& [s, v] : hi) mid[s] = (v + lo.at(s)) / 2;
    std::vector<std::vector<int64_t>> judges{request.sizes_at(hi), request.sizes_at(lo),
                                             request.sizes_at(mid)};
    for (const sym::Binding* b : std::initializer_list<const sym::Binding*>{&hi, &lo, &mid}) {
      if (!request.more_judges_at) break;
      std::vector<std::vector<int64_t>> more = request.more_judges_at(*b);
      judges.insert(judges.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
    }
    // The cell's other corners too (one symbol high, another low): sizes that grow with
    // different symbols change their order there, and a layering judged only along the
    // diagonal can be several percent off the bound inside the cell (gpt_tiny_kv: long seq,
    // short past).
    for (const sym::Binding& corner : off_diagonal_corners(lo, hi))
      judges.push_back(request.sizes_at(corner));
    SymbolicPlanRequest r;
    r.sizes = request.sizes;
    r.lives = request.lives;
    r.judges = judges;
    r.segments = request.segments;
    r.ranges = request.ranges;
    // Built at the cell's high corner; where that is not already within 1% of the bound at every
    // judged point, also at its low corner and middle (a layering chosen at the high corner can
    // be far off at the low one). A candidate counts only where it beats the whole-range plan's
    // worst ratio by min_gain, and at every judged point needs no more than the whole-range plan
    // or than greedy by size there plus kGreedySlack: a version may give back a little where the
    // whole-range plan was tight, never more than greedy would cost.
    const double whole_worst = worst_ratio(whole, judges, request.lives);
    std::vector<int64_t> allowance;
    for (const std::vector<int64_t>& sizes : judges) {
      const int64_t greedy =
          plan_greedy_by_size(sizes, request.lives, request.segments).arena_bytes;
      allowance.push_back(
          std::max(layering_arena(whole, sizes),
                   static_cast<int64_t>(static_cast<double>(greedy) * (1 + kGreedySlack))));
    }
    auto acceptable = [&](const LayeringChoice& ch) {
      if (ch.score >= whole_worst * (1 - min_gain)) return false;
      for (size_t j = 0; j < judges.size(); ++j) {
        if (layering_arena(ch.layering, judges[j]) > allowance[j]) return false;
      }
      return true;
    };
    r.references = std::span(judges).first(1);
    std::optional<LayeringChoice> choice;
    LayeringChoice at_high = choose_layering(r);
    const bool good_enough = at_high.score <= kGoodEnough;
    if (acceptable(at_high)) choice = std::move(at_high);
    if (!good_enough) {
      r.references = std::span(judges).subspan(1, 2);
      LayeringChoice other = choose_layering(r);
      other.reference += 1;
      if (acceptable(other) && (!choice || other.score < choice->score)) choice = std::move(other);
    }
    if (!choice) continue;
    for (size_t v = 0; v < chosen.size() && out.version_of_cell[c] < 0; ++v) {
      if (chosen[v].below == choice->layering.below)
        out.version_of_cell[c] = static_cast<int32_t>(v);
    }
    if (out.version_of_cell[c] >= 0) continue;
    chosen.push_back(choice->layering);
    SymbolicPlan plan = symbolic_from_layering(r, std::move(*choice));
    SOD2_ASSIGN_OR_RETURN(PlanProgram program, PlanProgram::compile(plan));
    out.version_of_cell[c] = static_cast<int32_t>(out.versions.size());
    out.versions.push_back({std::move(plan), std::move(program)});
  }
  return out;
}

}  // namespace sod2::opt
