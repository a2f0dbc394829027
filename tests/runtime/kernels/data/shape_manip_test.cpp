// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Expand, Tile, DepthToSpace and
// SpaceToDepth against reference implementations.
#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

TEST(Reshape, InfersMinusOneAndCopiesZeroDims) {
  HostTensor x = iota_f32(Shape{2, 3, 4});
  HostTensor shape = i64_vec({0, -1});
  HostTensor y = run1("Reshape", 13, {&x, &shape});
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  EXPECT_EQ(values<float>(y), values<float>(x));
}

TEST(Reshape, AllowZeroKeepsZeroAsADim) {
  HostTensor x = f32(Shape{0, 3}, {});
  HostTensor shape = i64_vec({3, 0});
  EXPECT_EQ(run1("Reshape", 14, {&x, &shape}, attrs({{"allowzero", attr_int(1)}})).shape(),
            (Shape{3, 0}));
  // Without allowzero, 0 copies the input's dim 1 (3): [3, 3] has 9 elements, not 0.
  EXPECT_EQ(run_error("Reshape", 14, {&x, &shape}).code(), StatusCode::kInvalidArgument);
  // allowzero with -1 and 0 together is ambiguous.
  HostTensor bad = i64_vec({-1, 0});
  run_error("Reshape", 14, {&x, &bad}, attrs({{"allowzero", attr_int(1)}}));
}

TEST(Reshape, Opset1ReadsTheAttributeAndMismatchIsAnError) {
  HostTensor x = iota_f32(Shape{6});
  EXPECT_EQ(run1("Reshape", 1, {&x}, attrs({{"shape", attr_ints({3, 2})}})).shape(), (Shape{3, 2}));
  HostTensor shape = i64_vec({4, -1});
  run_error("Reshape", 13, {&x, &shape});
  HostTensor two = i64_vec({-1, -1});
  run_error("Reshape", 13, {&x, &two});
}

TEST(Flatten, AxisZeroNegativeAndRank) {
  HostTensor x = iota_f32(Shape{2, 3, 4});
  EXPECT_EQ(run1("Flatten", 13, {&x}, attrs({{"axis", attr_int(0)}})).shape(), (Shape{1, 24}));
  EXPECT_EQ(run1("Flatten", 13, {&x}, attrs({{"axis", attr_int(-1)}})).shape(), (Shape{6, 4}));
  EXPECT_EQ(run1("Flatten", 13, {&x}, attrs({{"axis", attr_int(3)}})).shape(), (Shape{24, 1}));
  EXPECT_EQ(run1("Flatten", 13, {&x}).shape(), (Shape{2, 12}));
  run_error("Flatten", 13, {&x}, attrs({{"axis", attr_int(4)}}));
}

