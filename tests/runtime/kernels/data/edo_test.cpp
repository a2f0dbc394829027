// Ops whose output size depends on values: NonZero, NonMaxSuppression (ONNX backend-test cases)
// and Compress.
#include "tests/runtime/kernels/data/test_util.h"

namespace sod2::rt::testing {
namespace {

TEST(NonZero, RowMajorCoordinatesAndNoHits) {
  HostTensor x = f32(Shape{2, 3}, {0, 1.5f, 0, -2, 0, -0.0f});
  HostTensor y = run1("NonZero", 13, {&x});
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 1, 1, 0}));
  HostTensor zeros = i32(Shape{2, 2, 2}, std::vector<int32_t>(8, 0));
  EXPECT_EQ(run1("NonZero", 13, {&zeros}).shape(), (Shape{3, 0}));
  HostTensor empty = f32(Shape{0, 4}, {});
  EXPECT_EQ(run1("NonZero", 13, {&empty}).shape(), (Shape{2, 0}));
  HostTensor b = make_tensor<uint8_t>(DType::kBool, Shape{4}, {1, 0, 0, 1});
  EXPECT_EQ(values<int64_t>(run1("NonZero", 9, {&b})), (std::vector<int64_t>{0, 3}));
}

TEST(NonZero, MatchesReferenceOnLargerInput) {
  HostTensor x(DType::kInt64, Shape{5, 7, 3});
  for (int64_t i = 0; i < x.shape().numel(); ++i) x.data<int64_t>()[i] = (i * 37 % 11) < 4 ? i : 0;
  HostTensor y = run1("NonZero", 13, {&x});
  std::vector<std::vector<int64_t>> hits;
  for_each_index(x.shape(), [&](const std::vector<int64_t>& idx) {
    if (x.data<int64_t>()[flat_index(x.shape(), idx)] != 0) hits.push_back(idx);
  });
  const auto count = static_cast<int64_t>(hits.size());
  ASSERT_EQ(y.shape(), (Shape{3, count}));
  for (int64_t k = 0; k < count; ++k)
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(y.data<int64_t>()[d * count + k],
                hits[static_cast<size_t>(k)][static_cast<size_t>(d)]);
}

struct NmsCase {
  std::vector<float> boxes;   // [batches, n, 4]
  std::vector<float> scores;  // [batches, classes, n]
  int64_t batches, classes, n;
};

HostTensor run_nms(const NmsCase& c, int64_t max_out, float iou, const float* score_threshold,
                   int center_point_box = 0) {
  HostTensor boxes = f32(Shape{c.batches, c.n, 4}, c.boxes);
  HostTensor scores = f32(Shape{c.batches, c.classes, c.n}, c.scores);
  HostTensor m = i64(Shape{1}, {max_out});
  HostTensor t = f32(Shape{1}, {iou});
  HostTensor s = f32(Shape{1}, {score_threshold ? *score_threshold : 0.0f});
  return run1("NonMaxSuppression", 11, {&boxes, &scores, &m, &t, score_threshold ? &s : nullptr},
              attrs({{"center_point_box", attr_int(center_point_box)}}));
}

