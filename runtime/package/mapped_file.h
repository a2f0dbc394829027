// A file mapped read-only into memory: a package's weights are used where they lie, so loading
// costs page faults on first use instead of a copy, and pages are shared between processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/status/status.h"

namespace sod2::rt {

class MappedFile {
 public:
  // Errors: the file cannot be opened or mapped (with the OS's reason), or it is not a regular
  // file (a directory, FIFO, device or socket: opened without blocking, and refused).
  static Expected<std::shared_ptr<const MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Page-aligned (so 64-byte aligned); empty for an empty file.
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

}  // namespace sod2::rt