TEST(Squeeze, Opset11AttrVsOpset13Input) {
  HostTensor x = iota_f32(Shape{1, 3, 1, 2});
  EXPECT_EQ(run1("Squeeze", 11, {&x}, attrs({{"axes", attr_ints({-2})}})).shape(),
            (Shape{1, 3, 2}));
  EXPECT_EQ(run1("Squeeze", 11, {&x}).shape(), (Shape{3, 2}));
  HostTensor axes = i64_vec({0});
  HostTensor y = run1("Squeeze", 13, {&x, &axes});
  EXPECT_EQ(y.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(values<float>(y), values<float>(x));
  EXPECT_EQ(run1("Squeeze", 13, {&x, nullptr}).shape(), (Shape{3, 2}));
  HostTensor not_one = i64_vec({1});
  run_error("Squeeze", 13, {&x, &not_one});
}

TEST(Unsqueeze, Opset11AttrVsOpset13Input) {
  HostTensor x = iota_f32(Shape{3, 4});
  EXPECT_EQ(run1("Unsqueeze", 11, {&x}, attrs({{"axes", attr_ints({0, -1})}})).shape(),
            (Shape{1, 3, 4, 1}));
  HostTensor axes = i64_vec({1, 3});
  EXPECT_EQ(run1("Unsqueeze", 13, {&x, &axes}).shape(), (Shape{3, 1, 4, 1}));
  HostTensor scalar = f32_scalar(5);
  HostTensor zero = i64_vec({0});
  EXPECT_EQ(run1("Unsqueeze", 13, {&scalar, &zero}).shape(), (Shape{1}));
  HostTensor repeated = i64_vec({1, 1});
  run_error("Unsqueeze", 13, {&x, &repeated});
  HostTensor too_many = i64_vec({0, 1, 2, 3, 4, 5, 6});
  run_error("Unsqueeze", 13, {&x, &too_many});
}

// Reference transpose.
HostTensor transpose_ref(const HostTensor& x, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(x.shape()[static_cast<int>(p)]);
  HostTensor y(x.dtype(), out);
  const size_t elem = dtype_size(x.dtype());
  int64_t k = 0;
  for_each_index(out, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> in(o.size());
    for (size_t i = 0; i < perm.size(); ++i) in[static_cast<size_t>(perm[i])] = o[i];
    std::memcpy(y.bytes().data() + static_cast<size_t>(k++) * elem,
                x.bytes().data() + static_cast<size_t>(flat_index(x.shape(), in)) * elem, elem);
  });
  return y;
}

TEST(Transpose, MatchesReferenceForManyPermsAndThreads) {
  HostTensor x = iota_f32(Shape{2, 3, 4, 5});
  const std::vector<std::vector<int64_t>> perms = {{0, 1, 2, 3}, {3, 2, 1, 0}, {0, 2, 1, 3},
                                                   {1, 0, 3, 2}, {2, 3, 0, 1}, {0, 1, 3, 2}};
  for (const auto& perm : perms) {
    for (int threads : {1, 3}) {
      HostTensor y = run1("Transpose", 13, {&x}, attrs({{"perm", attr_ints(perm)}}), threads);
      HostTensor want = transpose_ref(x, perm);
      EXPECT_EQ(y.shape(), want.shape());
      EXPECT_EQ(values<float>(y), values<float>(want));
    }
  }
  HostTensor y = run1("Transpose", 13, {&x});  // default: reversed
  EXPECT_EQ(values<float>(y), values<float>(transpose_ref(x, {3, 2, 1, 0})));
}

TEST(Transpose, GenericOverElementSizesAndLargeInput) {
  for (DType t : {DType::kUint8, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kBool}) {
    HostTensor x(t, Shape{3, 5, 7});
    for (size_t i = 0; i < x.bytes().size(); ++i) x.bytes()[i] = static_cast<uint8_t>(i * 7 % 2);
    HostTensor y = run1("Transpose", 13, {&x}, attrs({{"perm", attr_ints({2, 0, 1})}}));
    EXPECT_EQ(y.bytes(), transpose_ref(x, {2, 0, 1}).bytes()) << dtype_name(t);
  }
  HostTensor big = iota_f32(Shape{64, 130, 33});
  HostTensor y = run1("Transpose", 13, {&big}, attrs({{"perm", attr_ints({1, 0, 2})}}), 4);
  EXPECT_EQ(values<float>(y), values<float>(transpose_ref(big, {1, 0, 2})));
  HostTensor empty = f32(Shape{2, 0, 3}, {});
  EXPECT_EQ(run1("Transpose", 13, {&empty}).shape(), (Shape{3, 0, 2}));
  run_error("Transpose", 13, {&big}, attrs({{"perm", attr_ints({0, 0, 1})}}));
}

