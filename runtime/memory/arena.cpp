#include "runtime/memory/arena.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace sod2::rt {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

Arena::~Arena() { trim(); }

uint8_t* Arena::allocate(size_t bytes) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = nullptr;
  if (posix_memalign(&p, align, rounded) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return static_cast<uint8_t*>(p);
}

void Arena::free_block(Block b) { std::free(b.data); }

Status Arena::reserve(size_t bytes, size_t keep) {
  if (bytes <= capacity_) return Status::ok_status();
  // Grow by at least half again, so a sequence of slightly bigger bindings does not reallocate
  // every time.
  const size_t target = std::max(bytes, capacity_ + capacity_ / 2);
  uint8_t* fresh = allocate(target);
  if (!fresh) {
    return io_error("cannot allocate an arena of " + std::to_string(target) +
                    " bytes (out of memory)");
  }
  if (data_) {
    if (keep > 0) std::memcpy(fresh, data_, std::min(keep, capacity_));
    retired_.push_back({data_, capacity_});
  }
  data_ = fresh;
  capacity_ = target;
  return Status::ok_status();
}

void Arena::release_retired() {
  for (Block b : retired_) free_block(b);
  retired_.clear();
}

void Arena::trim() {
  release_retired();
  if (data_) free_block({data_, capacity_});
  data_ = nullptr;
  capacity_ = 0;
}

}  // namespace sod2::rt