const std::vector<float> kCornerBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                         0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NonMaxSuppression, SuppressByIouBothBoxFormats) {
  const float zero = 0;
  NmsCase corners{kCornerBoxes, kScores, 1, 1, 6};
  EXPECT_EQ(values<int64_t>(run_nms(corners, 3, 0.5f, &zero)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  NmsCase centers{{0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                   0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1},
                  kScores,
                  1,
                  1,
                  6};
  EXPECT_EQ(values<int64_t>(run_nms(centers, 3, 0.5f, &zero, 1)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  NmsCase flipped{{1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
                   0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100},
                  kScores,
                  1,
                  1,
                  6};
  EXPECT_EQ(values<int64_t>(run_nms(flipped, 3, 0.5f, &zero)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NonMaxSuppression, ScoreThresholdLimitsAndMissingInputs) {
  NmsCase c{kCornerBoxes, kScores, 1, 1, 6};
  const float threshold = 0.4f;
  EXPECT_EQ(values<int64_t>(run_nms(c, 3, 0.5f, &threshold)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(values<int64_t>(run_nms(c, 2, 0.5f, nullptr)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // max_output_boxes_per_class omitted (or 0): no output.
  HostTensor boxes = f32(Shape{1, 6, 4}, kCornerBoxes);
  HostTensor scores = f32(Shape{1, 1, 6}, kScores);
  EXPECT_EQ(run1("NonMaxSuppression", 10, {&boxes, &scores}).shape(), (Shape{0, 3}));
  EXPECT_EQ(run_nms(c, 0, 0.5f, nullptr).shape(), (Shape{0, 3}));
  // A high iou threshold keeps everything, by descending score.
  EXPECT_EQ(values<int64_t>(run_nms(c, 10, 1.0f, nullptr)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
  HostTensor wrong = f32(Shape{1, 6, 3}, std::vector<float>(18, 0));
  run_error("NonMaxSuppression", 11, {&wrong, &scores});
}

TEST(NonMaxSuppression, IdenticalBoxesTwoClassesTwoBatches) {
  std::vector<float> same;
  for (int i = 0; i < 10; ++i) same.insert(same.end(), {0, 0, 1, 1});
  NmsCase identical{same, std::vector<float>(10, 0.9f), 1, 1, 10};
  const float zero = 0;
  EXPECT_EQ(values<int64_t>(run_nms(identical, 3, 0.5f, &zero)), (std::vector<int64_t>{0, 0, 0}));

  std::vector<float> two_class_scores = kScores;
  two_class_scores.insert(two_class_scores.end(), kScores.begin(), kScores.end());
  NmsCase classes{kCornerBoxes, two_class_scores, 1, 2, 6};
  EXPECT_EQ(values<int64_t>(run_nms(classes, 2, 0.5f, &zero)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}));

  std::vector<float> two_batch_boxes = kCornerBoxes;
  two_batch_boxes.insert(two_batch_boxes.end(), kCornerBoxes.begin(), kCornerBoxes.end());
  NmsCase batches{two_batch_boxes, two_class_scores, 2, 1, 6};
  EXPECT_EQ(values<int64_t>(run_nms(batches, 2, 0.5f, &zero)),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0}));
}

TEST(Compress, AxisAndFlattened) {
  HostTensor x = iota_f32(Shape{3, 2});
  HostTensor cond = make_tensor<uint8_t>(DType::kBool, Shape{3}, {0, 1, 1});
  HostTensor y = run1("Compress", 11, {&x, &cond}, attrs({{"axis", attr_int(0)}}));
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 3, 4, 5}));
  HostTensor c2 = make_tensor<uint8_t>(DType::kBool, Shape{1}, {1});
  EXPECT_EQ(values<float>(run1("Compress", 11, {&x, &c2}, attrs({{"axis", attr_int(-1)}}))),
            (std::vector<float>{0, 2, 4}));
  HostTensor flat = make_tensor<uint8_t>(DType::kBool, Shape{5}, {0, 1, 0, 0, 1});
  EXPECT_EQ(values<float>(run1("Compress", 9, {&x, &flat})), (std::vector<float>{1, 4}));
  HostTensor none = make_tensor<uint8_t>(DType::kBool, Shape{3}, {0, 0, 0});
  EXPECT_EQ(run1("Compress", 11, {&x, &none}, attrs({{"axis", attr_int(0)}})).shape(),
            (Shape{0, 2}));
  HostTensor too_long = make_tensor<uint8_t>(DType::kBool, Shape{4}, {0, 0, 0, 1});
  run_error("Compress", 11, {&x, &too_long}, attrs({{"axis", attr_int(0)}}));
}

}  // namespace
}  // namespace sod2::rt::testing
