// RoiAlign and GridSample (4-D and 5-D) against values worked out by hand from the ONNX spec
// (bilinear and trilinear samples of a linear image are exact, which makes averages easy to
// state).
#include <cmath>

#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

void expect_near_all(const HostTensor& t, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(static_cast<size_t>(t.shape().numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "element " << i;
}

TEST(RoiAlign, AverageOfBilinearSamples) {
  // X[y][x] = 4y + x; the box [0, 0, 3, 3] with a 2x2 grid samples y, x in {0.75, 2.25}.
  HostTensor x = iota_f32(Shape{1, 1, 4, 4});
  HostTensor rois = f32(Shape{1, 4}, {0, 0, 3, 3});
  HostTensor idx = i64_vec({0});
  HostTensor y = run1("RoiAlign", 10, {&x, &rois, &idx}, attrs({{"sampling_ratio", attr_int(2)}}));
  ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 1}));
  expect_near_all(y, {7.5f});
  // Opset 16's default half_pixel shifts the box by half a pixel.
  HostTensor shifted = f32(Shape{1, 4}, {0.5f, 0.5f, 3.5f, 3.5f});
  y = run1("RoiAlign", 16, {&x, &rois, &idx}, attrs({{"sampling_ratio", attr_int(2)}}));
  expect_near_all(y, {7.5f - 2.5f});  // the same grid, half a pixel up and left: 4*.5 + .5
  y = run1("RoiAlign", 16, {&x, &shifted, &idx}, attrs({{"sampling_ratio", attr_int(2)}}));
  expect_near_all(y, {7.5f});
}

TEST(RoiAlign, BinsAndMaxMode) {
  HostTensor x = iota_f32(Shape{1, 1, 4, 4});
  HostTensor rois = f32(Shape{1, 4}, {0, 0, 4, 4});
  HostTensor idx = i64_vec({0});
  // 2x2 bins of 2x2 pixels, one sample at each bin's centre (1, 1), (1, 3), (3, 1), (3, 3).
  HostTensor y = run1("RoiAlign", 10, {&x, &rois, &idx},
                      attrs({{"output_height", attr_int(2)},
                             {"output_width", attr_int(2)},
                             {"sampling_ratio", attr_int(1)}}));
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_near_all(y, {5, 7, 13, 15});
  // Max mode takes the largest weighted corner of each sample: a constant image c sampled at
  // fractions (.75, .75) gives .5625 c.
  HostTensor ones = f32(Shape{1, 1, 4, 4}, std::vector<float>(16, 2.f));
  HostTensor box = f32(Shape{1, 4}, {0, 0, 3, 3});
  y = run1("RoiAlign", 10, {&ones, &box, &idx},
           attrs({{"mode", attr_string("max")}, {"sampling_ratio", attr_int(2)}}));
  expect_near_all(y, {0.5625f * 2.f});
}

TEST(RoiAlign, RejectsBadRoisAndIndices) {
  HostTensor x = iota_f32(Shape{1, 2, 4, 4});
  HostTensor rois = f32(Shape{3, 5}, std::vector<float>(15, 0.f));
  HostTensor idx3 = i64_vec({0, 0, 0});
  KernelError e = run_error("RoiAlign", 16, {&x, &rois, &idx3});
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.message().find("[num_rois, 4]"), std::string::npos) << e.message();
  HostTensor good = f32(Shape{1, 4}, {0, 0, 1, 1});
  HostTensor bad_idx = i64_vec({1});
  EXPECT_EQ(run_error("RoiAlign", 16, {&x, &good, &bad_idx}).code(), StatusCode::kInvalidArgument);
  // A box so large that its adaptive sampling grid would take hours is refused.
  HostTensor huge = f32(Shape{1, 4}, {0, 0, 1e9f, 1e9f});
  HostTensor idx = i64_vec({0});
  EXPECT_EQ(run_error("RoiAlign", 16, {&x, &huge, &idx}).code(), StatusCode::kInvalidArgument);
}

HostTensor grid_sample(const HostTensor& x, std::vector<float> g, const char* mode, const char* pad,
                       int align) {
  const int64_t n = static_cast<int64_t>(g.size()) / 2;
  HostTensor grid = f32(Shape{1, 1, n, 2}, g);
  return run1("GridSample", 16, {&x, &grid},
              attrs({{"mode", attr_string(mode)},
                     {"padding_mode", attr_string(pad)},
                     {"align_corners", attr_int(align)}}));
}

