// Shape, Size, ConstantOfShape, Range, Constant, OneHot, Trilu, EyeLike, and registry coverage.
#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

TEST(ShapeOp, WholeShapeAndStartEndSince15) {
  HostTensor x = f32(Shape{2, 3, 0, 5}, {});
  EXPECT_EQ(values<int64_t>(run1("Shape", 13, {&x})), (std::vector<int64_t>{2, 3, 0, 5}));
  EXPECT_EQ(values<int64_t>(
                run1("Shape", 15, {&x}, attrs({{"start", attr_int(-3)}, {"end", attr_int(-1)}}))),
            (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(values<int64_t>(
                run1("Shape", 15, {&x}, attrs({{"start", attr_int(1)}, {"end", attr_int(100)}}))),
            (std::vector<int64_t>{3, 0, 5}));
  EXPECT_EQ(run1("Shape", 15, {&x}, attrs({{"start", attr_int(3)}, {"end", attr_int(1)}})).shape(),
            (Shape{0}));
  HostTensor y = run1("Size", 13, {&x});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0}));
}

TEST(ConstantOfShape, DefaultFloatZeroTypedValueAndScalar) {
  HostTensor shape = i64_vec({2, 3});
  HostTensor y = run1("ConstantOfShape", 9, {&shape});
  EXPECT_EQ(y.dtype(), DType::kFloat);
  EXPECT_EQ(values<float>(y), std::vector<float>(6, 0.0f));
  HostTensor v = i64(Shape{1}, {7});
  HostTensor yi = run1("ConstantOfShape", 9, {&shape}, attrs({{"value", attr_tensor(v)}}));
  EXPECT_EQ(yi.dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(yi), std::vector<int64_t>(6, 7));
  HostTensor empty = i64(Shape{0}, {});
  EXPECT_EQ(run1("ConstantOfShape", 9, {&empty}).shape(), Shape{});
  HostTensor negative = i64_vec({2, -1});
  run_error("ConstantOfShape", 9, {&negative});
  HostTensor huge = i64_vec({int64_t{1} << 62, 4});
  run_error("ConstantOfShape", 9, {&huge});
}

TEST(Range, IntegerAndFloatCounts) {
  HostTensor a = i64_scalar(10), b = i64_scalar(1), d = i64_scalar(-3);
  EXPECT_EQ(values<int64_t>(run1("Range", 11, {&a, &b, &d})), (std::vector<int64_t>{10, 7, 4}));
  HostTensor fa = f32_scalar(1), fb = f32_scalar(2.5f), fd = f32_scalar(0.5f);
  EXPECT_EQ(values<float>(run1("Range", 11, {&fa, &fb, &fd})), (std::vector<float>{1, 1.5f, 2}));
  HostTensor i32a = i32(Shape{}, {0}), i32b = i32(Shape{}, {-5}), i32d = i32(Shape{}, {1});
  EXPECT_EQ(run1("Range", 11, {&i32a, &i32b, &i32d}).shape(), (Shape{0}));
  HostTensor zero = i64_scalar(0);
  run_error("Range", 11, {&a, &b, &zero});
}

TEST(Constant, ValueAttributesOfEachKind) {
  HostTensor t = f32(Shape{2}, {1.5f, 2.5f});
  EXPECT_EQ(values<float>(run1("Constant", 13, {}, attrs({{"value", attr_tensor(t)}}))),
            (std::vector<float>{1.5f, 2.5f}));
  HostTensor f = run1("Constant", 13, {}, attrs({{"value_float", attr_float(3)}}));
  EXPECT_EQ(f.shape(), Shape{});
  EXPECT_EQ(values<float>(f), (std::vector<float>{3}));
  EXPECT_EQ(values<float>(run1("Constant", 13, {}, attrs({{"value_floats", attr_floats({1, 2})}}))),
            (std::vector<float>{1, 2}));
  HostTensor i = run1("Constant", 13, {}, attrs({{"value_int", attr_int(-4)}}));
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(i), (std::vector<int64_t>{-4}));
  EXPECT_EQ(values<int64_t>(run1("Constant", 13, {}, attrs({{"value_ints", attr_ints({5, 6})}}))),
            (std::vector<int64_t>{5, 6}));
  EXPECT_FALSE(run_kernel(data_registry(), "Constant", 13, {}, 1).ok());
}

