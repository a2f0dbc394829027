#include "runtime/memory/offset_allocator.h"

#include <algorithm>

namespace sod2::rt {

size_t OffsetAllocator::allocate(size_t bytes) {
  const size_t need = rounded(bytes);
  // Best fit: the smallest free range that holds it, so big ranges stay whole for big values.
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i) {
    if (free_[i].size >= need && (best == free_.size() || free_[i].size < free_[best].size))
      best = i;
  }
  size_t offset;
  if (best < free_.size()) {
    offset = free_[best].offset;
    if (free_[best].size == need) {
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
    } else {
      free_[best].offset += need;
      free_[best].size -= need;
    }
  } else if (!free_.empty() && free_.back().offset + free_.back().size == end_) {
    // The top free range is too small: extend it rather than leave it as a hole.
    offset = free_.back().offset;
    free_.pop_back();
    end_ = offset + need;
  } else {
    offset = end_;
    end_ += need;
  }
  high_ = std::max(high_, end_);
  return offset;
}

void OffsetAllocator::release(size_t offset, size_t bytes) {
  size_t size = rounded(bytes);
  auto it = std::lower_bound(free_.begin(), free_.end(), offset,
                             [](const Range& r, size_t o) { return r.offset < o; });
  // Coalesce with the neighbours on either side.
  if (it != free_.end() && offset + size == it->offset) {
    size += it->size;
    it = free_.erase(it);
  }
  if (it != free_.begin() && std::prev(it)->offset + std::prev(it)->size == offset) {
    auto prev = std::prev(it);
    offset = prev->offset;
    size += prev->size;
    it = free_.erase(prev);
  }
  if (offset + size == end_) {
    end_ = offset;  // the top shrinks instead of keeping a free range there
    return;
  }
  free_.insert(it, {offset, size});
}

void OffsetAllocator::reset() {
  free_.clear();
  end_ = 0;
}

}  // namespace sod2::rt
