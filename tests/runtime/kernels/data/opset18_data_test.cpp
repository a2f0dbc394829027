// The data kernels at opsets 18/19: Split-18 num_outputs (the last part smaller), Pad-18's axes
// input and Pad-19's wrap mode, ScatterElements/ScatterND reduction max and min (18), against
// values worked out from the ONNX definitions, and their bad-input errors.
#include <limits>

#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

TEST(Opset18Data, SplitNumOutputsMakesTheLastPartSmaller) {
  const HostTensor x = iota_f32({2, 7});
  auto r = run_kernel(data_registry(), "Split", 18, {&x}, 3,
                      attrs({{"axis", attr_int(1)}, {"num_outputs", attr_int(3)}}));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ((*r)[2].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{3, 4, 5, 10, 11, 12}));
  EXPECT_EQ(values<float>((*r)[2]), (std::vector<float>{6, 13}));
  // num_outputs must match the node's outputs; 2 elements cannot make 4 parts of 1.
  const KernelError e = run_error("Split", 18, {&x}, attrs({{"num_outputs", attr_int(3)}}), 2);
  EXPECT_NE(e.message().find("num_outputs is 3"), std::string::npos) << e.message();
  const HostTensor small = iota_f32({5});
  run_error("Split", 18, {&small}, attrs({{"num_outputs", attr_int(4)}}), 4);
}

TEST(Opset18Data, PadAxesInputAndWrapMode) {
  const HostTensor x = iota_f32({2, 3});
  const HostTensor pads = i64_vec({1, 2}), axes = i64_vec({-1}), value = f32_scalar(9);
  const HostTensor y = run1("Pad", 18, {&x, &pads, &value, &axes});
  EXPECT_EQ(y.shape(), (Shape{2, 6}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9, 9}));
  const HostTensor wrap_pads = i64_vec({0, 2, 0, 4});
  const HostTensor w = run1("Pad", 19, {&x, &wrap_pads}, attrs({{"mode", attr_string("wrap")}}));
  EXPECT_EQ(w.shape(), (Shape{2, 9}));
  EXPECT_EQ(values<float>(w), (std::vector<float>{1, 2, 0, 1, 2, 0, 1, 2, 0,  //
                                                  4, 5, 3, 4, 5, 3, 4, 5, 3}));
  // wrap is an opset 19 mode; axes must name dims of the input once.
  EXPECT_EQ(run_error("Pad", 18, {&x, &wrap_pads}, attrs({{"mode", attr_string("wrap")}})).code(),
            StatusCode::kUnsupported);
  const HostTensor bad_axes = i64_vec({2});
  const KernelError e = run_error("Pad", 18, {&x, &pads, &value, &bad_axes});
  EXPECT_NE(e.message().find("axes value 2"), std::string::npos) << e.message();
}

TEST(Opset18Data, ScatterMaxAndMin) {
  const HostTensor x = f32({3}, {5, 5, 5});
  const HostTensor idx = i64({4}, {0, 0, 2, 1}), upd = f32({4}, {7, 3, 1, 6});
  const HostTensor mx =
      run1("ScatterElements", 18, {&x, &idx, &upd}, attrs({{"reduction", attr_string("max")}}));
  EXPECT_EQ(values<float>(mx), (std::vector<float>{7, 6, 5}));
  const HostTensor nd_idx = i64({2, 1}, {2, 2}), nd_upd = f32({2}, {4, 8});
  const HostTensor mn =
      run1("ScatterND", 18, {&x, &nd_idx, &nd_upd}, attrs({{"reduction", attr_string("min")}}));
  EXPECT_EQ(values<float>(mn), (std::vector<float>{5, 5, 4}));
  // max/min exist from opset 18 only.
  EXPECT_EQ(
      run_error("ScatterElements", 16, {&x, &idx, &upd}, attrs({{"reduction", attr_string("max")}}))
          .code(),
      StatusCode::kUnsupported);
}

