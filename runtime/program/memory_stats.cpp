#include "runtime/program/memory_stats.h"

#include <algorithm>
#include <vector>

namespace sod2::plan {

int64_t peak_live_bytes(std::span<const int64_t> sizes, std::span<const Lifetime> lives) {
  int32_t steps = 0;
  bool narrow = true;  // no sum of sizes can leave int64: the common case, in 64-bit adds
  const int64_t per_tensor = INT64_MAX / static_cast<int64_t>(sizes.size() + 1);
  for (size_t i = 0; i < sizes.size(); ++i) {
    steps = std::max(steps, lives[i].last_step + 1);
    narrow = narrow && sizes[i] >= 0 && sizes[i] <= per_tensor;
  }
  // Bytes that start and stop being live at each step; a sweep adds them up.
  const auto sweep = [&](auto zero) {
    using Sum = decltype(zero);
    std::vector<Sum> delta(static_cast<size_t>(steps) + 1, 0);
    for (size_t i = 0; i < sizes.size(); ++i) {
      delta[static_cast<size_t>(lives[i].first_step)] += sizes[i];
      delta[static_cast<size_t>(lives[i].last_step) + 1] -= sizes[i];
    }
    Sum live = 0, peak = 0;
    for (int32_t s = 0; s < steps; ++s) {
      live += delta[static_cast<size_t>(s)];
      peak = std::max(peak, live);
    }
    return peak > INT64_MAX ? INT64_MAX : static_cast<int64_t>(peak);
  };
  // Otherwise in 128 bits, so that one huge size cannot wrap the running total.
  return narrow ? sweep(int64_t{0}) : sweep(__int128{0});
}

int64_t total_bytes(std::span<const int64_t> sizes) {
  int64_t sum = 0;
  for (int64_t s : sizes) sum = saturating_add(sum, s);
  return sum;
}

}  // namespace sod2::plan