TEST(GridSample, BilinearPaddingModes) {
  HostTensor x = f32(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  // The centre is the mean; a corner (-1, -1) is the outer edge of pixel (0, 0) without
  // align_corners: a quarter of it with zeros padding, all of it with border or reflection.
  expect_near_all(grid_sample(x, {0, 0, -1, -1}, "bilinear", "zeros", 0), {2.5f, 0.25f});
  expect_near_all(grid_sample(x, {0, 0, -1, -1}, "bilinear", "border", 0), {2.5f, 1.f});
  expect_near_all(grid_sample(x, {0, 0, -1, -1}, "bilinear", "reflection", 0), {2.5f, 1.f});
  // align_corners maps -1 and 1 to the corner pixels' centres.
  expect_near_all(grid_sample(x, {-1, -1, 1, 1, 1, -1}, "bilinear", "zeros", 1), {1, 4, 2});
  // Beyond the image (x = 2 maps to pixel 1.5): border clamps it to 1, reflection mirrors it
  // at 1 to 0.5; y = 0 is halfway between the rows.
  expect_near_all(grid_sample(x, {2, 0}, "bilinear", "border", 1), {3.f});
  expect_near_all(grid_sample(x, {2, 0}, "bilinear", "reflection", 1), {2.5f});
}

TEST(GridSample, NearestAndBicubic) {
  HostTensor x = f32(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  expect_near_all(grid_sample(x, {0.3f, 0.3f, -0.3f, 0.3f}, "nearest", "zeros", 0), {4, 3});
  // Bicubic at the centre: Keys weights (-0.09375, 0.59375, 0.59375, -0.09375) on taps -1..2,
  // the outer two zero: 0.59375 * (0.59375 * 3 + 0.59375 * 7).
  expect_near_all(grid_sample(x, {0, 0}, "bicubic", "zeros", 0), {3.525390625f});
  // With border padding the outer taps repeat the edge, and the weights sum to 1: the mean.
  expect_near_all(grid_sample(x, {0, 0}, "bicubic", "border", 0), {2.5f});
}

TEST(GridSample, OutputShapeAndErrors) {
  HostTensor x = iota_f32(Shape{2, 3, 4, 5});
  HostTensor grid = f32(Shape{2, 6, 7, 2}, std::vector<float>(2 * 6 * 7 * 2, 0.f));
  HostTensor y = run1("GridSample", 16, {&x, &grid});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 6, 7}));
  HostTensor bad = f32(Shape{2, 6, 7, 3}, std::vector<float>(2 * 6 * 7 * 3, 0.f));
  EXPECT_EQ(run_error("GridSample", 16, {&x, &bad}).code(), StatusCode::kInvalidArgument);
  HostTensor nan_grid = f32(Shape{2, 1, 1, 2}, {NAN, 0, 1e30f, -1e30f});
  y = run1("GridSample", 16, {&x, &nan_grid},
           attrs({{"mode", attr_string("bicubic")}, {"padding_mode", attr_string("reflection")}}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(run_error("GridSample", 16, {&x, &grid}, attrs({{"mode", attr_string("area")}})).code(),
            StatusCode::kUnsupported);
}

// X[z][y][x] = 4z + 2y + x on a 2x2x2 volume: trilinear samples of it are exact.
HostTensor grid_sample_5d(std::vector<float> g, const char* mode, const char* pad, int align) {
  const HostTensor x = iota_f32(Shape{1, 1, 2, 2, 2});
  const int64_t n = static_cast<int64_t>(g.size()) / 3;
  HostTensor grid = f32(Shape{1, 1, 1, n, 3}, g);
  return run1("GridSample", 20, {&x, &grid},
              attrs({{"mode", attr_string(mode)},
                     {"padding_mode", attr_string(pad)},
                     {"align_corners", attr_int(align)}}));
}

TEST(GridSample, TrilinearAndNearest5D) {
  // Grid points are (x, y, z): x indexes W, z indexes D.
  expect_near_all(
      grid_sample_5d({-1, -1, -1, 1, 1, 1, 1, -1, 1, 0.5f, 0, -1}, "linear", "zeros", 1),
      {0, 7, 5, 0.75f + 1});
  // Without align_corners the centre is the mean, and (1, 1, 1) the far corner's outer edge: an
  // eighth of it with zeros padding, all of it with border.
  expect_near_all(grid_sample_5d({0, 0, 0, 1, 1, 1}, "linear", "zeros", 0), {3.5f, 7 / 8.f});
  expect_near_all(grid_sample_5d({0, 0, 0, 1, 1, 1}, "linear", "border", 0), {3.5f, 7});
  // x = 3 maps to pixel 2: border clamps it to 1, reflection mirrors x = 2 (pixel 1.5) to 0.5.
  expect_near_all(grid_sample_5d({3, 0, 0}, "linear", "border", 1), {1 + 1 + 2});
  expect_near_all(grid_sample_5d({2, 0, 0}, "linear", "reflection", 1), {0.5f + 1 + 2});
  // Nearest: 0.3 maps to 0.8 (pixel 1) and -0.3 to 0.2 (pixel 0) without align_corners.
  expect_near_all(grid_sample_5d({0.3f, 0.3f, 0.3f, -0.3f, 0.3f, -0.3f}, "nearest", "zeros", 0),
                  {7, 2});
}

TEST(GridSample, FiveDShapeAndErrors) {
  HostTensor x = iota_f32(Shape{2, 3, 4, 5, 6});
  HostTensor grid = f32(Shape{2, 7, 8, 9, 3}, std::vector<float>(2 * 7 * 8 * 9 * 3, 0.f));
  EXPECT_EQ(run1("GridSample", 20, {&x, &grid}).shape(), (Shape{2, 3, 7, 8, 9}));
  // ONNX defines cubic for 4-D X only.
  KernelError e = run_error("GridSample", 20, {&x, &grid}, attrs({{"mode", attr_string("cubic")}}));
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(e.message().find("'cubic'"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("5-D"), std::string::npos) << e.message();
  // GridSample-16 is 4-D only.
  e = run_error("GridSample", 16, {&x, &grid});
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(e.message().find("opset 20"), std::string::npos) << e.message();
  // A 5-D X needs (x, y, z) grid points.
  HostTensor pairs = f32(Shape{2, 7, 8, 9, 2}, std::vector<float>(2 * 7 * 8 * 9 * 2, 0.f));
  e = run_error("GridSample", 20, {&x, &pairs});
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.message().find("D_out, H_out, W_out, 3"), std::string::npos) << e.message();
  HostTensor x3 = iota_f32(Shape{1, 1, 4});
  HostTensor g3 = f32(Shape{1, 2, 1}, {0, 0});
  EXPECT_EQ(run_error("GridSample", 20, {&x3, &g3}).code(), StatusCode::kUnsupported);
}

// Each bin's grid is within its limit (256 x 256 points) but the whole output's samples
// (8 channels x 512 x 512 bins x 65536 points = 2^37) would have run for hours.
TEST(RoiAlign, TooManySamplesInAllIsRefused) {
  HostTensor x = iota_f32(Shape{1, 8, 4, 4});
  HostTensor rois = f32(Shape{1, 4}, {0, 0, 3, 3});
  HostTensor idx = i64_vec({0});
  KernelError e = run_error("RoiAlign", 16, {&x, &rois, &idx},
                            attrs({{"output_height", attr_int(512)},
                                   {"output_width", attr_int(512)},
                                   {"sampling_ratio", attr_int(256)}}));
  EXPECT_EQ(e.code(), StatusCode::kResourceExhausted);
  // The same grid over a small output is fine.
  HostTensor y = run1("RoiAlign", 16, {&x, &rois, &idx},
                      attrs({{"output_height", attr_int(2)},
                             {"output_width", attr_int(2)},
                             {"sampling_ratio", attr_int(256)}}));
  EXPECT_EQ(y.shape(), (Shape{1, 8, 2, 2}));
}

// Reflection of an infinite coordinate is NaN (fmod(inf, range)); it went on to an undefined
// float-to-integer conversion and a NaN output. Now it samples zero, like a NaN coordinate.
TEST(GridSample, InfiniteCoordinatesWithReflectionSampleZero) {
  HostTensor x = iota_f32(Shape{1, 1, 3, 4});
  HostTensor grid = f32(Shape{1, 1, 3, 2}, {INFINITY, 0, 0, -INFINITY, -INFINITY, INFINITY});
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    HostTensor y =
        run1("GridSample", 16, {&x, &grid},
             attrs({{"mode", attr_string(mode)}, {"padding_mode", attr_string("reflection")}}));
    ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 3}));
    EXPECT_EQ(values<float>(y), (std::vector<float>{0, 0, 0})) << mode;
  }
}