TEST(Opset18Data, CenterCropPadCol2ImAffineGrid) {
  // Crop 5 -> 2 from index 1; pad 2 -> 5 with 1 zero before and 2 after.
  const HostTensor x = iota_f32({5, 2});
  const HostTensor shape = i64_vec({2, 5});
  const HostTensor y = run1("CenterCropPad", 18, {&x, &shape});
  EXPECT_EQ(y.shape(), (Shape{2, 5}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 2, 3, 0, 0, 0, 4, 5, 0, 0}));
  const HostTensor one = i64_vec({2});
  EXPECT_NE(run_error("CenterCropPad", 18, {&x, &one}).message().find("1 values for 2 axes"),
            std::string::npos);

  // Col2Im of 2x2 blocks over a 3x3 image, stride 1: the centre gets all four blocks' taps.
  std::vector<float> cols(4 * 4, 1.f);
  const HostTensor c = f32({1, 4, 4}, cols), image = i64_vec({3, 3}), block = i64_vec({2, 2});
  const HostTensor im = run1("Col2Im", 18, {&c, &image, &block});
  EXPECT_EQ(im.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(values<float>(im), (std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
  const HostTensor bad_block = i64_vec({3, 3});
  const KernelError e = run_error("Col2Im", 18, {&c, &image, &bad_block});
  EXPECT_NE(e.message().find("does not fit"), std::string::npos) << e.message();

  // AffineGrid with the identity: the base grid itself (pixel centres of a 1x2 image).
  const HostTensor theta = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  const HostTensor size = i64_vec({1, 1, 1, 2});
  const HostTensor g = run1("AffineGrid", 20, {&theta, &size});
  EXPECT_EQ(g.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(g), (std::vector<float>{-0.5f, 0, 0.5f, 0}));
  const HostTensor size3 = i64_vec({1, 1, 1, 1, 2});
  EXPECT_NE(run_error("AffineGrid", 20, {&theta, &size3}).message().find("theta must be"),
            std::string::npos);
}

// Hostile shapes: empty tensors whose other dims are huge. Each case hung (counts iterated with
// nothing to do) or overflowed before its fix.
TEST(Opset18Data, EmptyTensorsWithHugeDimsDoNoWork) {
  constexpr int64_t kBig = int64_t{1} << 30;
  // Col2Im with no columns (L = 0): 2^60 (batch, channel, block element) triples were walked.
  const HostTensor cols = f32({kBig, kBig, 0}, {});
  const HostTensor image = i64_vec({0}), block = i64_vec({1});
  EXPECT_EQ(run1("Col2Im", 18, {&cols, &image, &block}).shape(), (Shape{kBig, kBig, 0}));
  // AffineGrid of width 0: N * D * H = 2^60 rows of nothing.
  const HostTensor theta = f32({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  const HostTensor size = i64_vec({1, 1, kBig, kBig, 0});
  EXPECT_EQ(run1("AffineGrid", 20, {&theta, &size}).shape(), (Shape{1, kBig, kBig, 0, 3}));
  // Split-18 num_outputs over a dim of INT64_MAX: ceil(total / n) as (total + n - 1) / n
  // overflowed and the parts were refused.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const HostTensor wide = f32({kMax, 0}, {});
  auto r =
      run_kernel(data_registry(), "Split", 18, {&wide}, 2, attrs({{"num_outputs", attr_int(2)}}));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{kMax / 2 + 1, 0}));
  EXPECT_EQ((*r)[1].shape(), (Shape{kMax / 2, 0}));
}

// Pads of INT64_MIN before and INT64_MAX after an axis of 2 leave one element, whose source index
// 0 - INT64_MIN overflowed (undefined) in every mode.
TEST(Opset18Data, PadRefusesPadsNearTheInt64Limits) {
  const HostTensor x = iota_f32({2});
  const HostTensor pads =
      i64_vec({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  const KernelError e = run_error("Pad", 19, {&x, &pads});
  EXPECT_NE(e.message().find("too large"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace sod2::rt::testing
