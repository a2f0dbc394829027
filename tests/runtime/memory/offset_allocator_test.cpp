// The value buffer's allocator: ranges are aligned and disjoint while held, freed ranges are
// reused (best fit, coalesced), and the high-water mark is what a buffer must hold.
#include "runtime/memory/offset_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace sod2::rt {
namespace {

TEST(OffsetAllocator, HandsOutAlignedRangesAndReusesFreedOnes) {
  OffsetAllocator a;
  a.reserve_ranges(8);
  const size_t x = a.allocate(100), y = a.allocate(1), z = a.allocate(0);
  EXPECT_EQ(x, 0u);
  EXPECT_EQ(y, 128u);  // 100 rounds up to 128
  EXPECT_EQ(z, 192u);  // even an empty value takes one aligned slot
  a.release(x, 100);
  EXPECT_EQ(a.allocate(64), 0u);  // the freed range, not the top
  EXPECT_EQ(a.high_water(), 256u);
}

TEST(OffsetAllocator, PicksTheBestFitAndCoalescesNeighbours) {
  OffsetAllocator a;
  a.reserve_ranges(8);
  const size_t big = a.allocate(1024), sep1 = a.allocate(64), small = a.allocate(128),
               sep2 = a.allocate(64);
  a.release(big, 1024);
  a.release(small, 128);
  EXPECT_EQ(a.allocate(100), small);  // the 128-byte hole fits best
  a.release(small, 100);
  a.release(sep1, 64);  // joins big and small into one range of 1024 + 64 + 128
  EXPECT_EQ(a.allocate(1200), big);
  (void)sep2;
}

TEST(OffsetAllocator, ReleasingTheTopShrinksItAndResetKeepsTheHighWater) {
  OffsetAllocator a;
  const size_t x = a.allocate(64), y = a.allocate(640);
  a.release(y, 640);
  EXPECT_EQ(a.end(), 64u);
  EXPECT_EQ(a.high_water(), 704u);
  a.release(x, 64);
  EXPECT_EQ(a.end(), 0u);
  a.reset();
  EXPECT_EQ(a.allocate(1), 0u);
  EXPECT_EQ(a.high_water(), 704u);
}

// Random allocate/release sequences: held ranges never overlap, and the high-water mark bounds
// every range handed out.
TEST(OffsetAllocator, HeldRangesNeverOverlap) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    OffsetAllocator a;
    a.reserve_ranges(64);
    struct Held {
      size_t offset, bytes;
    };
    std::vector<Held> held;
    for (int step = 0; step < 400; ++step) {
      if (!held.empty() && (held.size() >= 60 || rng() % 2)) {
        const size_t i = rng() % held.size();
        a.release(held[i].offset, held[i].bytes);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      const size_t bytes = rng() % 5000;
      const size_t off = a.allocate(bytes);
      ASSERT_EQ(off % OffsetAllocator::kAlign, 0u);
      ASSERT_LE(off + OffsetAllocator::rounded(bytes), a.high_water());
      for (const Held& h : held) {
        const bool apart = off + OffsetAllocator::rounded(bytes) <= h.offset ||
                           h.offset + OffsetAllocator::rounded(h.bytes) <= off;
        ASSERT_TRUE(apart) << "round " << round << " step " << step;
      }
      held.push_back({off, bytes});
    }
  }
}

}  // namespace
}  // namespace sod2::rt
