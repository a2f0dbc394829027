// The planner tests' random source: a fixed-seed LCG, so every failure replays exactly and runs
// the same on every machine (std's distributions are not portable across library versions).
#pragma once

#include <cstdint>

namespace sod2::testing {

struct Rng {
  uint64_t state;
  int64_t in(int64_t lo, int64_t hi) {  // uniform-ish in [lo, hi]
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int64_t>((state >> 17) % static_cast<uint64_t>(hi - lo + 1));
  }
};

}  // namespace sod2::testing