// Swaps of the last two dims after merging (strided rows in the copy engine): one matrix, a block
// of them, NCHW -> NHWC and back, attention's K^T, every element size, at 1 and 3 threads.
TEST(Transpose, LastTwoDimSwapsOverElementSizes) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {Shape{50, 37}, {1, 0}},
      {Shape{3, 37, 50}, {0, 2, 1}},
      {Shape{2, 3, 17, 19}, {0, 1, 3, 2}},
      {Shape{2, 16, 9, 10}, {0, 2, 3, 1}},
      {Shape{2, 9, 10, 16}, {0, 3, 1, 2}},
      {Shape{1, 197, 48}, {0, 2, 1}}};
  for (const auto& [shape, perm] : cases) {
    for (DType t : {DType::kFloat, DType::kUint8, DType::kFloat16, DType::kInt64}) {
      HostTensor x(t, shape);
      for (size_t i = 0; i < x.bytes().size(); ++i)
        x.bytes()[i] = static_cast<uint8_t>(i * 13 % 251);
      for (int threads : {1, 3}) {
        HostTensor y = run1("Transpose", 13, {&x}, attrs({{"perm", attr_ints(perm)}}), threads);
        EXPECT_EQ(y.bytes(), transpose_ref(x, perm).bytes())
            << shape.to_string() << " " << dtype_name(t) << " threads " << threads;
      }
    }
  }
}

TEST(Concat, MiddleAxisNegativeAxisAndEmptyInputs) {
  HostTensor a = iota_f32(Shape{2, 1, 3});
  HostTensor b = f32(Shape{2, 2, 3}, std::vector<float>(12, -1.0f));
  HostTensor e = f32(Shape{2, 0, 3}, {});
  HostTensor y = run1("Concat", 13, {&a, &e, &b}, attrs({{"axis", attr_int(-2)}}));
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3}));
  std::vector<float> want = {0, 1, 2, -1, -1, -1, -1, -1, -1, 3, 4, 5, -1, -1, -1, -1, -1, -1};
  EXPECT_EQ(values<float>(y), want);
  HostTensor y0 = run1("Concat", 13, {&a, &a}, attrs({{"axis", attr_int(0)}}), 2);
  EXPECT_EQ(y0.shape(), (Shape{4, 1, 3}));
  HostTensor mismatch = iota_f32(Shape{3, 1, 3});
  run_error("Concat", 13, {&a, &mismatch}, attrs({{"axis", attr_int(1)}}));
}

