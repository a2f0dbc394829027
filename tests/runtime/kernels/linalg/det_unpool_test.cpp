// Det and MaxUnpool against hand-computed values (ONNX spec examples), plus the MaxPool gaps
// (uint8 input, Indices in column-major order) and ConvTranspose's output_shape.
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

TEST(Det, TwoByTwoAndBatched) {
  HostTensor x = floats({2, 2}, {1, 2, 3, 4});
  auto out = run_both("Det", 11, {&x}, 1, {});
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{}, {-2.0});
  // [2, 3, 3]: 2 * identity (det 8) and a singular matrix (det 0).
  HostTensor b = floats({2, 3, 3}, {2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  out = run_both("Det", 11, {&b}, 1, {});
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{2}, {8.0, 0.0}, 1e-5);
  // A permutation needs pivoting: det of [[0, 1], [1, 0]] is -1.
  HostTensor p = floats({2, 2}, {0, 1, 1, 0});
  out = run_both("Det", 11, {&p}, 1, {});
  expect_close(out[0], Shape{}, {-1.0});
}

TEST(Det, RejectsNonSquare) {
  HostTensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Status st = run_status("Det", 11, {&x}, 1, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  HostTensor v = floats({3}, {1, 2, 3});
  EXPECT_EQ(run_status("Det", 11, {&v}, 1, {}).code(), StatusCode::kInvalidArgument);
}

TEST(MaxUnpool, DefaultAndGivenOutputShape) {
  HostTensor x = floats({1, 1, 2, 2}, {5, 6, 7, 8});
  HostTensor ind = testing::make_tensor<int64_t>(DType::kInt64, Shape{1, 1, 2, 2}, {5, 7, 13, 15});
  const Attrs a = A().is("kernel_shape", {2, 2}).is("strides", {2, 2});
  auto out = run_both("MaxUnpool", 11, {&x, &ind}, 1, a);
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> want(16, 0.0);
  want[5] = 5;
  want[7] = 6;
  want[13] = 7;
  want[15] = 8;
  expect_close(out[0], Shape{1, 1, 4, 4}, want);
  HostTensor shape = testing::make_tensor<int64_t>(DType::kInt64, Shape{4}, {1, 1, 5, 5});
  // The spec's example: the 4x4 unpooled tensor sits at the start of the 5x5 output.
  out = run_both("MaxUnpool", 11, {&x, &ind, &shape}, 1, a);
  std::vector<double> want5(25, 0.0);
  want5[6] = 5;
  want5[8] = 6;
  want5[16] = 7;
  want5[18] = 8;
  expect_close(out[0], Shape{1, 1, 5, 5}, want5);
}

TEST(MaxUnpool, RejectsIndicesOutsideTheOutput) {
  HostTensor x = floats({1, 1, 2, 2}, {5, 6, 7, 8});
  HostTensor ind = testing::make_tensor<int64_t>(DType::kInt64, Shape{1, 1, 2, 2}, {5, 7, 13, 16});
  const Attrs a = A().is("kernel_shape", {2, 2}).is("strides", {2, 2});
  Status st = run_status("MaxUnpool", 11, {&x, &ind}, 1, a);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  HostTensor neg = testing::make_tensor<int64_t>(DType::kInt64, Shape{1, 1, 2, 2}, {-1, 0, 1, 2});
  EXPECT_EQ(run_status("MaxUnpool", 11, {&x, &neg}, 1, a).code(), StatusCode::kInvalidArgument);
  HostTensor bad_shape = testing::make_tensor<int64_t>(DType::kInt64, Shape{2}, {4, 4});
  EXPECT_EQ(run_status("MaxUnpool", 11, {&x, &ind, &bad_shape}, 1, a).code(),
            StatusCode::kInvalidArgument);
  HostTensor small = testing::make_tensor<int64_t>(DType::kInt64, Shape{4}, {1, 1, 3, 4});
  HostTensor ok_ind = testing::make_tensor<int64_t>(DType::kInt64, Shape{1, 1, 2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(run_status("MaxUnpool", 11, {&x, &ok_ind, &small}, 1, a).code(),
            StatusCode::kInvalidArgument);
}

TEST(MaxPoolGaps, Uint8Input) {
  HostTensor x = testing::make_tensor<uint8_t>(DType::kUint8, Shape{1, 1, 3, 3},
                                               {1, 2, 3, 4, 5, 6, 7, 8, 200});
  auto r =
      testing::run_kernel(registry(), "MaxPool", 12, {&x}, 1, A().is("kernel_shape", {2, 2}), 1);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const HostTensor& y = r.value()[0];
  ASSERT_EQ(y.dtype(), DType::kUint8);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + 4),
            (std::vector<uint8_t>{5, 6, 8, 200}));
  HostTensor i32 = testing::make_tensor<int32_t>(DType::kInt32, Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run_status("MaxPool", 12, {&i32}, 1, A().is("kernel_shape", {2, 2})).code(),
            StatusCode::kUnsupported);
}

TEST(MaxPoolGaps, ColumnMajorIndices) {
  HostTensor x = floats({2, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  const Attrs a = A().is("kernel_shape", {2, 2}).i("storage_order", 1);
  auto out = run_both("MaxPool", 12, {&x}, 2, a);
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], Shape{2, 1, 2, 2}, {4, 5, 7, 8, 8, 7, 5, 4});
  // Plane 0's maxima at (1,1) (1,2) (2,1) (2,2): column-major y + 3x. Plane 1 (offset 9) at
  // (0,0) (0,1) (1,0) (1,1).
  const int64_t* idx = out[1].data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(idx, idx + 8), (std::vector<int64_t>{4, 7, 5, 8, 9, 12, 10, 13}));
}

TEST(ConvTransposeGaps, OutputShapeBeyondTheFullOutputPadsTheEnd) {
  // X [1,1,3,3], W [1,2,3,3], strides (3, 2): the full output is 9 x 7; output_shape (10, 8)
  // must equal output_padding (1, 1).
  HostTensor x = rand_tensor({1, 1, 3, 3}, 11);
  HostTensor w = rand_tensor({1, 2, 3, 3}, 12);
  auto by_shape = run_both("ConvTranspose", 11, {&x, &w}, 1,
                           A().is("strides", {3, 2}).is("output_shape", {10, 8}));
  auto by_padding = run_both("ConvTranspose", 11, {&x, &w}, 1,
                             A().is("strides", {3, 2}).is("output_padding", {1, 1}));
  ASSERT_EQ(by_shape.size(), 1u);
  ASSERT_EQ(by_padding.size(), 1u);
  expect_close(by_shape[0], Shape{1, 2, 10, 8}, values(by_padding[0]), 1e-6);
}

}  // namespace
}  // namespace sod2::rt::linalg_test
