// Framing of the host <-> agent protocol (PROTOCOL.md): the agent first writes an 8-byte
// preamble, then each side writes frames of a 4-byte little-endian length and that many bytes of
// one serialized message. Shared by the agent and the host so both read and write it one way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status/status.h"

namespace google::protobuf {
class MessageLite;
}

namespace sod2::agent {

// Bumped whenever a message changes in a way an older peer would misread. Host and agent must
// agree exactly; each refuses the other with both versions named.
// 2: family packages and FamilyRunRequest (Dynamic-OFA on the device).
inline constexpr uint32_t kProtocolVersion = 2;
// What the agent writes before anything else; a transport that prints its own text instead (a
// shell's "not found") is told apart from the protocol by it.
inline constexpr std::string_view kPreamble = "SOD2AGT\n";
// A frame is at most this large; a length above it means a corrupt stream, not a big message.
inline constexpr uint32_t kMaxFrameBytes = 256u << 20;
inline constexpr size_t kChunkBytes = 1u << 20;  // package bytes per PackageChunk
// A sustained run's windows (RunRequest.window_s), in seconds: short enough that the host hears
// from the agent well within its idle timeout, long enough to hold more than a few runs.
inline constexpr double kMinWindowS = 0.1;
inline constexpr double kMaxWindowS = 60;

// Reads up to `n` bytes into `buf`: the count read (0 = end of stream) or an error.
using ReadFn = std::function<Expected<size_t>(uint8_t* buf, size_t n)>;
// Writes all `n` bytes or fails.
using WriteFn = std::function<Status(const uint8_t* buf, size_t n)>;

class FrameReader {
 public:
  // `max_frame`: the longest payload accepted; each side may expect less than the protocol's
  // limit from the other (the host expects no agent message near 256 MiB).
  explicit FrameReader(ReadFn read, uint32_t max_frame = kMaxFrameBytes)
      : read_(std::move(read)), max_frame_(max_frame) {}

  // The agent's preamble. Anything else is an error quoting what came instead (printable part).
  Status read_preamble();
  // The next frame's payload into `out`. Returns false at a clean end of stream (between
  // frames); an end inside a frame or an oversized length is an error. Memory follows the bytes
  // that arrived, not the length the header claims. When the payload does not fit in memory the
  // frame is skipped (the stream stays in step) and the error is kResourceExhausted.
  Expected<bool> read_frame(std::string* out);

  // read_frame in two steps, for a reader that decides between them whether there is room for
  // the payload: the next frame's length (nullopt at a clean end of stream), then its payload.
  Expected<std::optional<uint32_t>> read_header();
  Status read_payload(uint32_t n, std::string* out);

 private:
  // Reads exactly n bytes; false when the stream ends before the first byte.
  Expected<bool> read_exact(uint8_t* buf, size_t n, bool eof_ok);
  Status skip(uint64_t n, uint64_t of);
  ReadFn read_;
  uint32_t max_frame_;
};

Status write_preamble(const WriteFn& write);
Status write_frame(const WriteFn& write, const google::protobuf::MessageLite& message);

// Blocking read/write on a file descriptor, retrying EINTR and short counts.
ReadFn fd_reader(int fd);
WriteFn fd_writer(int fd);

}  // namespace sod2::agent