TEST(Split, Opset11AttrVsOpset13InputAndEqualSplit) {
  HostTensor x = iota_f32(Shape{2, 5});
  auto r11 = run_kernel(data_registry(), "Split", 11, {&x}, 2,
                        attrs({{"axis", attr_int(1)}, {"split", attr_ints({2, 3})}}));
  ASSERT_TRUE(r11.ok()) << r11.status().to_string();
  EXPECT_EQ(values<float>((*r11)[0]), (std::vector<float>{0, 1, 5, 6}));
  EXPECT_EQ(values<float>((*r11)[1]), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  HostTensor split = i64_vec({4, 1});
  auto r13 =
      run_kernel(data_registry(), "Split", 13, {&x, &split}, 2, attrs({{"axis", attr_int(-1)}}));
  ASSERT_TRUE(r13.ok()) << r13.status().to_string();
  EXPECT_EQ(values<float>((*r13)[0]), (std::vector<float>{0, 1, 2, 3, 5, 6, 7, 8}));
  EXPECT_EQ((*r13)[1].shape(), (Shape{2, 1}));
  // Equal parts along axis 0, and an indivisible equal split is an error.
  auto eq = run_kernel(data_registry(), "Split", 13, {&x}, 2);
  ASSERT_TRUE(eq.ok());
  EXPECT_EQ(values<float>((*eq)[1]), (std::vector<float>{5, 6, 7, 8, 9}));
  EXPECT_FALSE(
      run_kernel(data_registry(), "Split", 13, {&x, nullptr}, 3, attrs({{"axis", attr_int(1)}}))
          .ok());
  HostTensor bad = i64_vec({2, 2});
  EXPECT_FALSE(
      run_kernel(data_registry(), "Split", 13, {&x, &bad}, 2, attrs({{"axis", attr_int(1)}})).ok());
  // Zero-sized parts are fine.
  HostTensor zero = i64_vec({0, 5});
  auto z = run_kernel(data_registry(), "Split", 13, {&x, &zero}, 2, attrs({{"axis", attr_int(1)}}));
  ASSERT_TRUE(z.ok());
  EXPECT_EQ((*z)[0].shape(), (Shape{2, 0}));
  EXPECT_EQ(values<float>((*z)[1]), values<float>(x));
}

TEST(Expand, BroadcastsBothWays) {
  HostTensor x = f32(Shape{3, 1}, {1, 2, 3});
  HostTensor shape = i64_vec({2, 1, 4});
  HostTensor y = run1("Expand", 13, {&x, &shape});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  std::vector<float> want;
  for (int b = 0; b < 2; ++b)
    for (float v : {1.0f, 2.0f, 3.0f})
      for (int j = 0; j < 4; ++j) want.push_back(v);
  EXPECT_EQ(values<float>(y), want);
  HostTensor smaller = i64_vec({1});  // shape may be smaller than the input's
  EXPECT_EQ(run1("Expand", 13, {&x, &smaller}).shape(), (Shape{3, 1}));
  HostTensor bad = i64_vec({2, 2});
  run_error("Expand", 13, {&x, &bad});
  HostTensor huge = i64_vec({int64_t{1} << 40, int64_t{1} << 40});
  run_error("Expand", 13, {&x, &huge});
}

TEST(Tile, RepeatsEachAxis) {
  HostTensor x = f32(Shape{2, 2}, {1, 2, 3, 4});
  HostTensor reps = i64_vec({2, 3});
  HostTensor y = run1("Tile", 13, {&x, &reps});
  ASSERT_EQ(y.shape(), (Shape{4, 6}));
  for_each_index(y.shape(), [&](const std::vector<int64_t>& o) {
    const float want = values<float>(x)[static_cast<size_t>((o[0] % 2) * 2 + o[1] % 2)];
    EXPECT_EQ(y.data<float>()[flat_index(y.shape(), o)], want);
  });
  HostTensor zero = i64_vec({0, 1});
  EXPECT_EQ(run1("Tile", 13, {&x, &zero}).shape(), (Shape{0, 2}));
  HostTensor wrong_len = i64_vec({2});
  run_error("Tile", 13, {&x, &wrong_len});
}

TEST(DepthToSpace, DcrAndCrdMatchReshapeTranspose) {
  const int64_t n = 1, c = 8, h = 2, w = 3, b = 2;
  HostTensor x = iota_f32(Shape{n, c, h, w});
  for (const char* mode : {"DCR", "CRD"}) {
    HostTensor y = run1("DepthToSpace", 13, {&x},
                        attrs({{"blocksize", attr_int(b)}, {"mode", attr_string(mode)}}));
    ASSERT_EQ(y.shape(), (Shape{n, c / 4, h * b, w * b}));
    for_each_index(y.shape(), [&](const std::vector<int64_t>& o) {
      const int64_t oc = o[1], bh = o[2] % b, bw = o[3] % b;
      const int64_t ic =
          std::string(mode) == "DCR" ? (bh * b + bw) * (c / 4) + oc : oc * b * b + bh * b + bw;
      const float want = x.data<float>()[flat_index(x.shape(), {o[0], ic, o[2] / b, o[3] / b})];
      EXPECT_EQ(y.data<float>()[flat_index(y.shape(), o)], want) << mode;
    });
    // SpaceToDepth inverts DCR DepthToSpace.
    if (std::string(mode) == "DCR") {
      HostTensor back = run1("SpaceToDepth", 13, {&y}, attrs({{"blocksize", attr_int(b)}}));
      EXPECT_EQ(back.shape(), x.shape());
      EXPECT_EQ(values<float>(back), values<float>(x));
    }
  }
}

}  // namespace
}  // namespace sod2::rt::testing
