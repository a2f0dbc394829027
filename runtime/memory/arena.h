// The arena every planned tensor lives in (DESIGN §6): allocated at the first run, reused while
// bindings fit, grown for a bigger one, given back by trim(). Large arenas are mapped 2 MiB
// aligned and advised as huge pages, because faulting fresh 4 KiB pages dominates a first run on
// small machines; the mapping ends at the last 4 KiB page used, so no huge page reaches past it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::rt {

// Where an arena's blocks come from when not from host pages: a device backend supplies memory
// that the CPU kernels and the device both address (runtime/exec/device_backend.h).
class ArenaMemory {
 public:
  virtual ~ArenaMemory() = default;
  // At least `bytes`, 64-byte aligned; nullptr with `error` set when there is none.
  virtual uint8_t* allocate(size_t bytes, std::string* error) = 0;
  virtual void free(uint8_t* data, size_t bytes) = 0;
};

class Arena {
 public:
  Arena() = default;
  explicit Arena(std::shared_ptr<ArenaMemory> memory) : memory_(std::move(memory)) {}
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }

  // Makes capacity() >= bytes. The first `keep` bytes keep their contents; the old block stays
  // readable until release_retired(), so views handed out before the growth stay valid for the
  // caller to copy from.
  Status reserve(size_t bytes, size_t keep = 0);
  void release_retired();
  void trim();  // gives all memory back

 private:
  struct Block {
    uint8_t* data;
    size_t size;
  };
  uint8_t* allocate(size_t bytes, std::string* error);
  void free_block(Block b);  // b.size: the bytes allocate() was asked for
  static size_t mapped_size(size_t bytes);

  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
  std::vector<Block> retired_;
  std::shared_ptr<ArenaMemory> memory_;  // null: host pages
};

}  // namespace sod2::rt
