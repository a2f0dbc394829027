// Files named on a command line or inside a model — test-data tensors, input tensor files, ranges,
// inputs and family files, models, external weight data — are opened one way, here:
//
// * with O_NONBLOCK, so a FIFO (or a terminal) named as a file cannot block the open or the read;
// * and then accepted only if fstat on the opened descriptor says it is a regular file (not a
//   FIFO, device, socket or directory) of at most a stated size, so /dev/zero or a sparse file
//   cannot make a reader allocate until memory runs out. What is checked is what is read:
//   the checks are on the descriptor, never on a path looked up a second time.
//
// Header-only, so core, the runtime and the apps share it without a new library.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2 {

// Protobuf refuses messages of 2 GiB and more, so no tensor or model file parsed whole can be
// larger; the default cap of every input file.
inline constexpr uint64_t kMaxInputFileBytes = (uint64_t{1} << 31) - 1;
// JSON side files (ranges, inputs.json, family files) are small; their parsers take several times
// the text's size in memory, so the cap is far lower.
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{64} << 20;
// For a caller that maps or copies a file whose size is bounded by its own format (a package).
inline constexpr uint64_t kNoInputSizeLimit = std::numeric_limits<uint64_t>::max();

class InputFile {
 public:
  // Errors: not_found when it does not exist; invalid_argument when it is a directory, FIFO,
  // device or socket; resource_exhausted when it is larger than `max_bytes`; io_error with the
  // OS's reason otherwise. Messages start with the path.
  static Expected<InputFile> open(const std::string& path,
                                  uint64_t max_bytes = kMaxInputFileBytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return open_error(path, errno);
    return adopt(fd, path, max_bytes);
  }

  // `relative` inside the folder `dir`, resolved one component at a time with O_NOFOLLOW: a
  // symbolic link anywhere in `relative` is refused, whether it points inside the folder or out
  // of it (`dir` itself may be reached through links: the caller chose it). '..' and absolute
  // paths are refused too. Errors as open().
  static Expected<InputFile> open_beneath(const std::string& dir, const std::string& relative,
                                          uint64_t max_bytes = kMaxInputFileBytes) {
    const std::string shown = (dir.empty() ? std::string(".") : dir) + "/" + relative;
    if (relative.empty() || relative.front() == '/') {
      return invalid_argument(shown + ": '" + relative + "' is not a path inside the folder");
    }
    int at = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (at < 0) return open_error(dir.empty() ? "." : dir, errno);
    size_t start = 0;
    while (true) {
      const size_t slash = relative.find('/', start);
      const bool last = slash == std::string::npos;
      const std::string part = relative.substr(start, last ? std::string::npos : slash - start);
      const std::string so_far = relative.substr(0, last ? std::string::npos : slash);
      start = slash + 1;
      if (part == "..") {
        ::close(at);
        return invalid_argument(shown + ": '" + relative + "' leaves the folder ('..')");
      }
      if ((part.empty() || part == ".") && !last) continue;
      const int flags = last ? O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY
                             : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
      const int next = ::openat(at, part.empty() ? "." : part.c_str(), flags);
      const int err = errno;
      if (next < 0) {
        // O_NOFOLLOW reports a link as ELOOP, or as ENOTDIR with O_DIRECTORY: look at what the
        // component is to say which.
        struct stat st {};
        const bool link =
            ::fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        ::close(at);
        if (link) {
          return invalid_argument(shown + ": '" + so_far +
                                  "' is a symbolic link; files are read from inside the folder "
                                  "only, without following links");
        }
        return open_error(last ? shown : (dir.empty() ? "." : dir) + "/" + so_far, err);
      }
      ::close(at);
      at = next;
      if (last) return adopt(at, shown, max_bytes);
    }
  }

  InputFile(InputFile&& o) noexcept : fd_(o.fd_), size_(o.size_), path_(std::move(o.path_)) {
    o.fd_ = -1;
  }
  InputFile& operator=(InputFile&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = o.fd_;
      size_ = o.size_;
      path_ = std::move(o.path_);
      o.fd_ = -1;
    }
    return *this;
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // as fstat said when opened
  int fd() const { return fd_; }           // for mmap; stays owned by this object

  // Exactly out.size() bytes at `offset`; the range must lie within size().
  Status read_at(uint64_t offset, std::span<uint8_t> out) const {
    if (offset > size_ || out.size() > size_ - offset) {
      return invalid_argument(path_ + ": bytes [" + std::to_string(offset) + ", +" +
                              std::to_string(out.size()) + ") lie outside the file (" +
                              std::to_string(size_) + " bytes)");
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t r =
          ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return io_error(path_ + ": cannot read: " + std::strerror(errno));
      if (r == 0) return io_error(path_ + ": the file shrank while it was read");
      done += static_cast<size_t>(r);
    }
    return Status::ok_status();
  }

  // The whole file, as large as fstat said (never more: a file that grows is read to that size).
  template <typename Container = std::vector<uint8_t>>
  Expected<Container> read_all() const {
    Container out;
    try {
      out.resize(static_cast<size_t>(size_));
    } catch (const std::bad_alloc&) {
      return resource_exhausted(path_ + ": no memory for its " + std::to_string(size_) + " bytes");
    }
    SOD2_RETURN_IF_ERROR(
        read_at(0, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size())));
    return out;
  }

 private:
  InputFile(int fd, uint64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}

  static Status open_error(const std::string& path, int err) {
    if (err == ENOENT) return not_found(path + ": no such file");
    return io_error(path + ": cannot open: " + std::strerror(err));
  }

  static const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a plain file";
  }

  // Takes ownership of `fd` and checks what it is.
  static Expected<InputFile> adopt(int fd, const std::string& path, uint64_t max_bytes) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return io_error(path + ": cannot stat: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return invalid_argument(path + ": is " + kind_of(st.st_mode) + ", not a regular file");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > max_bytes) {
      ::close(fd);
      return resource_exhausted(path + ": is " + std::to_string(size) + " bytes, more than the " +
                                std::to_string(max_bytes) + " bytes this file may have");
    }
    return InputFile(fd, size, path);
  }

  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

// The whole of a regular file of at most `max_bytes`.
inline Expected<std::vector<uint8_t>> read_input_file(const std::string& path,
                                                      uint64_t max_bytes = kMaxInputFileBytes) {
  SOD2_ASSIGN_OR_RETURN(const InputFile file, InputFile::open(path, max_bytes));
  return file.read_all();
}

// The same as text (JSON, say), capped at kMaxTextFileBytes unless told otherwise.
inline Expected<std::string> read_input_text(const std::string& path,
                                             uint64_t max_bytes = kMaxTextFileBytes) {
  SOD2_ASSIGN_OR_RETURN(const InputFile file, InputFile::open(path, max_bytes));
  return file.read_all<std::string>();
}

}  // namespace sod2
