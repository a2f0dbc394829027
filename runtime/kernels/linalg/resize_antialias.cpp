// The filter follows ONNX's reference (op_resize.py) and ONNX Runtime's CPU kernel, which agree:
// the triangle (support 1) or Keys cubic (support 2) filter evaluated at (t - x) * scale over the
// stretched support, taps past an edge repeating the edge pixel (or dropped with
// exclude_outside), and the weights normalised to sum 1. Arithmetic is float in the same order as
// ONNX Runtime's, so the two agree to rounding.
#include "runtime/kernels/linalg/resize_antialias.h"

#include <algorithm>
#include <cmath>

namespace sod2::rt {
namespace {

float filter(float t, bool cubic, float a) {
  t = std::fabs(t);
  if (!cubic) return t < 1.f ? 1.f - t : 0.f;
  if (t < 1.f) return ((a + 2.f) * t - (a + 3.f)) * t * t + 1.f;
  if (t < 2.f) return (((t - 5.f) * t + 8.f) * t - 4.f) * a;
  return 0.f;
}

float support_of(bool cubic, float scale) { return (cubic ? 2.f : 1.f) * (1.f / scale); }

}  // namespace

int64_t antialias_tap_count(bool cubic, float scale) {
  // A denormal scale gives an infinite support: capped so the conversion stays defined.
  return 2 * static_cast<int64_t>(std::min(std::ceil(support_of(cubic, scale)), 1e15f)) + 1;
}

void antialias_taps(float x, int64_t in, float scale, bool cubic, float cubic_a,
                    bool exclude_outside, int64_t count, int64_t* idx, float* w) {
  // The filter is centred on x; every tap within the support has a non-zero weight, and there
  // are at most `count` of them.
  const float support = support_of(cubic, scale);
  const float center = x + 0.5f;
  const auto first = static_cast<int64_t>(std::floor(center - support + 0.5f));
  const auto end =
      std::min(static_cast<int64_t>(std::floor(center + support + 0.5f)), first + count);
  float total = 0.f;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t t = first + k;
    const bool outside = t < 0 || t >= in;
    idx[k] = std::clamp<int64_t>(t, 0, in - 1);
    w[k] = t < end && !(exclude_outside && outside)
               ? filter((static_cast<float>(t) - center + 0.5f) * scale, cubic, cubic_a)
               : 0.f;
    total += w[k];
  }
  const float inv = total == 0.f ? 1.f : 1.f / total;
  for (int64_t k = 0; k < count; ++k) w[k] *= inv;
}

}  // namespace sod2::rt