TEST(RoiAlignGridSample, ThreadsAgree) {
  HostTensor x = iota_f32(Shape{2, 3, 9, 11});
  std::vector<float> g(2 * 5 * 7 * 2);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>((i * 37) % 23) / 10.f - 1.1f;
  HostTensor grid = f32(Shape{2, 5, 7, 2}, g);
  const Attrs a =
      attrs({{"mode", attr_string("bicubic")}, {"padding_mode", attr_string("border")}});
  HostTensor one = run1("GridSample", 16, {&x, &grid}, a, 1);
  HostTensor two = run1("GridSample", 16, {&x, &grid}, a, 2);
  EXPECT_EQ(values<float>(one), values<float>(two));
  HostTensor rois = f32(Shape{3, 4}, {0, 0, 5, 5, 1.5f, 2, 9, 7, 3, 3, 3.5f, 4});
  HostTensor idx = i64_vec({1, 0, 1});
  const Attrs b = attrs({{"output_height", attr_int(3)}, {"output_width", attr_int(2)}});
  one = run1("RoiAlign", 16, {&x, &rois, &idx}, b, 1);
  two = run1("RoiAlign", 16, {&x, &rois, &idx}, b, 2);
  EXPECT_EQ(one.shape(), (Shape{3, 3, 3, 2}));
  EXPECT_EQ(values<float>(one), values<float>(two));
}

}  // namespace
}  // namespace sod2::rt::testing
