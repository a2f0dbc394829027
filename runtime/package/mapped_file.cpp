#include "runtime/package/mapped_file.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "core/status/input_file.h"

namespace sod2::rt {

Expected<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  // The package's header bounds its size; the file only has to be a regular one (a FIFO must
  // neither block the open nor be mapped).
  SOD2_ASSIGN_OR_RETURN(const InputFile file, InputFile::open(path, kNoInputSizeLimit));
  const size_t size = static_cast<size_t>(file.size());
  const uint8_t* data = nullptr;
  if (size > 0) {
    // MAP_PRIVATE + PROT_READ: a stray write by a kernel faults instead of changing the file.
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
    if (p == MAP_FAILED) return io_error("cannot map " + path + ": " + std::strerror(errno));
    data = static_cast<const uint8_t*>(p);
  }
  // Closing the descriptor (with `file`) keeps the mapping and the file's pages.
  return std::shared_ptr<const MappedFile>(new MappedFile(data, size));
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace sod2::rt
