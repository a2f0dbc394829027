// The yardsticks every plan is reported against, at one binding (DESIGN §5).
#pragma once

#include <cstdint>
#include <span>

#include "runtime/program/plan_layout.h"

namespace sod2::plan {

// Max over steps of the bytes of the tensors live at that step: no layout of these tensors in
// this order can use less, so it is the lower bound of the arena, and it is the "peak live bytes"
// an execution order is judged by. Sums saturate at INT64_MAX instead of wrapping.
int64_t peak_live_bytes(std::span<const int64_t> sizes, std::span<const Lifetime> lives);

// The sum of all sizes: what an allocator without reuse needs (`naive_bytes`).
int64_t total_bytes(std::span<const int64_t> sizes);

// a + b, saturating at INT64_MAX; both non-negative.
inline int64_t saturating_add(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

}  // namespace sod2::plan
