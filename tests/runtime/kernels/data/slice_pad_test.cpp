// Slice (clamping, negative steps, opset 1 vs 10) and Pad (constant/reflect/edge, negative pads,
// opset 2 vs 11) against reference implementations.
#include <limits>

#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Reference 1-D slice: the indices ONNX's definition selects, by walking from the clamped start.
std::vector<int64_t> slice_ref(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> out;
  if (step > 0) {
    start = std::max<int64_t>(0, std::min(start, dim));
    end = std::max<int64_t>(0, std::min(end, dim));
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    start = std::max<int64_t>(0, std::min(start, dim - 1));
    end = std::max<int64_t>(-1, std::min(end, dim - 1));
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

TEST(Slice, OneAxisAgainstReferenceWithClampingAndNegativeSteps) {
  const int64_t dim = 7;
  HostTensor x = iota_f32(Shape{dim});
  const std::vector<int64_t> bounds = {kMin, -100, -8, -7, -3, -1, 0, 1, 3, 6, 7, 8, 100, kMax};
  for (int64_t step : std::vector<int64_t>{1, 2, 3, 10, -1, -2, -4, kMax, kMin}) {
    for (int64_t s : bounds) {
      for (int64_t e : bounds) {
        HostTensor starts = i64_vec({s}), ends = i64_vec({e}), axes = i64_vec({0}),
                   steps = i64_vec({step});
        HostTensor y = run1("Slice", 13, {&x, &starts, &ends, &axes, &steps});
        std::vector<float> want;
        if (step != kMin && step != kMax) {
          for (int64_t i : slice_ref(dim, s, e, step)) want.push_back(static_cast<float>(i));
        } else {
          // Huge steps select at most the first element of the walk.
          auto walk = slice_ref(dim, s, e, step > 0 ? 100 : -100);
          if (!walk.empty()) want.push_back(static_cast<float>(walk[0]));
        }
        EXPECT_EQ(values<float>(y), want) << s << ":" << e << ":" << step;
      }
    }
  }
}

TEST(Slice, MultiAxisInt32InputsAndOmittedAxesSteps) {
  HostTensor x = iota_f32(Shape{3, 4, 5});
  HostTensor starts = i32(Shape{2}, {1, -1}), ends = i32(Shape{2}, {3, -6}),
             axes = i32(Shape{2}, {2, -2}), steps = i32(Shape{2}, {2, -1});
  HostTensor y = run1("Slice", 13, {&x, &starts, &ends, &axes, &steps}, {}, 2);
  ASSERT_EQ(y.shape(), (Shape{3, 4, 1}));
  std::vector<float> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 3; j >= 0; --j) want.push_back(static_cast<float>(i * 20 + j * 5 + 1));
  EXPECT_EQ(values<float>(y), want);

  HostTensor s2 = i64_vec({1}), e2 = i64_vec({kMax});
  EXPECT_EQ(run1("Slice", 10, {&x, &s2, &e2}).shape(), (Shape{2, 4, 5}));
  HostTensor zero_step = i64_vec({0});
  run_error("Slice", 13, {&x, &s2, &e2, nullptr, &zero_step});
  HostTensor rep_axes = i64_vec({0, 0}), s3 = i64_vec({0, 0}), e3 = i64_vec({1, 1});
  run_error("Slice", 13, {&x, &s3, &e3, &rep_axes});
}

TEST(Slice, Opset1AttributesAndEmptyResults) {
  HostTensor x = iota_f32(Shape{4, 3});
  HostTensor y = run1("Slice", 1, {&x},
                      attrs({{"starts", attr_ints({1, 0})}, {"ends", attr_ints({kMax, -1})}}));
  ASSERT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 4, 6, 7, 9, 10}));
  HostTensor z =
      run1("Slice", 1, {&x},
           attrs({{"starts", attr_ints({2})}, {"ends", attr_ints({1})}, {"axes", attr_ints({1})}}));
  EXPECT_EQ(z.shape(), (Shape{4, 0}));
  HostTensor empty = f32(Shape{0, 3}, {});
  HostTensor s = i64_vec({-1}), e = i64_vec({kMin}), a = i64_vec({0}), st = i64_vec({-1});
  EXPECT_EQ(run1("Slice", 13, {&empty, &s, &e, &a, &st}).shape(), (Shape{0, 3}));
}

