// Accurate, fast sums of contiguous rows: four double lanes that the compiler can keep in
// vector registers (a single running sum would be latency-bound and, in float, lose digits on
// long rows).
#pragma once

#include <cstdint>

namespace sod2::rt::math {

template <class T>
double row_sum(const T* x, int64_t n) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) acc[j] += static_cast<double>(x[i + j]);
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// Sum of (x - mean)^2, the numerator of a two-pass variance.
template <class T>
double row_squared_deviation(const T* x, int64_t n, double mean) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) {
      const double d = static_cast<double>(x[i + j]) - mean;
      acc[j] += d * d;
    }
  }
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    acc[0] += d * d;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

}  // namespace sod2::rt::math
