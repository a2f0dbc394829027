// Gather, GatherElements, GatherND, ScatterND, ScatterElements: references, negative indices,
// int32/int64 indices, and out-of-range indices as errors.
#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

HostTensor gather_ref(const HostTensor& x, const std::vector<int64_t>& idx, const Shape& idx_shape,
                      int axis) {
  const Shape& ds = x.shape();
  Shape out;
  for (int i = 0; i < axis; ++i) out.push_back(ds[i]);
  for (int i = 0; i < idx_shape.rank(); ++i) out.push_back(idx_shape[i]);
  for (int i = axis + 1; i < ds.rank(); ++i) out.push_back(ds[i]);
  HostTensor y(DType::kFloat, out);
  int64_t k = 0;
  for_each_index(out, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> src(o.begin(), o.begin() + axis);
    std::vector<int64_t> ii(o.begin() + axis, o.begin() + axis + idx_shape.rank());
    int64_t v = idx[static_cast<size_t>(flat_index(idx_shape, ii))];
    if (v < 0) v += ds[axis];
    src.push_back(v);
    src.insert(src.end(), o.begin() + axis + idx_shape.rank(), o.end());
    y.data<float>()[k++] = x.data<float>()[flat_index(ds, src)];
  });
  return y;
}

TEST(Gather, AllAxesNegativeIndicesInt32AndInt64) {
  HostTensor x = iota_f32(Shape{3, 4, 5});
  const std::vector<int64_t> idx = {2, -1, 0, 1, -3, 2};
  for (int axis = 0; axis < 3; ++axis) {
    HostTensor i64i = i64(Shape{2, 3}, idx);
    HostTensor i32i = i32(Shape{2, 3}, std::vector<int32_t>(idx.begin(), idx.end()));
    HostTensor want = gather_ref(x, idx, Shape{2, 3}, axis);
    for (const HostTensor* ind : {&i64i, &i32i}) {
      HostTensor y = run1("Gather", 13, {&x, ind}, attrs({{"axis", attr_int(axis - 3)}}), 2);
      EXPECT_EQ(y.shape(), want.shape());
      EXPECT_EQ(values<float>(y), values<float>(want)) << "axis " << axis;
    }
  }
  HostTensor scalar_idx = i64_scalar(1);
  EXPECT_EQ(run1("Gather", 13, {&x, &scalar_idx}).shape(), (Shape{4, 5}));
  HostTensor empty_idx = i64(Shape{0}, {});
  EXPECT_EQ(run1("Gather", 13, {&x, &empty_idx}, attrs({{"axis", attr_int(1)}})).shape(),
            (Shape{3, 0, 5}));
}

TEST(Gather, OutOfRangeIndexIsAnErrorNamingIt) {
  HostTensor x = iota_f32(Shape{5, 2});
  HostTensor idx = i64_vec({0, 7});
  KernelError s = run_error("Gather", 13, {&x, &idx});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Gather: index 7 is out of range for axis 0 of size 5"),
            std::string::npos)
      << s.message();
  HostTensor neg = i32(Shape{1}, {-6});
  run_error("Gather", 13, {&x, &neg});
  HostTensor empty = f32(Shape{0, 2}, {});
  HostTensor zero = i64_vec({0});
  run_error("Gather", 13, {&empty, &zero});
}

TEST(GatherElements, AxesAndNegativeIndices) {
  HostTensor x = iota_f32(Shape{3, 4});
  HostTensor idx = i64(Shape{2, 3}, {0, -1, 2, 1, 0, -3});
  HostTensor y0 = run1("GatherElements", 13, {&x, &idx}, attrs({{"axis", attr_int(0)}}));
  // out[i][j] = x[idx[i][j]][j]
  EXPECT_EQ(values<float>(y0), (std::vector<float>{0, 9, 10, 4, 1, 2}));
  HostTensor idx1 = i32(Shape{2, 3}, {0, -1, 2, 1, 0, -4});
  HostTensor y1 = run1("GatherElements", 13, {&x, &idx1}, attrs({{"axis", attr_int(-1)}}));
  // out[i][j] = x[i][idx[i][j]]
  EXPECT_EQ(values<float>(y1), (std::vector<float>{0, 3, 2, 5, 4, 4}));
  HostTensor bad = i64(Shape{1, 1}, {3});
  KernelError s = run_error("GatherElements", 13, {&x, &bad});
  EXPECT_NE(s.message().find("index 3"), std::string::npos);
}