// Reference pad in numpy's terms for one axis.
int64_t pad_source(int64_t o, int64_t begin, int64_t n, const std::string& mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

HostTensor pad_ref(const HostTensor& x, const std::vector<int64_t>& pads, const std::string& mode,
                   float value) {
  const Shape& in = x.shape();
  const int rank = in.rank();
  Shape out;
  for (int i = 0; i < rank; ++i)
    out.push_back(in[i] + pads[static_cast<size_t>(i)] + pads[static_cast<size_t>(i + rank)]);
  HostTensor y(DType::kFloat, out);
  int64_t k = 0;
  for_each_index(out, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> src(static_cast<size_t>(rank));
    bool constant = false;
    for (int i = 0; i < rank; ++i) {
      const int64_t s =
          pad_source(o[static_cast<size_t>(i)], pads[static_cast<size_t>(i)], in[i], mode);
      constant |= s < 0;
      src[static_cast<size_t>(i)] = s;
    }
    y.data<float>()[k++] = constant ? value : x.data<float>()[flat_index(in, src)];
  });
  return y;
}

TEST(Pad, ModesAgainstReference) {
  HostTensor x = iota_f32(Shape{3, 4});
  const std::vector<std::vector<int64_t>> pad_sets = {
      {1, 2, 2, 1}, {0, 0, 0, 0}, {0, 3, 0, 3}, {-1, 1, 0, -2}, {2, 0, 1, 5}};
  for (const char* mode : {"constant", "reflect", "edge"}) {
    for (const auto& pads : pad_sets) {
      HostTensor p = i64_vec(pads);
      HostTensor cv = f32_scalar(9.5f);
      HostTensor y = run1("Pad", 13, {&x, &p, &cv}, attrs({{"mode", attr_string(mode)}}), 2);
      HostTensor want = pad_ref(x, pads, mode, 9.5f);
      EXPECT_EQ(y.shape(), want.shape()) << mode;
      EXPECT_EQ(values<float>(y), values<float>(want)) << mode;
      // Opset 2 takes the same from attributes.
      HostTensor y2 = run1("Pad", 2, {&x},
                           attrs({{"mode", attr_string(mode)},
                                  {"pads", attr_ints(pads)},
                                  {"value", attr_float(9.5f)}}));
      EXPECT_EQ(values<float>(y2), values<float>(want)) << mode;
    }
  }
}

TEST(Pad, DefaultsIntegerTypesAndErrors) {
  HostTensor x = i32(Shape{2}, {7, 8});
  HostTensor p = i64_vec({1, 1});
  EXPECT_EQ(values<int32_t>(run1("Pad", 11, {&x, &p})), (std::vector<int32_t>{0, 7, 8, 0}));
  HostTensor v = i32(Shape{}, {-3});
  EXPECT_EQ(values<int32_t>(run1("Pad", 11, {&x, &p, &v})), (std::vector<int32_t>{-3, 7, 8, -3}));
  HostTensor too_negative = i64_vec({-2, -1});
  run_error("Pad", 11, {&x, &too_negative});
  HostTensor wrong_len = i64_vec({1});
  run_error("Pad", 11, {&x, &wrong_len});
  HostTensor empty = f32(Shape{0}, {});
  run_error("Pad", 11, {&empty, &p}, attrs({{"mode", attr_string("edge")}}));
  EXPECT_EQ(run1("Pad", 11, {&empty, &p}).shape(), (Shape{2}));
}

}  // namespace
}  // namespace sod2::rt::testing
