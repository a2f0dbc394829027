// How the standalone linalg benchmarks time a kernel (not built by CMake).
#pragma once

#include <algorithm>
#include <chrono>

namespace sod2::rt {

// The best of 30 runs of f, in ms: caches warm, and the least of this shared machine's noise.
template <class F>
double best_of(F f) {
  double best = 1e30;
  for (int i = 0; i < 30; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace sod2::rt
