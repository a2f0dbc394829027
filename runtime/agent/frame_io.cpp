#include "runtime/agent/frame_io.h"

#include <google/protobuf/message_lite.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace sod2::agent {

Expected<bool> FrameReader::read_exact(uint8_t* buf, size_t n, bool eof_ok) {
  size_t got = 0;
  while (got < n) {
    SOD2_ASSIGN_OR_RETURN(const size_t k, read_(buf + got, n - got));
    if (k == 0) {
      if (got == 0 && eof_ok) return false;
      return io_error("the stream ended inside a message (" + std::to_string(got) + " of " +
                      std::to_string(n) + " bytes)");
    }
    got += k;
  }
  return true;
}

Status FrameReader::read_preamble() {
  uint8_t buf[kPreamble.size()];
  size_t got = 0;
  while (got < sizeof buf) {
    SOD2_ASSIGN_OR_RETURN(const size_t k, read_(buf + got, sizeof buf - got));
    if (k == 0) break;
    got += k;
  }
  if (got == sizeof buf && std::memcmp(buf, kPreamble.data(), sizeof buf) == 0)
    return Status::ok_status();
  // Not the agent talking: keep reading a little of what it says, to show it.
  std::string text(reinterpret_cast<const char*>(buf), got);
  while (text.size() < 400) {
    uint8_t more[256];
    Expected<size_t> k = read_(more, sizeof more);
    if (!k.ok() || *k == 0) break;
    text.append(reinterpret_cast<const char*>(more), *k);
  }
  std::string shown;
  for (char c : text) shown += (c == '\n' || c == '\t' || (c >= 32 && c < 127)) ? c : '?';
  while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.pop_back();
  if (shown.empty())
    return io_error("the agent closed the stream before saying hello (it exited or was killed)");
  return io_error("the other end is not a sod2 agent (or not this protocol); it said: \"" + shown +
                  "\"");
}

Expected<std::optional<uint32_t>> FrameReader::read_header() {
  uint8_t header[4];
  SOD2_ASSIGN_OR_RETURN(const bool more, read_exact(header, 4, true));
  if (!more) return std::optional<uint32_t>();
  const uint32_t n = static_cast<uint32_t>(header[0]) | static_cast<uint32_t>(header[1]) << 8 |
                     static_cast<uint32_t>(header[2]) << 16 |
                     static_cast<uint32_t>(header[3]) << 24;
  if (n > max_frame_) {
    return parse_error("a message of " + std::to_string(n) + " bytes (at most " +
                       std::to_string(max_frame_) + "): the stream is corrupt");
  }
  return std::optional<uint32_t>(n);
}

Status FrameReader::skip(uint64_t n, uint64_t of) {
  uint8_t sink[16 << 10];
  for (uint64_t left = n; left > 0;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, sizeof sink));
    SOD2_ASSIGN_OR_RETURN(const size_t k, read_(sink, want));
    if (k == 0) {
      return io_error("the stream ended inside a message (" + std::to_string(of - left) + " of " +
                      std::to_string(of) + " bytes)");
    }
    left -= k;
  }
  return Status::ok_status();
}

Status FrameReader::read_payload(uint32_t n, std::string* out) {
  // Grown in steps as bytes arrive: a 4-byte header claiming 256 MiB costs nothing until the
  // bytes are really sent.
  constexpr size_t kStep = 1u << 20;
  out->clear();
  size_t got = 0;
  try {
    while (got < n) {
      const size_t want = std::min<size_t>(kStep, n - got);
      out->resize(got + want);
      auto* p = reinterpret_cast<uint8_t*>(out->data()) + got;
      for (size_t in = 0; in < want;) {
        SOD2_ASSIGN_OR_RETURN(const size_t k, read_(p + in, want - in));
        if (k == 0) {
          return io_error("the stream ended inside a message (" + std::to_string(got + in) +
                          " of " + std::to_string(n) + " bytes)");
        }
        in += k;
      }
      got += want;
    }
  } catch (const std::bad_alloc&) {
    // Skipping the rest keeps the stream in step, so the other side gets an answer in place of
    // this message and the conversation goes on.
    std::string().swap(*out);
    SOD2_RETURN_IF_ERROR(skip(n - got, n));
    return resource_exhausted("no memory for a message of " + std::to_string(n) +
                              " bytes (it was skipped): send less at once, or free memory");
  }
  return Status::ok_status();
}

Expected<bool> FrameReader::read_frame(std::string* out) {
  SOD2_ASSIGN_OR_RETURN(const std::optional<uint32_t> n, read_header());
  if (!n) return false;
  SOD2_RETURN_IF_ERROR(read_payload(*n, out));
  return true;
}

Status write_preamble(const WriteFn& write) {
  return write(reinterpret_cast<const uint8_t*>(kPreamble.data()), kPreamble.size());
}

Status write_frame(const WriteFn& write, const google::protobuf::MessageLite& message) {
  const size_t n = message.ByteSizeLong();
  if (n > kMaxFrameBytes) {
    return invalid_argument("a message of " + std::to_string(n) +
                            " bytes is above the protocol's " + std::to_string(kMaxFrameBytes) +
                            "-byte limit (inputs too large?)");
  }
  std::string buf(4 + n, '\0');
  for (int i = 0; i < 4; ++i)
    buf[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  if (!message.SerializeToArray(buf.data() + 4, static_cast<int>(n)))
    return internal_error("could not serialize a protocol message");
  return write(reinterpret_cast<const uint8_t*>(buf.data()), buf.size());
}

ReadFn fd_reader(int fd) {
  return [fd](uint8_t* buf, size_t n) -> Expected<size_t> {
    for (;;) {
      const ssize_t k = ::read(fd, buf, n);
      if (k >= 0) return static_cast<size_t>(k);
      if (errno == EINTR) continue;
      return io_error(std::string("read failed: ") + std::strerror(errno));
    }
  };
}

WriteFn fd_writer(int fd) {
  return [fd](const uint8_t* buf, size_t n) -> Status {
    size_t done = 0;
    while (done < n) {
      const ssize_t k = ::write(fd, buf + done, n - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0)
        return io_error(std::string("write failed: ") + std::strerror(k < 0 ? errno : EIO));
      done += static_cast<size_t>(k);
    }
    return Status::ok_status();
  };
}

}  // namespace sod2::agent
