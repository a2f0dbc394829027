// The memory plan's layout rules, shared by the compiler (core/opt, which must produce plans that
// keep them) and the runtime (which proves every plan it instantiates keeps them, since a package
// is untrusted data): one definition of a tensor's lifetime and of a sound layout.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::plan {

// Bytes every arena tensor starts on and is sized to (DESIGN §5): enough for any SIMD load.
inline constexpr int64_t kTensorAlignment = 64;
// What the runtime demands of a package's offsets: every element type naturally aligned. Its
// kernels use unaligned SIMD loads, so the compiler's 64 is for speed, not for soundness, and
// hand-built programs may use less.
inline constexpr int64_t kMinTensorAlignment = 8;

// The steps (positions in an execution order) during which a tensor must keep its bytes:
// from the step that writes it to the last step that reads it, both included.
struct Lifetime {
  int32_t first_step = 0;
  int32_t last_step = 0;

  bool overlaps(const Lifetime& o) const {
    return first_step <= o.last_step && o.first_step <= last_step;
  }
  bool contains(int32_t step) const { return first_step <= step && step <= last_step; }
  friend bool operator==(const Lifetime&, const Lifetime&) = default;
};

// One tensor of a plan at one binding.
struct PlacedTensor {
  int64_t size = 0;    // aligned bytes
  int64_t offset = 0;  // bytes from the arena's start
  Lifetime life;

  int64_t end() const { return offset + size; }
};

// Checks a layout at one binding, trusting nothing about how it was made: every offset is
// non-negative and a multiple of `alignment`, every size non-negative, every tensor inside
// [0, arena_bytes), and no two tensors whose lifetimes overlap share a byte (empty tensors share
// none). `names` (optional, parallel to `tensors`) name offenders. O(n log n + overlapping pairs).
// Keeps its working buffers between calls, so checking the plan of every run allocates nothing
// once it has seen the largest plan.
class LayoutVerifier {
 public:
  Status verify(std::span<const PlacedTensor> tensors, int64_t arena_bytes,
                std::span<const std::string> names = {}, int64_t alignment = kTensorAlignment);

 private:
  std::vector<uint32_t> by_offset_;
  std::vector<uint32_t> open_;
};

// A one-off check with a fresh LayoutVerifier.
Status verify_layout(std::span<const PlacedTensor> tensors, int64_t arena_bytes,
                     std::span<const std::string> names = {});

}  // namespace sod2::plan
