// Resize: align_corners with a downscale that does not divide the length, and
// tf_crop_and_resize with and without extrapolation (the ONNX spec's examples).
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

HostTensor iota16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  return floats({1, 1, 4, 4}, v);
}

TEST(ResizeGaps, AlignCornersDividesByTheScaledLength) {
  HostTensor x = floats({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor scales = floats({4}, {1, 1, 0.6f, 0.6f});
  auto out = run_both("Resize", 13, {&x, nullptr, &scales}, 1,
                      A().s("mode", "linear").s("coordinate_transformation_mode", "align_corners"));
  ASSERT_EQ(out.size(), 1u);
  // Width 4 * 0.6 = 2.4: output 1 samples 1 * 3 / 1.4.
  expect_close(out[0], Shape{1, 1, 1, 2}, {1.0, 1.0 + 3.0 / 1.4}, 1e-5);
}

TEST(ResizeGaps, TfCropAndResize) {
  HostTensor x = iota16();
  HostTensor roi = floats({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f});
  HostTensor sizes = testing::make_tensor<int64_t>(DType::kInt64, Shape{4}, {1, 1, 3, 3});
  auto out =
      run_both("Resize", 13, {&x, &roi, nullptr, &sizes}, 1,
               A().s("mode", "linear").s("coordinate_transformation_mode", "tf_crop_and_resize"));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 1, 3, 3}, {7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10.0, 10.3, 10.6}, 1e-5);
}

TEST(ResizeGaps, TfCropAndResizeExtrapolates) {
  HostTensor x = iota16();
  HostTensor roi = floats({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
  HostTensor sizes = testing::make_tensor<int64_t>(DType::kInt64, Shape{4}, {1, 1, 3, 3});
  auto out = run_both("Resize", 13, {&x, &roi, nullptr, &sizes}, 1,
                      A().s("mode", "linear")
                          .s("coordinate_transformation_mode", "tf_crop_and_resize")
                          .f("extrapolation_value", 10.f));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 1, 3, 3}, {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}, 1e-5);
}

TEST(ResizeGaps, TfCropAndResizeNeedsRoi) {
  HostTensor x = iota16();
  HostTensor roi = floats({4}, {0, 0, 1, 1});
  HostTensor sizes = testing::make_tensor<int64_t>(DType::kInt64, Shape{4}, {1, 1, 3, 3});
  Status st = run_status("Resize", 13, {&x, &roi, nullptr, &sizes}, 1,
                         A().s("coordinate_transformation_mode", "tf_crop_and_resize"));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
}

}  // namespace
}  // namespace sod2::rt::linalg_test