TEST(OneHot, AxesNegativeAndOutOfRangeIndices) {
  HostTensor idx = i64_vec({1, -1, 5, 0});
  HostTensor depth = f32_scalar(3);
  HostTensor vals = f32(Shape{2}, {0, 1});
  HostTensor y = run1("OneHot", 11, {&idx, &depth, &vals});
  ASSERT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}));
  HostTensor y0 = run1("OneHot", 11, {&idx, &depth, &vals}, attrs({{"axis", attr_int(0)}}));
  ASSERT_EQ(y0.shape(), (Shape{3, 4}));
  EXPECT_EQ(values<float>(y0), (std::vector<float>{0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0}));
}

TEST(Trilu, UpperLowerWithK) {
  HostTensor x = iota_f32(Shape{2, 3, 4});
  for (int upper : {0, 1}) {
    for (int64_t k : std::vector<int64_t>{-5, -1, 0, 2, 9}) {
      HostTensor kt = i64_scalar(k);
      HostTensor y = run1("Trilu", 14, {&x, &kt}, attrs({{"upper", attr_int(upper)}}));
      for_each_index(x.shape(), [&](const std::vector<int64_t>& o) {
        const bool keep = upper ? o[2] - o[1] >= k : o[2] - o[1] <= k;
        const int64_t f = flat_index(x.shape(), o);
        EXPECT_EQ(y.data<float>()[f], keep ? x.data<float>()[f] : 0.0f) << upper << " k=" << k;
      });
    }
  }
  HostTensor y = run1("Trilu", 14, {&x});  // default upper, k = 0
  EXPECT_EQ(y.data<float>()[4], 0.0f);
  EXPECT_EQ(y.data<float>()[5], 5.0f);
}

TEST(EyeLike, DiagonalOffsetAndDtype) {
  HostTensor x = f32(Shape{3, 4}, std::vector<float>(12, 5));
  HostTensor y = run1("EyeLike", 9, {&x}, attrs({{"k", attr_int(1)}}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  HostTensor yi = run1("EyeLike", 9, {&x}, attrs({{"dtype", attr_int(7)}, {"k", attr_int(-2)}}));
  EXPECT_EQ(yi.dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(yi), (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
}

TEST(Registry, OpsAndOpsetsResolve) {
  const KernelRegistry& r = data_registry();
  EXPECT_EQ(r.find("", "Split", 11), r.find("", "Split", 1));
  EXPECT_NE(r.find("", "Split", 13), r.find("", "Split", 11));
  EXPECT_NE(r.find("", "Squeeze", 13), r.find("", "Squeeze", 11));
  EXPECT_NE(r.find("", "Slice", 10), r.find("", "Slice", 9));
  EXPECT_NE(r.find("", "Reshape", 5), r.find("", "Reshape", 4));
  EXPECT_NE(r.find("", "Pad", 11), r.find("", "Pad", 10));
  EXPECT_EQ(r.find("", "Trilu", 13), nullptr);
  for (const char* op : {"Reshape",        "Flatten",  "Squeeze",   "Unsqueeze",
                         "Transpose",      "Concat",   "Split",     "Slice",
                         "Expand",         "Tile",     "Pad",       "Gather",
                         "GatherElements", "GatherND", "ScatterND", "ScatterElements",
                         "OneHot",         "Trilu",    "EyeLike",   "DepthToSpace",
                         "SpaceToDepth",   "Shape",    "Size",      "ConstantOfShape",
                         "Range",          "Constant", "NonZero",   "NonMaxSuppression",
                         "Compress"}) {
    EXPECT_NE(r.find("", op, 17), nullptr) << op;
  }
}

}  // namespace
}  // namespace sod2::rt::testing
