// The input layout the direct convolutions (depthwise, dense) share: each input row padded
// left/right with zeros and split into `sw` phases (phase p holds padded columns p, p + sw,
// p + 2 sw...), so that every tap of a row, strided or not, reads consecutive floats with no
// bounds checks. See conv_depthwise.cpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt::conv_rows {

inline int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Floats per phase for `ow` outputs computed in blocks of `bw` with kw taps of dilation dw.
inline int64_t phase_width(int64_t ow, int64_t bw, int64_t kw, int64_t dw, int64_t sw) {
  return (ow + bw - 1) / bw * bw + ((kw - 1) * dw) / sw;
}

// Offset of tap kx inside a prepared row (phase, then column within the phase).
inline int64_t tap_offset(int64_t kx, int64_t dw, int64_t sw, int64_t pw) {
  return ((kx * dw) % sw) * pw + (kx * dw) / sw;
}

// Copies the ih x iw plane x into padded, phase-split rows at buf, rf floats apart (vector
// copies; zero fills in whole vectors may run past a phase into what is written next, so buf
// needs 16 floats of slack after the last row).
template <int VL>
SOD2_SIMD_INLINE void prepare_rows(const float* x, float* buf, int64_t ih, int64_t iw, int64_t sw,
                                   int64_t pl, int64_t pw, int64_t rf) {
  // Per phase p (the same for every row): column q of phase p is padded column q*sw + p, input
  // column q*sw + p - pl; columns [lo, hi) come from the input, the rest are zeros.
  constexpr int kMaxPhases = 8;
  int64_t lo[kMaxPhases], hi[kMaxPhases];
  const int64_t phases = sw < kMaxPhases ? sw : kMaxPhases;
  for (int64_t p = 0; p < phases; ++p) {
    lo[p] = std::clamp<int64_t>(ceil_div(pl - p, sw), 0, pw);
    hi[p] = std::clamp<int64_t>(floor_div(iw - 1 + pl - p, sw) + 1, lo[p], pw);
  }
  for (int64_t iy = 0; iy < ih; ++iy) {
    const float* src = x + iy * iw;
    float* dst = buf + iy * rf;
    for (int64_t p = 0; p < sw; ++p) {
      float* d = dst + p * pw;
      int64_t l, h;
      if (p < kMaxPhases) {
        l = lo[p];
        h = hi[p];
      } else {
        l = std::clamp<int64_t>(ceil_div(pl - p, sw), 0, pw);
        h = std::clamp<int64_t>(floor_div(iw - 1 + pl - p, sw) + 1, l, pw);
      }
      simd::zero_over<VL>(d, l);
      const int64_t t0 = l * sw + p - pl;  // input column of d[l]
      const float* s = src + t0;
      const int64_t n = h - l;
      if (sw == 1) {
        simd::copy<VL>(d + l, s, n);
      } else if (sw == 2 && n >= VL && (t0 >= 1 || iw >= 2 * VL)) {
        // VL outputs at q read input columns t0 + 2q .. t0 + 2q + 2VL - 2: as the odd lanes of
        // two loads from one float earlier (so the last load stays inside the row) or, at
        // t0 + 2q == 0, the even lanes of two loads from there (column 2 VL - 1 is inside the
        // row when iw >= 2 VL). The last block is shifted back to end at n.
        auto block = [&](int64_t q) {
          const float* b = s + 2 * q;
          const simd::Vec<VL> v =
              t0 + 2 * q >= 1
                  ? simd::odd_lanes<VL>(simd::load<VL>(b - 1), simd::load<VL>(b - 1 + VL))
                  : simd::even_lanes<VL>(simd::load<VL>(b), simd::load<VL>(b + VL));
          simd::store<VL>(d + l + q, v);
        };
        int64_t q = 0;
        for (; q + VL <= n; q += VL) block(q);
        if (q < n) block(n - VL);
      } else {
        for (int64_t q = 0; q < n; q = simd::launder(q + 1)) d[l + q] = s[q * sw];
      }
      simd::zero_over<VL>(d + h, pw - h);
    }
  }
}

}  // namespace sod2::rt::conv_rows
