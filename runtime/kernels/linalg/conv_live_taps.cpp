#include "runtime/kernels/linalg/conv_live_taps.h"

#include <algorithm>
#include <cstring>

namespace sod2::rt {

LiveTaps live_taps(const Window3& g) {
  LiveTaps t;
  for (int a = 0; a < 3; ++a) {
    t.count[a] = g.k[a];
    if (g.k[a] <= 1 || g.out[a] <= 0) continue;
    // Tap i reads input positions [i * d - pad, (out - 1) * s + i * d - pad].
    auto live = [&](int64_t i) {
      const int64_t lo = i * g.dil[a] - g.pad_begin[a];
      const int64_t hi = (g.out[a] - 1) * g.stride[a] + lo;
      return hi >= 0 && lo <= g.in[a] - 1;
    };
    int64_t front = 0, back = 0;
    while (front < g.k[a] && !live(front)) ++front;
    if (front == g.k[a]) continue;  // nothing live: the conv is its bias, left as it is
    while (!live(g.k[a] - 1 - back)) ++back;
    front = std::min(front, g.pad_begin[a] / g.dil[a]);
    back = std::min(back, g.pad_end[a] / g.dil[a]);
    if (front + back == 0) continue;
    t.first[a] = front;
    t.count[a] = g.k[a] - front - back;
    t.trims = true;
  }
  return t;
}

Window3 trimmed_window(const Window3& g, const LiveTaps& t) {
  Window3 r = g;
  for (int a = 0; a < 3; ++a) {
    const int64_t back = g.k[a] - t.first[a] - t.count[a];
    r.k[a] = t.count[a];
    r.pad_begin[a] = g.pad_begin[a] - t.first[a] * g.dil[a];
    r.pad_end[a] = g.pad_end[a] - back * g.dil[a];
  }
  return r;
}

void copy_live_taps(const float* w, int64_t rows, const Window3& g, const LiveTaps& t, float* out) {
  const int64_t k_size = g.k_size();
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = w + r * k_size;
    for (int64_t z = 0; z < t.count[0]; ++z)
      for (int64_t y = 0; y < t.count[1]; ++y) {
        const float* row = src + ((t.first[0] + z) * g.k[1] + t.first[1] + y) * g.k[2] + t.first[2];
        std::memcpy(out, row, sizeof(float) * t.count[2]);
        out += t.count[2];
      }
  }
}

}  // namespace sod2::rt
