// A binding's layout: greedy by size replaces the plan's offsets only where it needs a smaller
// arena, its layouts are sound, and malformed plan values are left alone.
#include "runtime/program/binding_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "runtime/program/memory_stats.h"

namespace sod2::plan {
namespace {

std::vector<PlacedTensor> placed(std::span<const int64_t> values, std::span<const Lifetime> lives) {
  const size_t n = lives.size();
  std::vector<PlacedTensor> out(n);
  for (size_t t = 0; t < n; ++t) out[t] = {values[t], values[n + t], lives[t]};
  return out;
}

// Greedy by size as first written: every placed tensor scanned in offset order for each one
// placed. GreedyLayout searches only the tensors whose lifetimes overlap; it must place exactly
// as this does.
int64_t reference_greedy(std::span<const int64_t> sizes, std::span<const Lifetime> lives,
                         std::vector<int64_t>& offsets) {
  std::vector<int32_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    if (lives[a].first_step != lives[b].first_step)
      return lives[a].first_step < lives[b].first_step;
    return a < b;
  });
  offsets.assign(sizes.size(), 0);
  std::vector<int32_t> placed_by_offset;
  int64_t arena = 0;
  for (int32_t t : order) {
    int64_t prev_end = 0, best_offset = -1, best_gap = INT64_MAX;
    for (int32_t p : placed_by_offset) {
      if (!lives[p].overlaps(lives[t])) continue;
      const int64_t gap = offsets[p] - prev_end;
      if (gap >= sizes[t] && gap < best_gap) {
        best_gap = gap;
        best_offset = prev_end;
      }
      prev_end = std::max(prev_end, offsets[p] + sizes[p]);
    }
    offsets[t] = best_offset >= 0 ? best_offset : prev_end;
    arena = std::max(arena, offsets[t] + sizes[t]);
    auto at = std::upper_bound(placed_by_offset.begin(), placed_by_offset.end(), offsets[t],
                               [&](int64_t off, int32_t p) { return off < offsets[p]; });
    placed_by_offset.insert(at, t);
  }
  return arena;
}

// Short lifetimes (the overlap search) and long ones (dense: the full scan), on one
// GreedyLayout in turn, so that overlaps found for one set of lifetimes are never used for another.
TEST(GreedyLayout, PlacesExactlyAsTheFullScanWhateverTheOverlaps) {
  std::mt19937 rng(11);
  GreedyLayout greedy;
  for (int round = 0; round < 300; ++round) {
    const size_t n = 1 + rng() % 300;
    const int32_t span = round % 3 == 0 ? 400 : 4;  // how long tensors live
    std::vector<Lifetime> lives(n);
    std::vector<int64_t> sizes(n);
    for (size_t t = 0; t < n; ++t) {
      const int32_t first = static_cast<int32_t>(rng() % 200);
      lives[t] = {first, first + static_cast<int32_t>(rng() % static_cast<uint32_t>(span))};
      // Few distinct sizes: ties in size and in offset are common.
      sizes[t] = 64 * static_cast<int64_t>(rng() % 6);
    }
    std::vector<int64_t> expected, got(n);
    const int64_t arena = reference_greedy(sizes, lives, expected);
    ASSERT_EQ(greedy.place(sizes, lives, got), arena) << "round " << round;
    ASSERT_EQ(got, expected) << "round " << round;
    // The same lifetimes again with other sizes (a sweep's next point) reuse the overlaps.
    for (int64_t& size : sizes) size = 32 * static_cast<int64_t>(rng() % 9);
    const int64_t again = reference_greedy(sizes, lives, expected);
    ASSERT_EQ(greedy.place(sizes, lives, got), again) << "round " << round;
    ASSERT_EQ(got, expected) << "round " << round;
  }
}

TEST(BindingLayout, KeepsALayoutAtThePeakOfLiveBytes) {
  // a (steps 0..1) and b (1..2) overlap; c (2..3) may reuse a's bytes. The plan is at the peak.
  const std::vector<Lifetime> lives{{0, 1}, {1, 2}, {2, 3}};
  std::vector<int64_t> values{128, 64, 128, /*offsets*/ 0, 128, 0, /*arena*/ 192};
  const std::vector<int64_t> before = values;
  GreedyLayout greedy;
  std::vector<int64_t> scratch;
  EXPECT_FALSE(use_greedy_if_smaller(values, lives, &greedy, &scratch));
  EXPECT_EQ(values, before);
}

