// Unique (sorted / first-occurrence order, with and without axis) and ReverseSequence, against
// the ONNX spec's examples and a small reference.
#include <map>

#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

std::vector<HostTensor> run_unique(const HostTensor& x, Attrs a) {
  auto r = run_kernel(data_registry(), "Unique", 11, {&x}, 4, std::move(a));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r.value()) : std::vector<HostTensor>(4);
}

TEST(Unique, SortedWithoutAxis) {
  HostTensor x = f32(Shape{6}, {2, 1, 1, 3, 4, 3});
  std::vector<HostTensor> out = run_unique(x, {});
  ASSERT_EQ(out[0].shape(), (Shape{4}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(out[3]), (std::vector<int64_t>{2, 1, 2, 1}));
}

TEST(Unique, FirstOccurrenceOrderWithoutAxis) {
  HostTensor x = f32(Shape{2, 3}, {2, 1, 1, 3, 4, 3});
  std::vector<HostTensor> out = run_unique(x, attrs({{"sorted", attr_int(0)}}));
  ASSERT_EQ(out[0].shape(), (Shape{4}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(out[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(Unique, SlicesAlongAxis) {
  HostTensor x = f32(Shape{3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  std::vector<HostTensor> out = run_unique(x, attrs({{"axis", attr_int(0)}}));
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(values<int64_t>(out[3]), (std::vector<int64_t>{2, 1}));

  // Columns of a [2, 4] int64 matrix, negative axis: columns (1,5) (0,3) (1,5) (0,2).
  HostTensor m = i64(Shape{2, 4}, {1, 0, 1, 0, 5, 3, 5, 2});
  out = run_unique(m, attrs({{"axis", attr_int(-1)}}));
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{0, 0, 1, 2, 3, 5}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{2, 1, 2, 0}));
  EXPECT_EQ(values<int64_t>(out[3]), (std::vector<int64_t>{1, 1, 2}));
}

TEST(Unique, MatchesReferenceOnRandomInts) {
  std::vector<int32_t> v(200);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>((i * 7919) % 37) - 18;
  HostTensor x = i32(Shape{200}, v);
  std::vector<HostTensor> out = run_unique(x, {});
  std::map<int32_t, int64_t> counts;
  for (int32_t e : v) ++counts[e];
  ASSERT_EQ(out[0].shape(), (Shape{static_cast<int64_t>(counts.size())}));
  size_t k = 0;
  for (const auto& [value, count] : counts) {
    EXPECT_EQ(out[0].data<int32_t>()[k], value);
    EXPECT_EQ(out[3].data<int64_t>()[k], count);
    ++k;
  }
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(out[0].data<int32_t>()[out[2].data<int64_t>()[i]], v[i]);
}

TEST(Unique, EmptyInputAndBadAxis) {
  HostTensor empty = f32(Shape{0}, {});
  std::vector<HostTensor> out = run_unique(empty, {});
  EXPECT_EQ(out[0].shape(), (Shape{0}));
  EXPECT_EQ(out[2].shape(), (Shape{0}));
  HostTensor x = f32(Shape{2, 2}, {1, 2, 3, 4});
  KernelError e = run_error("Unique", 11, {&x}, attrs({{"axis", attr_int(2)}}), 4);
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  HostTensor s = make_tensor<uint8_t>(DType::kString, Shape{1}, {});
  EXPECT_EQ(run_error("Unique", 11, {&s}, {}, 4).code(), StatusCode::kUnsupported);
}

// An empty tensor may have any other dims: the scratch sized by the axis's dim (five int64 per
// slice) overflowed to nothing, and the permutation was written far past it.
TEST(Unique, HugeAxisOfAnEmptyTensorIsRefused) {
  HostTensor x = f32(Shape{0, int64_t{1} << 61}, {});
  KernelError e = run_error("Unique", 11, {&x}, attrs({{"axis", attr_int(1)}}), 4);
  EXPECT_EQ(e.code(), StatusCode::kResourceExhausted);
}

TEST(ReverseSequence, TimeMajorAndBatchMajor) {
  HostTensor x = iota_f32(Shape{4, 4});
  HostTensor lens = i64_vec({4, 3, 2, 1});
  HostTensor y = run1("ReverseSequence", 10, {&x, &lens},
                      attrs({{"time_axis", attr_int(0)}, {"batch_axis", attr_int(1)}}));
  EXPECT_EQ(values<float>(y),
            (std::vector<float>{12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}));
  HostTensor lens2 = i64_vec({1, 2, 3, 4});
  y = run1("ReverseSequence", 10, {&x, &lens2},
           attrs({{"time_axis", attr_int(1)}, {"batch_axis", attr_int(0)}}));
  EXPECT_EQ(values<float>(y),
            (std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
}

TEST(ReverseSequence, TrailingDimsMoveAsBlocks) {
  HostTensor x = iota_f32(Shape{3, 2, 2});  // [time, batch, 2]
  HostTensor lens = i32(Shape{2}, {3, 2});
  HostTensor y = run1("ReverseSequence", 10, {&x, &lens});
  EXPECT_EQ(values<float>(y), (std::vector<float>{8, 9, 6, 7, 4, 5, 2, 3, 0, 1, 10, 11}));
}

TEST(ReverseSequence, RejectsBadLengthsAndAxes) {
  HostTensor x = iota_f32(Shape{4, 2});
  HostTensor too_long = i64_vec({5, 1});
  EXPECT_EQ(run_error("ReverseSequence", 10, {&x, &too_long}).code(), StatusCode::kInvalidArgument);
  HostTensor wrong_count = i64_vec({1, 1, 1});
  EXPECT_EQ(run_error("ReverseSequence", 10, {&x, &wrong_count}).code(),
            StatusCode::kInvalidArgument);
  HostTensor ok = i64_vec({1, 1});
  EXPECT_EQ(run_error("ReverseSequence", 10, {&x, &ok},
                      attrs({{"time_axis", attr_int(1)}, {"batch_axis", attr_int(1)}}))
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sod2::rt::testing
