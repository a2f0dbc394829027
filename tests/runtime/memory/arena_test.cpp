// The arena: big blocks are 2 MiB aligned (huge pages), growth keeps the bytes asked to keep and
// leaves the old block readable until release_retired(), and trim() gives everything back.
#include "runtime/memory/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace sod2::rt {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(Arena, SmallBlocksAreCacheLineAlignedAndBigOnesHugePageAligned) {
  Arena small;
  ASSERT_TRUE(small.reserve(1000).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  Arena big;
  ASSERT_TRUE(big.reserve(3 * kMiB + 100).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % (2 * kMiB), 0u);
  EXPECT_EQ(big.capacity(), 3 * kMiB + 100);
  std::memset(big.data(), 0x5a, big.capacity());  // every byte asked for is writable
  EXPECT_EQ(big.data()[big.capacity() - 1], 0x5a);
}

TEST(Arena, GrowingKeepsTheKeptBytesAndTheOldBlockUntilReleased) {
  Arena a;
  ASSERT_TRUE(a.reserve(4 * kMiB).ok());
  uint8_t* old = a.data();
  for (size_t i = 0; i < 4 * kMiB; ++i) old[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(a.reserve(5 * kMiB, 3 * kMiB).ok());
  EXPECT_NE(a.data(), old);
  EXPECT_GE(a.capacity(), 6 * kMiB);  // grows by at least half again
  for (size_t i = 0; i < 3 * kMiB; i += 4093) ASSERT_EQ(a.data()[i], static_cast<uint8_t>(i * 7));
  EXPECT_EQ(old[4 * kMiB - 1], static_cast<uint8_t>((4 * kMiB - 1) * 7));  // still readable
  a.release_retired();
  ASSERT_TRUE(a.reserve(kMiB).ok());  // fits: nothing moves
  a.trim();
  EXPECT_EQ(a.capacity(), 0u);
  EXPECT_EQ(a.data(), nullptr);
}

}  // namespace
}  // namespace sod2::rt
