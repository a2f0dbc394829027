#include "runtime/memory/arena.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sod2::rt {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

Arena::~Arena() { trim(); }

uint8_t* Arena::allocate(size_t bytes, std::string* error) {
  if (memory_) return memory_->allocate(bytes, error);
  if (bytes < kHugePage) {
    void* p = nullptr;
    const size_t rounded = (bytes + 63) / 64 * 64;
    return posix_memalign(&p, 64, rounded) == 0 ? static_cast<uint8_t*>(p) : nullptr;
  }
  // A mapping that starts on a 2 MiB boundary and ends right after the last page used: huge
  // pages then back the whole 2 MiB stretches, while the partial stretch at the end stays in
  // 4 KiB pages. (With a mapping that runs on past the end, transparent huge pages would back
  // that stretch too: up to 2 MiB resident that no tensor uses.)
  const size_t used = mapped_size(bytes);
  const size_t span = used + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + span, used_end = aligned + used;
  if (end > used_end) munmap(reinterpret_cast<void*>(used_end), end - used_end);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(aligned), used, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<uint8_t*>(aligned);
}

size_t Arena::mapped_size(size_t bytes) {
  constexpr size_t kPage = 4096;
  return (bytes + kPage - 1) / kPage * kPage;
}

void Arena::free_block(Block b) {
  if (memory_) {
    memory_->free(b.data, b.size);
  } else if (b.size < kHugePage) {
    std::free(b.data);
  } else {
    munmap(b.data, mapped_size(b.size));
  }
}

Status Arena::reserve(size_t bytes, size_t keep) {
  if (bytes <= capacity_) return Status::ok_status();
  // Grow by at least half again, so a sequence of slightly bigger bindings does not reallocate
  // every time.
  const size_t target = std::max(bytes, capacity_ + capacity_ / 2);
  std::string error;
  uint8_t* fresh = allocate(target, &error);
  if (!fresh) {
    return io_error("cannot allocate an arena of " + std::to_string(target) + " bytes (" +
                    (error.empty() ? std::string("out of memory") : error) + ")");
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
