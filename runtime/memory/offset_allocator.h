// Offsets for values the ahead-of-time plan does not hold (the values of If/Loop/Scan bodies,
// whose sizes are only known when a body runs): a best-fit allocator over byte offsets that
// reuses freed ranges, driven by the lifetimes the session derives from each body's node order.
// It hands out offsets, not memory: the session backs them with one buffer sized by the
// high-water mark of earlier runs, so the steady state neither allocates nor grows.
#pragma once

#include <cstddef>
#include <vector>

namespace sod2::rt {

class OffsetAllocator {
 public:
  static constexpr size_t kAlign = 64;

  // Room for this many free ranges without reallocating (one more than the most values that can
  // be live at once keeps allocate() and release() free of heap allocation).
  void reserve_ranges(size_t n) { free_.reserve(n); }

  // A kAlign-aligned offset for `bytes` (rounded up to kAlign; 0 takes kAlign).
  size_t allocate(size_t bytes);
  // Gives back a range from allocate() with the same byte count.
  void release(size_t offset, size_t bytes);
  // Everything free again; the high-water mark stays.
  void reset();

  // One past the highest byte handed out since construction (or clear_high_water()).
  size_t high_water() const { return high_; }
  void clear_high_water() { high_ = end_; }
  // One past the highest byte handed out now.
  size_t end() const { return end_; }
  static size_t rounded(size_t bytes) {
    return bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
  }

 private:
  struct Range {
    size_t offset, size;
  };
  std::vector<Range> free_;  // below end_, sorted by offset, never adjacent (coalesced)
  size_t end_ = 0;
  size_t high_ = 0;
};

}  // namespace sod2::rt
