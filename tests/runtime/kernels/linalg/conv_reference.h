// Convolution from its definition, for the conv kernels' tests.
#pragma once

#include <vector>

#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {

struct ConvP {
  int64_t group = 1;
  std::vector<int64_t> strides, dil, pb, pe;  // per spatial dim
};

// Direct convolution from the definition (double accumulation), explicit pads.
inline std::vector<double> ref_conv(const HostTensor& x, const HostTensor& w, const HostTensor* b,
                                    const ConvP& p, Shape* out) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const int ns = xs.rank() - 2;
  const int64_t N = xs[0], C = xs[1], M = ws[0], cg = C / p.group, mg = M / p.group;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, o[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1},
          pad[3] = {0, 0, 0};
  *out = Shape{N, M};
  for (int i = 0; i < ns; ++i) {
    const int j = 3 - ns + i;
    in[j] = xs[2 + i];
    k[j] = ws[2 + i];
    s[j] = p.strides.empty() ? 1 : p.strides[i];
    d[j] = p.dil.empty() ? 1 : p.dil[i];
    pad[j] = p.pb.empty() ? 0 : p.pb[i];
    const int64_t pend = p.pe.empty() ? 0 : p.pe[i];
    o[j] = (in[j] + pad[j] + pend - (k[j] - 1) * d[j] - 1) / s[j] + 1;
    out->push_back(o[j]);
  }
  std::vector<double> y(static_cast<size_t>(out->numel()));
  const float* X = x.data<float>();
  const float* W = w.data<float>();
  size_t yi = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oz = 0; oz < o[0]; ++oz)
        for (int64_t oy = 0; oy < o[1]; ++oy)
          for (int64_t ox = 0; ox < o[2]; ++ox) {
            double acc = b ? b->data<float>()[m] : 0.0;
            const int64_t g = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ky = 0; ky < k[1]; ++ky)
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    const int64_t iz = oz * s[0] - pad[0] + kz * d[0];
                    const int64_t iy = oy * s[1] - pad[1] + ky * d[1];
                    const int64_t ix = ox * s[2] - pad[2] + kx * d[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2])
                      continue;
                    const double xv =
                        X[(((n * C + g * cg + c) * in[0] + iz) * in[1] + iy) * in[2] + ix];
                    const double wv = W[(((m * cg + c) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                    acc += xv * wv;
                  }
            y[yi++] = acc;
          }
  return y;
}

inline Attrs conv_attrs(const ConvP& p) {
  A a;
  a.i("group", p.group);
  if (!p.strides.empty()) a.is("strides", p.strides);
  if (!p.dil.empty()) a.is("dilations", p.dil);
  if (!p.pb.empty()) {
    std::vector<int64_t> pads = p.pb;
    pads.insert(pads.end(), p.pe.begin(), p.pe.end());
    a.is("pads", pads);
  }
  return a;
}

}  // namespace sod2::rt::linalg_test
