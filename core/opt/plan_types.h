// Small value types every planning stage shares: a step interval and a tensor laid out at one
// concrete binding.
#pragma once

#include <cstdint>

namespace sod2::opt {

// Bytes every arena tensor starts on and is sized to (DESIGN §5): enough for any SIMD load.
inline constexpr int64_t kTensorAlignment = 64;

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

}  // namespace sod2::opt
