// The nearest-rank percentile, as the host's profiles rank their runs and the agent ranks a
// sustained run's windows, so the two report the same statistic.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

namespace sod2::rt {

// The smallest of `sorted` (ascending, not empty) with at least the fraction q in (0, 1] of the
// values at or below it.
template <typename T>
T nearest_rank(std::span<const T> sorted, double q) {
  const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(k, 1, sorted.size()) - 1];
}

}  // namespace sod2::rt
