// The greedy-by-size planner and the yardsticks, on hand-made sizes and lifetimes with exact
// offsets (XNNPACK-style), plus the yardsticks' definitions.
#include <gtest/gtest.h>

#include "core/opt/plan_types.h"
#include "core/opt/plan_verifier.h"

namespace sod2::opt {
namespace {

std::vector<PlacedTensor> placed(const std::vector<int64_t>& sizes, const GreedyPlan& plan,
                                 const std::vector<Lifetime>& lives) {
  std::vector<PlacedTensor> out;
  for (size_t i = 0; i < sizes.size(); ++i) out.push_back({sizes[i], plan.offsets[i], lives[i]});
  return out;
}

TEST(GreedyBySize, EmptyPlan) {
  GreedyPlan p = plan_greedy_by_size({}, {});
  EXPECT_TRUE(p.offsets.empty());
  EXPECT_EQ(p.arena_bytes, 0);
}

TEST(GreedyBySize, ChainReusesTheBytesOfDeadTensors) {
  // a -> b -> c: a and c never live together, so c takes a's place.
  const std::vector<int64_t> sizes{64, 128, 64};
  const std::vector<Lifetime> lives{{0, 1}, {1, 2}, {2, 2}};
  GreedyPlan p = plan_greedy_by_size(sizes, lives);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{128, 0, 128}));
  EXPECT_EQ(p.arena_bytes, 192);
  EXPECT_TRUE(verify_layout(placed(sizes, p, lives), p.arena_bytes).ok());
}

TEST(GreedyBySize, MixedLifetimesGoldenOffsets) {
  const std::vector<int64_t> sizes{512, 448, 384, 320, 64, 64, 64};
  const std::vector<Lifetime> lives{{0, 1}, {1, 2}, {0, 0}, {1, 1}, {2, 2}, {0, 0}, {1, 1}};
  GreedyPlan p = plan_greedy_by_size(sizes, lives);
  // Placement order 0, 1, 2, 3, 5, 6, 4 (size, then first step). 0 at 0; 1 overlaps 0: 512;
  // 2 overlaps 0 only: 512; 3 overlaps 0 and 1: 960; 5 (step 0) overlaps 0 and 2: 896;
  // 6 (step 1) overlaps 0, 1, 3: 1280; 4 (step 2) overlaps 1 only: the 512-byte gap below it.
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 512, 512, 960, 0, 896, 1280}));
  EXPECT_EQ(p.arena_bytes, 1344);
  EXPECT_TRUE(verify_layout(placed(sizes, p, lives), p.arena_bytes).ok());
}

TEST(GreedyBySize, BestFitPrefersTheTighterGap) {
  // Step 0 spacers X and Z leave two holes among the tensors live at step 1: [320, 576) of 256
  // bytes and [768, 896) of 128. D (64 bytes, step 1) takes the tighter one; first fit would
  // have taken 320.
  //                               A    X    B    Z    C    D
  const std::vector<int64_t> sizes{320, 256, 192, 128, 128, 64};
  const std::vector<Lifetime> lives{{0, 1}, {0, 0}, {0, 1}, {0, 0}, {0, 1}, {1, 1}};
  GreedyPlan p = plan_greedy_by_size(sizes, lives);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 320, 576, 768, 896, 768}));
  EXPECT_EQ(p.arena_bytes, 1024);
  EXPECT_TRUE(verify_layout(placed(sizes, p, lives), p.arena_bytes).ok());
}

TEST(GreedyBySize, SegmentsPutLaterTensorsAboveEarlierOnes) {
  // Without segments the big late tensor goes first, at 0; with the small one in an earlier
  // segment, the big one must sit on top of it.
  const std::vector<int64_t> sizes{64, 512};
  const std::vector<Lifetime> lives{{0, 1}, {1, 1}};
  EXPECT_EQ(plan_greedy_by_size(sizes, lives).offsets, (std::vector<int64_t>{512, 0}));
  GreedyPlan p = plan_greedy_by_size(sizes, lives, std::vector<int32_t>{0, 1});
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 64}));
  EXPECT_EQ(p.arena_bytes, 576);
}

TEST(MemoryStats, LowerBoundIsThePeakOfLiveBytes) {
  const std::vector<int64_t> sizes{64, 128, 64, 256};
  const std::vector<Lifetime> lives{{0, 1}, {1, 2}, {2, 3}, {3, 3}};
  // Live: step0 64, step1 192, step2 192, step3 320.
  EXPECT_EQ(peak_live_bytes(sizes, lives), 320);
  EXPECT_EQ(total_bytes(sizes), 512);
  EXPECT_EQ(peak_live_bytes({}, {}), 0);
  const std::vector<int64_t> huge{INT64_MAX - 10, INT64_MAX - 10};
  const std::vector<Lifetime> same{{0, 0}, {0, 0}};
  EXPECT_EQ(peak_live_bytes(huge, same), INT64_MAX);
  EXPECT_EQ(total_bytes(huge), INT64_MAX);
}

TEST(GreedyBySize, NeverBelowTheLowerBoundAndAlwaysVerified) {
  // Random lifetimes and sizes: greedy is a valid layout and at least the lower bound.
  uint64_t state = 12345;
  auto next = [&](uint64_t m) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % m;
  };
  for (int round = 0; round < 200; ++round) {
    const size_t n = 1 + next(40);
    std::vector<int64_t> sizes;
    std::vector<Lifetime> lives;
    for (size_t i = 0; i < n; ++i) {
      sizes.push_back(64 * static_cast<int64_t>(next(20)));
      const auto a = static_cast<int32_t>(next(30));
      lives.push_back({a, a + static_cast<int32_t>(next(10))});
    }
    GreedyPlan p = plan_greedy_by_size(sizes, lives);
    ASSERT_TRUE(verify_layout(placed(sizes, p, lives), p.arena_bytes).ok()) << "round " << round;
    EXPECT_GE(p.arena_bytes, peak_live_bytes(sizes, lives));
  }
}

}  // namespace
}  // namespace sod2::opt
