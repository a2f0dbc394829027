// Size-bucketed plan versions: the grid's buckets and cells, and on random instances (every
// tensor's size its own symbol, so layerings chosen at one size can be poor at another) that a
// version is only kept where it beats the whole-range plan inside its cell, and that every
// version stays valid at bindings far outside its cell.
#include <gtest/gtest.h>

#include "core/opt/plan_types.h"
#include "core/opt/plan_verifier.h"
#include "core/opt/plan_versions.h"
#include "test_rng.h"

namespace sod2::opt {
namespace {

sym::RangeMap ranges_of(
    std::initializer_list<std::tuple<const char*, int64_t, int64_t, int64_t>> rs) {
  sym::RangeMap m;
  for (const auto& [name, lo, hi, mult] : rs)
    EXPECT_TRUE(m.set(sym::symbol(name), {lo, hi, mult}).ok());
  return m;
}

TEST(BucketGrid, GeometricBucketsOnTheMultipleWidestRangeFirst) {
  const sym::Symbol seq = sym::symbol("seq"), batch = sym::symbol("batch"), c = sym::symbol("c");
  const sym::RangeMap ranges = ranges_of({{"seq", 1, 512, 1}, {"batch", 8, 64, 8}, {"c", 3, 6, 1}});
  const std::vector<sym::Symbol> symbols{batch, c, seq};
  const BucketGrid grid = make_bucket_grid(ranges, symbols);
  // seq spans 512x: three buckets at 512^(1/3) = 8 and 512^(2/3) = 64; batch spans 8x: three
  // at 16 and 32 (multiples of 8); c spans 2x: not bucketed.
  ASSERT_EQ(grid.symbols, (std::vector<sym::Symbol>{seq, batch}));
  EXPECT_EQ(grid.uppers[0], (std::vector<int64_t>{8, 64, 512}));
  EXPECT_EQ(grid.uppers[1], (std::vector<int64_t>{16, 32, 64}));
  EXPECT_EQ(grid.num_cells(), 9u);
  EXPECT_EQ(grid.cell_of({{seq, 1}, {batch, 8}}), 0u);
  EXPECT_EQ(grid.cell_of({{seq, 9}, {batch, 16}}), 3u);
  EXPECT_EQ(grid.cell_of({{seq, 512}, {batch, 40}}), 8u);
  EXPECT_EQ(grid.cell_of({{seq, 9000}}), 8u);  // past the end, and batch unbound: the last
  EXPECT_EQ(grid.cell_text(4), "seq=9..64, batch=24..32");
  EXPECT_EQ(grid.low_corner(4), (sym::Binding{{seq, 9}, {batch, 24}}));
  EXPECT_EQ(grid.high_corner(4), (sym::Binding{{seq, 64}, {batch, 32}}));
  // A cell budget drops the narrower symbol.
  EXPECT_EQ(make_bucket_grid(ranges, symbols, 3, 5).symbols, (std::vector<sym::Symbol>{seq}));
}

using testing::Rng;

TEST(PlanVersions, KeptOnlyWhereTheyBeatTheWholeRangePlanAndValidEverywhere) {
  Rng rng{11};
  int versions_seen = 0;
  for (int round = 0; round < 60; ++round) {
    const int n = static_cast<int>(rng.in(3, 24));
    sym::RangeMap ranges;
    std::vector<sym::Symbol> symbols;
    std::vector<sym::SymExpr> sizes;
    std::vector<Lifetime> lives;
    for (int i = 0; i < n; ++i) {
      symbols.push_back(sym::symbol("s" + std::to_string(i)));
      ASSERT_TRUE(ranges.set(symbols.back(), {1, 256, 1}).ok());
      sizes.push_back(64 * sym::SymExpr(symbols.back()));
      const auto first = static_cast<int32_t>(rng.in(0, 12));
      lives.push_back({first, first + static_cast<int32_t>(rng.in(0, 6))});
    }
    auto sizes_at = [&](const sym::Binding& b) {
      std::vector<int64_t> out;
      for (const sym::Symbol& s : symbols) {
        auto it = b.find(s);
        out.push_back(64 * (it != b.end() ? it->second : 256));
      }
      return out;
    };
    const std::vector<std::vector<int64_t>> upper{sizes_at({})};
    SymbolicPlanRequest whole_request;
    whole_request.sizes = sizes;
    whole_request.lives = lives;
    whole_request.references = upper;
    whole_request.ranges = &ranges;
    const SymbolicPlan whole = plan_symbolic(whole_request);

    const BucketGrid grid = make_bucket_grid(ranges, symbols);
    ASSERT_EQ(grid.num_cells(), 27u);
    VersionRequest vr;
    vr.sizes = sizes;
    vr.lives = lives;
    vr.ranges = &ranges;
    vr.whole_range = &whole;
    vr.sizes_at = sizes_at;
    auto versions = plan_versions(grid, vr);
    ASSERT_TRUE(versions.ok()) << versions.status().to_string();
    ASSERT_EQ(versions->version_of_cell.size(), 27u);
    versions_seen += static_cast<int>(versions->versions.size());

    for (size_t cell = 0; cell < 27; ++cell) {
      const int32_t v = versions->version_of_cell[cell];
      if (v < 0) continue;
      // Its own cell's high corner: the version needs at most the whole-range plan there, or
      // greedy by size + 1% where the whole-range plan was tighter than that.
      const sym::Binding hi = grid.high_corner(cell);
      sym::Binding full;
      for (const sym::Symbol& s : symbols) full[s] = hi.count(s) ? hi.at(s) : 256;
      const SymbolicPlan& p = versions->versions[static_cast<size_t>(v)].symbolic;
      const int64_t greedy = plan_greedy_by_size(sizes_at(full), lives).arena_bytes;
      EXPECT_LE(*sym::evaluate(p.arena_bytes, full),
                std::max(*sym::evaluate(whole.arena_bytes, full),
                         static_cast<int64_t>(static_cast<double>(greedy) * 1.01)))
          << "round " << round << " cell " << cell;
    }
    for (const PlanVersion& version : versions->versions) {
      PlanInstance inst = version.program.make_instance();
      for (int b = 0; b < 10; ++b) {
        sym::Binding binding;
        for (const sym::Symbol& s : symbols) binding[s] = rng.in(0, 1000);
        auto inputs = version.program.inputs_from(binding);
        ASSERT_TRUE(inputs.ok());
        ASSERT_TRUE(version.program.instantiate(*inputs, &inst).ok());
        std::vector<PlacedTensor> placed;
        for (size_t t = 0; t < sizes.size(); ++t)
          placed.push_back({inst.size(t), inst.offset(t), lives[t]});
        Status st = verify_layout(placed, inst.arena_bytes());
        ASSERT_TRUE(st.ok()) << "round " << round << ": " << st.to_string();
      }
    }
  }
  // Independent sizes make the upper-bound layering a poor fit somewhere.
  EXPECT_GT(versions_seen, 0);
}

TEST(PlanVersions, NoGridNoVersions) {
  const SymbolicPlan whole;
  VersionRequest vr;
  vr.whole_range = &whole;
  auto versions = plan_versions(BucketGrid{}, vr);
  ASSERT_TRUE(versions.ok());
  EXPECT_TRUE(versions->version_of_cell.empty());
  EXPECT_TRUE(versions->versions.empty());
}

}  // namespace
}  // namespace sod2::opt
