// DeformConv-19 (deform_conv.cpp) against a reference written from the ONNX definition (one
// bilinear sample per tap, zero outside X, times the mask), the plain Conv it reduces to with zero
// offsets, a hand-worked sample, and its bad-input errors.
#include <cmath>
#include <limits>

#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

struct Geometry {
  int64_t group = 1, offset_group = 1;
  int64_t stride[2] = {1, 1}, dil[2] = {1, 1}, pad[4] = {0, 0, 0, 0};
};

Attrs attrs_of(const Geometry& g) {
  return A()
      .i("group", g.group)
      .i("offset_group", g.offset_group)
      .is("strides", {g.stride[0], g.stride[1]})
      .is("dilations", {g.dil[0], g.dil[1]})
      .is("pads", {g.pad[0], g.pad[1], g.pad[2], g.pad[3]});
}

double sample(const std::vector<double>& x, size_t plane, int64_t h, int64_t w, double y,
              double xf) {
  const int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(xf));
  double v = 0;
  for (int64_t yy : {y0, y0 + 1})
    for (int64_t xx : {x0, x0 + 1}) {
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      const double wy = 1 - std::fabs(y - static_cast<double>(yy));
      const double wx = 1 - std::fabs(xf - static_cast<double>(xx));
      v += wy * wx * x[plane + static_cast<size_t>(yy * w + xx)];
    }
  return v;
}

// Y[n, o, i, j] = B[o] + sum over c in o's group, taps (ky, kx) of W[o, c, ky, kx] *
// mask[n, og, ky, kx, i, j] * X[n, c](i*s - p + ky*d + dy, j*s - p + kx*d + dx).
std::vector<double> deform_conv_ref(const HostTensor& x, const HostTensor& w,
                                    const HostTensor& offset, const HostTensor* b,
                                    const HostTensor* mask, const Geometry& g) {
  const Shape &xs = x.shape(), &ws = w.shape(), &os = offset.shape();
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], m = ws[0], cg = ws[1], kh = ws[2],
                kw = ws[3], oh = os[2], ow = os[3];
  const int64_t mg = m / g.group, cpog = c / g.offset_group, taps = kh * kw;
  const auto xv = values(x), wv = values(w), ov = values(offset);
  std::vector<double> mv = mask ? values(*mask) : std::vector<double>();
  std::vector<double> y(static_cast<size_t>(n * m * oh * ow));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b ? b->data<float>()[o] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t ch = (o / mg) * cg + ci, og = ch / cpog;
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t ky = t / kw, kx = t % kw;
              auto at = [&](int64_t chan) {
                return static_cast<size_t>(((in * os[1] + chan) * oh + i) * ow + j);
              };
              const double dy = ov[at(og * taps * 2 + 2 * t)];
              const double dx = ov[at(og * taps * 2 + 2 * t + 1)];
              const double mk =
                  mask ? mv[static_cast<size_t>(
                             ((in * g.offset_group * taps + og * taps + t) * oh + i) * ow + j)]
                       : 1.0;
              const double v = sample(xv, static_cast<size_t>((in * c + ch) * h * wd), h, wd,
                                      i * g.stride[0] - g.pad[0] + ky * g.dil[0] + dy,
                                      j * g.stride[1] - g.pad[1] + kx * g.dil[1] + dx);
              acc += wv[static_cast<size_t>(((o * cg + ci) * kh + ky) * kw + kx)] * mk * v;
            }
          }
          y[static_cast<size_t>(((in * m + o) * oh + i) * ow + j)] = acc;
        }
  return y;
}

TEST(DeformConv, GroupsStridesPadsDilationsMaskAndBias) {
  Geometry g;
  g.group = 2;
  g.offset_group = 2;
  g.stride[0] = 2;
  g.dil[1] = 2;
  g.pad[0] = 1;
  g.pad[1] = 2;
  g.pad[2] = 0;
  g.pad[3] = 1;
  // oH = (7 + 1 - 3) / 2 + 1 = 3; oW = (6 + 3 - 5) / 1 + 1 = 5.
  const HostTensor x = rand_tensor({2, 4, 7, 6}, 1), w = rand_tensor({6, 2, 3, 3}, 2),
                   offset = rand_tensor({2, 36, 3, 5}, 3, -2.5f, 2.5f), b = rand_tensor({6}, 4),
                   mask = rand_tensor({2, 18, 3, 5}, 5, 0.f, 1.f);
  auto out = run_both("DeformConv", 19, {&x, &w, &offset, &b, &mask}, 1, attrs_of(g));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{2, 6, 3, 5}, deform_conv_ref(x, w, offset, &b, &mask, g));
  // Without B and mask; offset_group 4 (one channel per offset group).
  g.offset_group = 4;
  const HostTensor offset4 = rand_tensor({2, 72, 3, 5}, 6, -3.f, 3.f);
  out = run_both("DeformConv", 19, {&x, &w, &offset4}, 1, attrs_of(g));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{2, 6, 3, 5}, deform_conv_ref(x, w, offset4, nullptr, nullptr, g));
}