TEST(GatherND, BatchDimsAndPartialIndices) {
  HostTensor x = iota_f32(Shape{2, 3, 4});
  HostTensor full = i64(Shape{2, 3}, {1, 2, 3, 0, -1, 0});
  EXPECT_EQ(values<float>(run1("GatherND", 13, {&x, &full})), (std::vector<float>{23, 8}));
  HostTensor partial = i32(Shape{2, 1}, {1, 0});
  HostTensor y = run1("GatherND", 13, {&x, &partial});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(y.data<float>()[0], 12.0f);
  // batch_dims = 1: per batch b, out[b, j] = x[b, idx[b, j, 0]]
  HostTensor batched = i64(Shape{2, 2, 1}, {2, 0, 1, -1});
  HostTensor yb = run1("GatherND", 13, {&x, &batched}, attrs({{"batch_dims", attr_int(1)}}));
  ASSERT_EQ(yb.shape(), (Shape{2, 2, 4}));
  std::vector<float> want;
  for (auto [b, r] : std::vector<std::pair<int, int>>{{0, 2}, {0, 0}, {1, 1}, {1, 2}})
    for (int j = 0; j < 4; ++j) want.push_back(static_cast<float>(b * 12 + r * 4 + j));
  EXPECT_EQ(values<float>(yb), want);
  HostTensor bad = i64(Shape{1, 2}, {0, 3});
  KernelError s = run_error("GatherND", 13, {&x, &bad});
  EXPECT_NE(s.message().find("index 3 is out of range for axis 1 of size 3"), std::string::npos)
      << s.message();
}

TEST(ScatterND, NoneAddMulAndErrors) {
  HostTensor x = f32(Shape{4, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  HostTensor idx = i64(Shape{3, 1}, {1, -1, 1});
  HostTensor upd = f32(Shape{3, 2}, {2, 3, 4, 5, 6, 7});
  EXPECT_EQ(values<float>(run1("ScatterND", 13, {&x, &idx, &upd})),
            (std::vector<float>{1, 1, 6, 7, 1, 1, 4, 5}));
  EXPECT_EQ(values<float>(run1("ScatterND", 16, {&x, &idx, &upd},
                               attrs({{"reduction", attr_string("add")}}))),
            (std::vector<float>{1, 1, 9, 11, 1, 1, 5, 6}));
  EXPECT_EQ(values<float>(run1("ScatterND", 16, {&x, &idx, &upd},
                               attrs({{"reduction", attr_string("mul")}}))),
            (std::vector<float>{1, 1, 12, 21, 1, 1, 4, 5}));
  // Element-level indices into a 2-D tensor, int32.
  HostTensor idx2 = i32(Shape{2, 2}, {0, 1, 3, 0});
  HostTensor upd2 = f32(Shape{2}, {-1, -2});
  EXPECT_EQ(values<float>(run1("ScatterND", 11, {&x, &idx2, &upd2})),
            (std::vector<float>{1, -1, 1, 1, 1, 1, -2, 1}));
  HostTensor oob = i64(Shape{1, 1}, {4});
  HostTensor upd1 = f32(Shape{1, 2}, {0, 0});
  KernelError s = run_error("ScatterND", 13, {&x, &oob, &upd1});
  EXPECT_NE(s.message().find("ScatterND: index 4"), std::string::npos) << s.message();
  HostTensor wrong_upd = f32(Shape{3, 3}, std::vector<float>(9, 0));
  run_error("ScatterND", 13, {&x, &idx, &wrong_upd});
}

TEST(ScatterElements, AxesReductionAndLegacyScatter) {
  HostTensor x = f32(Shape{2, 3}, {0, 0, 0, 0, 0, 0});
  HostTensor idx = i64(Shape{2, 2}, {2, -3, 1, 1});
  HostTensor upd = f32(Shape{2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(
      values<float>(run1("ScatterElements", 13, {&x, &idx, &upd}, attrs({{"axis", attr_int(1)}}))),
      (std::vector<float>{2, 0, 1, 0, 4, 0}));
  EXPECT_EQ(values<float>(run1("ScatterElements", 16, {&x, &idx, &upd},
                               attrs({{"axis", attr_int(1)}, {"reduction", attr_string("add")}}))),
            (std::vector<float>{2, 0, 1, 0, 7, 0}));
  HostTensor idx0 = i32(Shape{1, 3}, {1, 0, 1});
  HostTensor upd0 = f32(Shape{1, 3}, {5, 6, 7});
  EXPECT_EQ(values<float>(run1("Scatter", 9, {&x, &idx0, &upd0})),
            (std::vector<float>{0, 6, 0, 5, 0, 7}));
  HostTensor oob = i64(Shape{1, 1}, {2});
  HostTensor u = f32(Shape{1, 1}, {1});
  run_error("ScatterElements", 13, {&x, &oob, &u});
}

}  // namespace
}  // namespace sod2::rt::testing
