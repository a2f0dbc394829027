#include "runtime/package/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sod2::rt {

Expected<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    const std::string why = std::strerror(e);
    if (e == ENOENT) return not_found("no file " + path);
    return io_error("cannot open " + path + ": " + why);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return io_error("cannot stat " + path + ": " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument(path + " is not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    // MAP_PRIVATE + PROT_READ: a stray write by a kernel faults instead of changing the file.
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return io_error("cannot map " + path + ": " + why);
    }
    data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file's pages
  return std::shared_ptr<const MappedFile>(new MappedFile(data, size));
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace sod2::rt