TEST(DeformConv, ManyTilesAcrossThreads) {
  // Work enough for two threads to split each image into tiles (of 480 positions, which end
  // mid-row in a 47-wide output).
  const HostTensor x = rand_tensor({1, 8, 40, 47}, 7), w = rand_tensor({16, 8, 3, 3}, 8),
                   offset = rand_tensor({1, 18, 40, 47}, 9, -1.5f, 1.5f);
  Geometry g;
  g.pad[0] = g.pad[1] = g.pad[2] = g.pad[3] = 1;
  auto out = run_both("DeformConv", 19, {&x, &w, &offset}, 1, attrs_of(g));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 16, 40, 47}, deform_conv_ref(x, w, offset, nullptr, nullptr, g));
}

TEST(DeformConv, ZeroOffsetsAreConv) {
  const HostTensor x = rand_tensor({1, 4, 6, 5}, 10), w = rand_tensor({4, 2, 2, 3}, 11),
                   b = rand_tensor({4}, 12);
  const Attrs a = A().i("group", 2).is("pads", {1, 0, 1, 2}).is("strides", {1, 2});
  auto conv = run_both("Conv", 11, {&x, &w, &b}, 1, a);
  ASSERT_EQ(conv.size(), 1u);
  const Shape& s = conv[0].shape();
  HostTensor offset(DType::kFloat, Shape{1, 12, s[2], s[3]});
  for (int64_t i = 0; i < offset.shape().numel(); ++i) offset.data<float>()[i] = 0.f;
  auto deform = run_both("DeformConv", 19, {&x, &w, &offset, &b}, 1, a);
  ASSERT_EQ(deform.size(), 1u);
  expect_close(deform[0], s, values(conv[0]), 1e-5);
}

TEST(DeformConv, HandWorkedSamples) {
  // X = [[1, 2], [3, 4]] and a 1x1 kernel of 1, so each output is one sample of X at its own
  // position plus its offset (dy, dx), times the mask.
  const HostTensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4}), w = floats({1, 1, 1, 1}, {1});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostTensor offset =
      floats({1, 2, 2, 2}, {0.5f, 0.5f, 1.f, nan, /* dx: */ 0.5f, -0.5f, 1.f, 0.f});
  const HostTensor mask = floats({1, 1, 2, 2}, {1, 2, 1, 1});
  auto out = run_both("DeformConv", 19, {&x, &w, &offset, nullptr, &mask}, 1, A());
  ASSERT_EQ(out.size(), 1u);
  // Output (0,0): 2.5. (0,1): base (0,1) + (0.5,-0.5) = (0.5, 0.5) -> 2.5, masked x2 = 5.
  // (1,0): base (1,0) + (1,1) = (2,1), past the last row -> 0. (1,1): NaN -> 0.
  expect_close(out[0], Shape{1, 1, 2, 2}, {2.5, 5.0, 0.0, 0.0});
}

TEST(DeformConv, RefusesInconsistentInputs) {
  const HostTensor x = rand_tensor({1, 4, 5, 5}, 13), w = rand_tensor({2, 4, 3, 3}, 14);
  const HostTensor good = rand_tensor({1, 18, 3, 3}, 15);
  const HostTensor bad_channels = rand_tensor({1, 17, 3, 3}, 16);
  Status st = run_status("DeformConv", 19, {&x, &w, &bad_channels}, 1, A());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("offset must be [1,18,3,3]"), std::string::npos) << st.message();
  const HostTensor bad_spatial = rand_tensor({1, 18, 4, 3}, 17);
  st = run_status("DeformConv", 19, {&x, &w, &bad_spatial}, 1, A());
  EXPECT_NE(st.message().find("offset must be"), std::string::npos) << st.message();
  const HostTensor bad_mask = rand_tensor({1, 18, 3, 3}, 18);
  st = run_status("DeformConv", 19, {&x, &w, &good, nullptr, &bad_mask}, 1, A());
  EXPECT_NE(st.message().find("mask must be [1,9,3,3]"), std::string::npos) << st.message();
  st = run_status("DeformConv", 19, {&x, &w, &good}, 1, A().i("offset_group", 3));
  EXPECT_NE(st.message().find("do not divide into offset_group 3"), std::string::npos)
      << st.message();
  st = run_status("DeformConv", 19, {&x, &w, &good}, 1, A().i("group", 3));
  EXPECT_NE(st.message().find("do not fit group 3"), std::string::npos) << st.message();
  st = run_status("DeformConv", 19, {&x, &w, &good}, 1, A().is("kernel_shape", {2, 2}));
  EXPECT_NE(st.message().find("differs from W"), std::string::npos) << st.message();
}

TEST(DeformConv, OnlyTwoDimensional) {
  const HostTensor x = rand_tensor({1, 2, 5}, 19), w = rand_tensor({1, 2, 3}, 20),
                   offset = rand_tensor({1, 3, 3}, 21);
  Status st = run_status("DeformConv", 19, {&x, &w, &offset}, 1, A());
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("only 2-D DeformConv"), std::string::npos) << st.message();
  // Refused when the kernel is made, naming the node, when the attributes tell the rank.
  st = run_status("DeformConv", 19, {&x, &w, &offset}, 1, A().is("kernel_shape", {3}));
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("node 'DeformConv_test'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'kernel_shape' implies 1 spatial dims"), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace sod2::rt::linalg_test
