// The int64 sums of a 2-D integer convolution, straight from the definition: what the integer
// convolution tests (ConvInteger, QLinearConv, sod2:QFusedConv) compare every kernel path with.
#pragma once

#include <cstdint>
#include <vector>

namespace sod2::rt::linalg_test {

struct IntConvGeometry {
  int64_t n, c, h, w, m, kh, kw, group;
  int64_t sy, sx;          // strides
  int64_t pt, pl, pb, pr;  // pads: top, left, bottom, right
  int64_t dil;
};

// A geometry and the name a test's trace gives it.
struct NamedIntConvGeometry {
  const char* name;
  IntConvGeometry g;
};

// sum over (c, ky, kx) of (x - xzp) * (w - wzp[m]) (one zero point, or one per output channel);
// taps in the padding add nothing. Sets the output's spatial size.
template <class TX, class TW>
std::vector<int64_t> ref_int_conv(const IntConvGeometry& p, const TX* x, const TW* w, int xzp,
                                  const std::vector<int>& wzp, int64_t* oh, int64_t* ow) {
  *oh = (p.h + p.pt + p.pb - (p.kh - 1) * p.dil - 1) / p.sy + 1;
  *ow = (p.w + p.pl + p.pr - (p.kw - 1) * p.dil - 1) / p.sx + 1;
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  std::vector<int64_t> y;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t oy = 0; oy < *oh; ++oy)
        for (int64_t ox = 0; ox < *ow; ++ox) {
          int64_t acc = 0;
          const int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t iy = oy * p.sy - p.pt + ky * p.dil;
                const int64_t ix = ox * p.sx - p.pl + kx * p.dil;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                const int64_t xv = x[((n * p.c + g * cg + c) * p.h + iy) * p.w + ix];
                const int64_t wv = w[((m * cg + c) * p.kh + ky) * p.kw + kx];
                acc += (xv - xzp) * (wv - wzp[wzp.size() == 1 ? 0 : m]);
              }
          y.push_back(acc);
        }
  return y;
}

}  // namespace sod2::rt::linalg_test