TEST(BindingLayout, ReplacesAWastefulLayout) {
  const std::vector<Lifetime> lives{{0, 1}, {1, 2}, {2, 3}};
  // c sits above b instead of in a's freed bytes: 320 where 192 would do.
  std::vector<int64_t> values{128, 64, 128, 0, 128, 192, 320};
  GreedyLayout greedy;
  std::vector<int64_t> scratch;
  ASSERT_TRUE(use_greedy_if_smaller(values, lives, &greedy, &scratch));
  EXPECT_EQ(values.back(), 192);
  EXPECT_TRUE(verify_layout(placed(values, lives), values.back()).ok());
  // The sizes are the plan's: only offsets and the arena change.
  EXPECT_EQ(values[0], 128);
  EXPECT_EQ(values[1], 64);
  EXPECT_EQ(values[2], 128);
}

TEST(BindingLayout, RandomPlansComeOutSoundAndNoLarger) {
  std::mt19937 rng(7);
  GreedyLayout greedy;
  std::vector<int64_t> scratch;
  for (int round = 0; round < 200; ++round) {
    const size_t n = 1 + rng() % 40;
    std::vector<Lifetime> lives(n);
    std::vector<int64_t> values(2 * n + 1);
    int64_t top = 0;
    for (size_t t = 0; t < n; ++t) {
      const int32_t first = static_cast<int32_t>(rng() % 30);
      lives[t] = {first, first + static_cast<int32_t>(rng() % 8)};
      values[t] = 64 * static_cast<int64_t>(rng() % 16);
      values[n + t] = top;  // no reuse at all: always beatable unless nothing overlaps
      top += values[t];
    }
    values[2 * n] = top;
    const bool used = use_greedy_if_smaller(values, lives, &greedy, &scratch);
    EXPECT_LE(values[2 * n], top);
    EXPECT_EQ(used, values[2 * n] < top);
    Status st = verify_layout(placed(values, lives), values[2 * n]);
    EXPECT_TRUE(st.ok()) << "round " << round << ": " << st.to_string();
  }
}

TEST(BindingLayout, SearchReachesThePeakWhereGreedyBySizeDoesNot) {
  // A two-layer GRU at batch 3, 5 steps: greedy by size leaves a 3 KiB state above the peak
  // because a long-lived buffer takes the bottom first; placing the right tensor first fixes it.
  const std::vector<int64_t> sizes{64,    64,   64,    64,   6144,  4800,  3072, 15360, 3072,
                                   15360, 3072, 15360, 3072, 15360, 15360, 1920, 1920};
  const std::vector<Lifetime> lives{{0, 2},   {2, 5},   {5, 7},   {7, 8},   {8, 20},  {9, 14},
                                    {13, 14}, {14, 16}, {14, 14}, {16, 21}, {20, 21}, {21, 23},
                                    {21, 21}, {23, 24}, {24, 25}, {25, 26}, {26, 26}};
  GreedyLayout greedy;
  std::vector<int64_t> offsets(sizes.size());
  const int64_t peak = peak_live_bytes(sizes, lives);
  EXPECT_EQ(peak, 36864);
  EXPECT_EQ(greedy.place(sizes, lives, offsets), 39936);
  const int64_t best = greedy.place_best(sizes, lives, offsets, peak);
  EXPECT_EQ(best, peak);
  std::vector<PlacedTensor> placed(sizes.size());
  for (size_t t = 0; t < sizes.size(); ++t) placed[t] = {sizes[t], offsets[t], lives[t]};
  EXPECT_TRUE(verify_layout(placed, best).ok());
}

TEST(BindingLayout, LeavesMalformedValuesAlone) {
  const std::vector<Lifetime> lives{{0, 1}, {1, 2}};
  GreedyLayout greedy;
  std::vector<int64_t> scratch;
  std::vector<int64_t> short_values{64, 64, 0};
  EXPECT_FALSE(use_greedy_if_smaller(short_values, lives, &greedy, &scratch));
  std::vector<int64_t> negative{-64, 64, 0, 0, 1000};
  EXPECT_FALSE(use_greedy_if_smaller(negative, lives, &greedy, &scratch));
  std::vector<int64_t> huge{INT64_MAX / 2, INT64_MAX / 2, 0, 0, INT64_MAX};
  EXPECT_FALSE(use_greedy_if_smaller(huge, lives, &greedy, &scratch));
  const std::vector<Lifetime> backwards{{3, 1}, {1, 2}};
  std::vector<int64_t> values{64, 64, 0, 64, 1000};
  EXPECT_FALSE(use_greedy_if_smaller(values, backwards, &greedy, &scratch));
}

TEST(BindingLayout, NamesVersions) {
  EXPECT_EQ(version_text(-1, 3), "whole-range plan");
  EXPECT_EQ(version_text(2, 3), "version 2 of 3");
  EXPECT_EQ(version_text(2), "version 2");
  EXPECT_EQ(version_text(kBindingGreedyVersion, 3), "greedy by size at this binding");
}

}  // namespace
}  // namespace sod2::plan
